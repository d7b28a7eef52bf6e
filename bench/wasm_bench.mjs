// The wasm core under node, timed like `attn bench`: training steps/s (median of timed blocks
// after a warm-up) for each config, and the best GEMM GFLOP/s of the same build. Prints JSON.
//   node bench/wasm_bench.mjs --variant simd|scalar [--config demo|large|induction|block|all] [--blocks 5]
//        [--block-seconds 1] [--dir DIR (holding attention-core-<variant>.{js,wasm}; default web/wasm)]
import { createCore } from '../tests/js-api/load-core.mjs';
import { median, parseFlags } from './common.mjs';

const CONFIGS = {
  demo: { vocabSize: 64, dModel: 32, nHeads: 4, seqLen: 12, batchSize: 16, lr: 5e-3, seed: 42 },
  large: { vocabSize: 256, dModel: 256, nHeads: 8, seqLen: 256, batchSize: 8, lr: 5e-3, seed: 42 },
  // The induction preset (cpp/attn/README.md, "The preset"), as `attn bench --config induction`.
  induction: { vocabSize: 32, dModel: 32, nHeads: 2, seqLen: 32, batchSize: 32, lr: 5e-3, seed: 0, task: 'induction', nLayers: 2, residual: true },
  // The block preset, as `attn bench --config block`: the demo's sizes, 2 pre-norm blocks.
  block: { vocabSize: 64, dModel: 32, nHeads: 4, seqLen: 12, batchSize: 16, lr: 5e-3, seed: 42, nLayers: 2, residual: true, norm: 'rmsnorm', ffn: 'swiglu', positions: 'rope' },
};

function parseArgs(argv) {
  const out = parseFlags(argv, { variant: 'simd', config: 'all', blocks: 5, blockSeconds: 1, dir: '' });
  if (!['simd', 'scalar'].includes(out.variant)) throw new Error(`--variant must be simd or scalar`);
  return out;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const core = await createCore(args.variant, args.dir || undefined);
  const names = args.config === 'all' ? Object.keys(CONFIGS) : [args.config];
  const configs = {};
  for (const name of names) {
    const cfg = CONFIGS[name];
    if (!cfg) throw new Error(`--config must be demo, large, induction, block or all, got ${name}`);
    const t = new core.Trainer(cfg);
    let perBlock = 0;
    const t0 = performance.now();
    while ((performance.now() - t0) / 1000 < args.blockSeconds) {
      t.step(1);
      perBlock++;
    }
    const rates = [];
    for (let b = 0; b < args.blocks; b++) {
      const s = performance.now();
      t.step(perBlock);
      rates.push(perBlock / ((performance.now() - s) / 1000));
    }
    t.delete();
    const sps = median(rates);
    configs[name] = { steps_per_s: sps, gflops: (sps * core.modelReport(cfg).flops) / 1e9, blocks: rates };
  }
  const byN = {};
  for (const n of [128, 256, 512]) {
    let reps = 1;
    for (let s = performance.now(); (performance.now() - s) / 1000 < args.blockSeconds / 4; reps *= 2)
      core.gemmProbe(n, reps);
    const g = [];
    for (let b = 0; b < args.blocks; b++) {
      const s = performance.now();
      core.gemmProbe(n, reps);
      g.push((2 * n ** 3 * reps) / ((performance.now() - s) / 1000) / 1e9);
    }
    byN[n] = median(g);
  }
  console.log(JSON.stringify({
    engine: `wasm-${args.variant}`,
    configs,
    gemm_peak_gflops: Math.max(...Object.values(byN)),
    gemm_gflops_by_n: byN,
  }));
}

main().catch((e) => {
  console.error(`wasm_bench: ${e.message}`);
  process.exit(2);
});
