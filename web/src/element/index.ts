// Entry of dist/attention-playground.js: one ES module that defines <attention-playground>.
// The worker and the wasm folder are found next to this module (relative URLs), so the folder can
// be copied to any sub-path of a static site: <script type="module" src=".../attention-playground.js">.
import { defineAttentionPlayground } from './element';

/** The wasm folder, next to this module; a variable so that Vite leaves the URL to the browser. */
const WASM_DIR = 'wasm/';

/** A module worker from this module's folder (dist/assets/), so it must share the page's origin. */
function makeWorker(): Worker {
  return new Worker(new URL('../worker.ts', import.meta.url), { type: 'module', name: 'attention-trainer' });
}

defineAttentionPlayground({ makeWorker, wasmBase: () => new URL(WASM_DIR, import.meta.url).href });

export { AttentionPlaygroundElement } from './element';
export type { ErrorDetail, ReadyDetail, StepDetail } from './element';
export { HIDE_GROUPS } from './attributes';
