// npm run bench: every engine on the same machine in one run, then the ratios the project
// targets. Writes bench/results/latest.json and prints a table. Expects the native and wasm
// builds (bench/run builds them first).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const blocks = quick ? '3' : '5';
const blockSeconds = quick ? '0.3' : '1';
const OPENBLAS_DIR = '/usr/lib/x86_64-linux-gnu/openblas-pthread';

// Runs one benchmark process and returns the JSON object on the last line of its stdout.
function run(label, cmd, args, env = {}) {
  process.stderr.write(`bench: ${label}\n`);
  const out = execFileSync(cmd, args, {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 << 20,
  });
  const lines = out.trim().split('\n').filter((l) => l.trim());
  try {
    return JSON.parse(lines.at(-1));
  } catch {
    return JSON.parse(out.slice(out.indexOf('{')));  // multi-line JSON (attn bench)
  }
}

const timing = ['--blocks', blocks, '--block-seconds', blockSeconds];
const torch = (config, threads, blas) =>
  run(`torch ${config} ${threads}t ${blas}`, '/usr/bin/python3',
    ['bench/torch_baseline.py', '--config', config, '--threads', String(threads), ...timing],
    blas === 'openblas'
      ? { LD_LIBRARY_PATH: OPENBLAS_DIR, OPENBLAS_NUM_THREADS: String(threads) }
      : {});
const hasOpenblas = existsSync(path.join(OPENBLAS_DIR, 'libblas.so.3'));
const blas = hasOpenblas ? 'openblas' : 'reference';

const r = {};
r.native = run('native (attn bench)', path.join(root, 'build/native/attn'), ['bench', ...timing]);
r.wasm_simd = run('wasm simd (node)', 'node', ['bench/wasm_bench.mjs', '--variant', 'simd', ...timing]);
r.wasm_scalar = run('wasm scalar (node)', 'node', ['bench/wasm_bench.mjs', '--variant', 'scalar', ...timing]);
r.torch_demo_1t = torch('demo', 1, blas);
r.torch_demo_2t = torch('demo', 2, blas);
r.torch_large_1t = torch('large', 1, blas);
r.torch_large_2t = torch('large', 2, blas);
r.torch_induction_1t = torch('induction', 1, blas);
r.torch_block_1t = torch('block', 1, blas);
const tfjs = (backend, config, embedding = 'gather') =>
  run(`tfjs ${backend} ${config} (${embedding} embedding)`, 'node',
    ['bench/tfjs_baseline.mjs', '--backend', backend, '--config', config, '--embedding', embedding, ...timing]);
r.tfjs_wasm_demo = tfjs('wasm', 'demo');
r.tfjs_wasm_demo_onehot = tfjs('wasm', 'demo', 'onehot');
r.tfjs_cpu_demo = tfjs('cpu', 'demo');
r.tfjs_wasm_large = tfjs('wasm', 'large');
r.tfjs_wasm_large_onehot = tfjs('wasm', 'large', 'onehot');

const sps = {
  native_demo: r.native.configs.demo.steps_per_s,
  native_large: r.native.configs.large.steps_per_s,
  wasm_simd_demo: r.wasm_simd.configs.demo.steps_per_s,
  wasm_simd_large: r.wasm_simd.configs.large.steps_per_s,
  wasm_scalar_demo: r.wasm_scalar.configs.demo.steps_per_s,
  wasm_scalar_large: r.wasm_scalar.configs.large.steps_per_s,
  torch_demo_1t: r.torch_demo_1t.steps_per_s,
  torch_demo_2t: r.torch_demo_2t.steps_per_s,
  torch_large_1t: r.torch_large_1t.steps_per_s,
  torch_large_2t: r.torch_large_2t.steps_per_s,
  tfjs_wasm_demo: r.tfjs_wasm_demo.steps_per_s,
  tfjs_wasm_demo_onehot: r.tfjs_wasm_demo_onehot.steps_per_s,
  tfjs_cpu_demo: r.tfjs_cpu_demo.steps_per_s,
  tfjs_wasm_large: r.tfjs_wasm_large.steps_per_s,
  tfjs_wasm_large_onehot: r.tfjs_wasm_large_onehot.steps_per_s,
  // The induction preset (2 layers, residual; cpp/attn/README.md, "Induction heads").
  native_induction: r.native.configs.induction.steps_per_s,
  wasm_simd_induction: r.wasm_simd.configs.induction.steps_per_s,
  wasm_scalar_induction: r.wasm_scalar.configs.induction.steps_per_s,
  torch_induction_1t: r.torch_induction_1t.steps_per_s,
  // The block preset: 2 pre-norm blocks, RMSNorm, SwiGLU, RoPE, on the demo sizes.
  native_block: r.native.configs.block.steps_per_s,
  wasm_simd_block: r.wasm_simd.configs.block.steps_per_s,
  wasm_scalar_block: r.wasm_scalar.configs.block.steps_per_s,
  torch_block_1t: r.torch_block_1t.steps_per_s,
};
// The TF.js baseline is the faster of its two formulations, measured in this run.
const tfjsBest = {
  demo: Math.max(sps.tfjs_wasm_demo, sps.tfjs_wasm_demo_onehot),
  large: Math.max(sps.tfjs_wasm_large, sps.tfjs_wasm_large_onehot),
};
const ratio = (name, a, b, target) => ({ name, value: a / b, target, met: a / b >= target });
const ratios = [
  ratio('wasm SIMD / TF.js wasm (faster formulation), demo', sps.wasm_simd_demo, tfjsBest.demo, 10),
  ratio('wasm SIMD / native, demo', sps.wasm_simd_demo, sps.native_demo, 0.6),
  ratio(`wasm SIMD / PyTorch 1t (${blas}), demo`, sps.wasm_simd_demo, sps.torch_demo_1t, 1.5),
  ratio('wasm SIMD / TF.js wasm (faster formulation), large', sps.wasm_simd_large, tfjsBest.large, 5),
  ratio('wasm SIMD / wasm scalar, large', sps.wasm_simd_large, sps.wasm_scalar_large, 2.5),
  ratio(`native / PyTorch 1t (${blas}), demo`, sps.native_demo, sps.torch_demo_1t, 4),
  ratio(`native / PyTorch 1t (${blas}), large`, sps.native_large, sps.torch_large_1t, 0.8),
  ratio(`native / PyTorch 2t (${blas}), large`, sps.native_large, sps.torch_large_2t, 0.8),
  ratio('wasm SIMD / native, induction preset', sps.wasm_simd_induction, sps.native_induction, 0.6),
  ratio(`wasm SIMD / PyTorch 1t (${blas}), induction preset`, sps.wasm_simd_induction, sps.torch_induction_1t, 1.5),
  ratio('native large GFLOP/s / native GEMM peak', r.native.configs.large.gflops, r.native.gemm_peak_gflops, 0.6),
  ratio('wasm SIMD large GFLOP/s / wasm SIMD GEMM peak', r.wasm_simd.configs.large.gflops, r.wasm_simd.gemm_peak_gflops, 0.6),
];

const cpu = os.cpus()[0]?.model ?? 'unknown';
const result = {
  date: new Date().toISOString(),
  machine: { cpu, cores: os.cpus().length, node: process.version, blas, quick },
  steps_per_s: sps,
  gflops: {
    native_large: r.native.configs.large.gflops,
    native_gemm_peak: r.native.gemm_peak_gflops,
    wasm_simd_large: r.wasm_simd.configs.large.gflops,
    wasm_simd_gemm_peak: r.wasm_simd.gemm_peak_gflops,
    wasm_scalar_large: r.wasm_scalar.configs.large.gflops,
    wasm_scalar_gemm_peak: r.wasm_scalar.gemm_peak_gflops,
  },
  ratios,
  raw: r,
};
mkdirSync(path.join(root, 'bench/results'), { recursive: true });
writeFileSync(path.join(root, 'bench/results/latest.json'), JSON.stringify(result, null, 2) + '\n');

const f = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
console.log(`\nTraining steps/s (median of ${blocks} blocks), ${cpu}, 1 thread unless noted\n`);
console.log('| engine | demo (V64 D32 H4 T12 B16) | large (V256 D256 H8 T256 B8) |');
console.log('|---|---|---|');
const row = (name, d, l) => console.log(`| ${name} | ${d === undefined ? '-' : f(d)} | ${l === undefined ? '-' : f(l)} |`);
row('attn native (Eigen)', sps.native_demo, sps.native_large);
row('attn wasm SIMD (node)', sps.wasm_simd_demo, sps.wasm_simd_large);
row('attn wasm scalar (node)', sps.wasm_scalar_demo, sps.wasm_scalar_large);
row(`PyTorch ${r.torch_demo_1t.torch} eager, ${blas}, 1 thread`, sps.torch_demo_1t, sps.torch_large_1t);
row(`PyTorch eager, ${blas}, 2 threads`, sps.torch_demo_2t, sps.torch_large_2t);
row('TF.js 4.22 wasm, gather embedding', sps.tfjs_wasm_demo, sps.tfjs_wasm_large);
row('TF.js 4.22 wasm, one-hot embedding', sps.tfjs_wasm_demo_onehot, sps.tfjs_wasm_large_onehot);
row('TF.js 4.22 cpu', sps.tfjs_cpu_demo, undefined);
console.log('\n| engine | induction preset (V32 D32 H2 T32 B32, 2 layers, residual) |');
console.log('|---|---|');
for (const [name, v] of [['attn native (Eigen)', sps.native_induction], ['attn wasm SIMD (node)', sps.wasm_simd_induction],
  ['attn wasm scalar (node)', sps.wasm_scalar_induction], [`PyTorch eager, ${blas}, 1 thread`, sps.torch_induction_1t]])
  console.log(`| ${name} | ${f(v)} |`);
console.log('\n| engine | block preset (V64 D32 H4 T12 B16, 2 pre-norm blocks, RMSNorm, SwiGLU, RoPE) |');
console.log('|---|---|');
for (const [name, v] of [['attn native (Eigen)', sps.native_block], ['attn wasm SIMD (node)', sps.wasm_simd_block],
  ['attn wasm scalar (node)', sps.wasm_scalar_block], [`PyTorch eager, ${blas}, 1 thread`, sps.torch_block_1t]])
  console.log(`| ${name} | ${f(v)} |`);
console.log('\n| ratio | measured | target | met |');
console.log('|---|---|---|---|');
for (const q of ratios) console.log(`| ${q.name} | ${f(q.value)} | >= ${q.target} | ${q.met ? 'yes' : 'no'} |`);
console.log(`\nGFLOP/s: native large ${f(result.gflops.native_large)} of GEMM peak ${f(result.gflops.native_gemm_peak)}; ` +
  `wasm SIMD large ${f(result.gflops.wasm_simd_large)} of GEMM peak ${f(result.gflops.wasm_simd_gemm_peak)}`);
console.log('wrote bench/results/latest.json');
