// Loads the core (load-core.mjs: the page's wasm module, under Node) and runs the native CLI, for
// the tests in this folder. Build both with scripts/build-wasm.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createCore } from './load-core.mjs';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The variants under test: ATTN_WASM_VARIANTS="simd,scalar" by default. */
export const variants = (process.env.ATTN_WASM_VARIANTS ?? 'simd,scalar').split(',');

const loaded = new Map();

/** The module of one variant, instantiated once per test file. */
export function loadCore(variant) {
  if (!loaded.has(variant)) {
    loaded.set(variant, createCore(variant));
  }
  return loaded.get(variant);
}

/** The native `attn` executable: ATTN_CLI, else build/native/attn (scripts/test-wasm builds it). */
export function cliPath() {
  const path = process.env.ATTN_CLI ?? `${repoRoot}build/native/attn`;
  if (!existsSync(path)) throw new Error(`native CLI ${path} is missing: set ATTN_CLI or run scripts/test-wasm`);
  return path;
}

/** Runs `attn <args>` and returns its stdout. */
export function runCli(args) {
  return execFileSync(cliPath(), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The wasm memory in bytes: grows, never shrinks. */
export function heapSize(core) {
  return core.HEAP8.buffer.byteLength;
}

/** Throws unless fn throws an Error of this kind (and key: '' when the error has none), whose
 * message matches text when given. */
export function throwsKind(fn, kind, key = undefined, text = undefined) {
  assert.throws(fn, (e) => {
    assert.equal(e.kind, kind, e.message);
    assert.equal(e.key, key, e.message);
    if (text) assert.match(e.message, text);
    return true;
  });
}

/** Calls f, which must throw a JS Error; returns its message. */
export function errorMessage(f) {
  try {
    f();
  } catch (e) {
    if (!(e instanceof Error)) throw new Error(`expected an Error, got ${typeof e}: ${String(e)}`);
    return e.message;
  }
  throw new Error('expected an Error, nothing was thrown');
}
