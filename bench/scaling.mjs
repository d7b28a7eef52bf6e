// The scaling sweep behind bench/README.md's "Scaling laws": `attn scaling --json` natively, then
// the same sweep in node through the JS API (one Trainer per width with the sweep's settings,
// Trainer.step and evaluate, fitScaling, markovEntropyRate), timed. The two runs' losses agree to
// a few thousandths of a bit, not bit for bit: the SIMD build's GELU takes erf from a rational
// approximation (erf4, kernels.cpp), the native one from the C library, and the runs drift apart
// from those last bits on.
// Usage: node bench/scaling.mjs [--seeds 42,1,2,3] [--steps 1200] [--variant simd]
// Needs build/native/attn and web/wasm (scripts/build-wasm).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { createCore } from '../tests/js-api/load-core.mjs';
import { parseFlags } from './common.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const ATTN = process.env.ATTN_CLI ?? path.join(root, 'build/native/attn');
const args = parseFlags(process.argv.slice(2), { seeds: '42,1,2,3', steps: 1200, variant: 'simd' });
const core = await createCore(args.variant);
const SIZES = [8, 16, 24, 32, 48];
const EVAL_BATCHES = 32;  // ScalingSweepConfig::eval_batches

/** The sweep's heads for width d: d / 8 rounded down to a divisor (train/scaling.h). */
function heads(d) {
  let h = Math.max(1, Math.floor(d / 8));
  while (d % h !== 0) --h;
  return h;
}

console.log('| seed | build | entropy rate (bits) | largest model (bits) | fitted E (bits) | E / rate | alpha | residual | sweep s |');
console.log('|---|---|---|---|---|---|---|---|---|');
const f = (x, n = 4) => x.toFixed(n);
const row = (seed, build, rate, largest, fit, seconds) =>
  console.log(`| ${seed} | ${build} | ${f(rate)} | ${f(largest)} | ${f(fit.E)} | ${f(fit.E / rate, 3)} | ${f(fit.alpha, 2)} | ${fit.residual.toExponential(1)} | ${f(seconds, 1)} |`);
for (const seed of String(args.seeds).split(',').map(Number)) {
  let t0 = performance.now();
  const native = JSON.parse(execFileSync(ATTN, ['scaling', '--seed', String(seed), '--steps', String(args.steps), '--json'], { encoding: 'utf8' }));
  const nativeSeconds = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const bits = [];
  for (const d of SIZES) {
    const t = new core.Trainer({
      task: 'markov', markovOrder: 2, markovSymbols: 8, seqLen: 32, batchSize: 16, lr: 0.003, seed,
      nLayers: 2, residual: true, norm: 'layernorm', ffn: 'gelu', positions: 'learned', dModel: d, nHeads: heads(d),
    });
    try {
      t.step(Number(args.steps));
      bits.push(t.evaluate(EVAL_BATCHES).loss / Math.LN2);
    } finally {
      t.delete();
    }
  }
  const N = Float64Array.from(native.runs.map((r) => r.non_embedding_params));
  const fit = core.fitScaling(N, Float64Array.from(bits));
  const nodeSeconds = (performance.now() - t0) / 1000;
  const rate = core.markovEntropyRate(2, 8, seed);
  if (Math.abs(rate - native.entropy_rate) > 1e-8 * rate) throw new Error(`seed ${seed}: entropy rate ${rate} vs native ${native.entropy_rate}`);
  row(seed, 'native', native.entropy_rate, native.runs.at(-1).val_bits, native.fit, nativeSeconds);
  row(seed, `node (${args.variant})`, rate, bits.at(-1), fit, nodeSeconds);
}
