// Before/after: two builds of the native CLI (`attn bench`) or of the wasm node module
// (wasm_bench.mjs), run in turns, A B A B ..., on one config, so that both see the same machine.
// Prints the median steps/s of each and the ratio B / A as JSON.
//   node bench/ab.mjs --a OLD --b NEW [--config demo] [--rounds 6] [--blocks 3] [--block-seconds 1]
// OLD and NEW are paths to an `attn` executable, or to a build/wasm-simd folder (its node module).
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, parseFlags } from './common.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = parseFlags(process.argv.slice(2), { a: '', b: '', config: 'demo', rounds: 6, blocks: 3, blockSeconds: 1 });
if (!args.a || !args.b) throw new Error('--a and --b are required: two attn executables or two build/wasm-simd folders');

/** One run of one build: the config's steps/s (the median of its blocks). */
function once(build) {
  const timing = ['--config', args.config, '--blocks', String(args.blocks), '--block-seconds', String(args.blockSeconds)];
  const wasm = statSync(build).isDirectory();
  const out = wasm
    ? execFileSync('node', [path.join(root, 'bench/wasm_bench.mjs'), '--dir', path.resolve(build), ...timing], { encoding: 'utf8' })
    : execFileSync(path.resolve(build), ['bench', ...timing], { encoding: 'utf8' });
  return JSON.parse(out.slice(out.indexOf('{'))).configs[args.config].steps_per_s;
}

const runs = { a: [], b: [] };
for (let i = 0; i < args.rounds; i++) {
  // Alternate which goes first, so neither always runs on a machine the other just warmed.
  for (const k of i % 2 ? ['b', 'a'] : ['a', 'b']) runs[k].push(once(args[k]));
  process.stderr.write(`ab: round ${i + 1}/${args.rounds}: a ${runs.a.at(-1).toFixed(1)}, b ${runs.b.at(-1).toFixed(1)} steps/s\n`);
}
const a = median(runs.a), b = median(runs.b);
// Each round's B / A, measured back to back, moves less with the machine's load than either alone.
const paired = median(runs.a.map((x, i) => runs.b[i] / x));
console.log(JSON.stringify({ config: args.config, a: { build: args.a, steps_per_s: a, runs: runs.a }, b: { build: args.b, steps_per_s: b, runs: runs.b }, ratio_b_over_a: b / a, median_round_ratio: paired }));
