// npm run bench:text: the "Train a GPT on text" preset in a tab, against the same core under node
// and PyTorch on the same config, measured side by side in one run:
//   - training steps/s in a tab while playing (median of 1 s blocks over --seconds, 60 by default):
//     the page served plainly (the one-thread relaxed-SIMD build Chromium loads, and `?core=simd`
//     the plain SIMD build), and served cross-origin isolated: the threads build on 1 thread
//     (`?threads=1`) and on min(4, navigator.hardwareConcurrency);
//   - node: the one-thread relaxed-SIMD build, the tab's own steps replayed (the core is
//     deterministic, so step n in node is the tab's model at step n), the SIMD build on the same
//     steps, and the threads build on 2 threads;
//   - PyTorch 1.13 eager with 1 and with 2 threads (bench/torch_baseline.py --config text:
//     tests/reference/block.py's model);
//   - every matrix product of a training step in the SIMD and the relaxed-SIMD builds under node
//     (without and with fused multiply-adds), timed in place (core.productProfile: the median over
//     20 steps), with its GFLOP/s, and our GEMM's GFLOP/s on square matrices in the same run;
//   - the step op by op in the same build (core.opProfile: softmax, GELU, LayerNorm, the
//     cross-entropy, Adam, copies... timed in place, then all the products and the rest; medians);
//   - the step the one-thread tab had reached 10, 30 and 60 s after Play, and for each of those
//     steps (and step 0) the validation bits per character and a sample (the same run replayed
//     under node, then 120 characters from "The " at temperature 0.8, seed 1, as the Generate
//     panel draws them: Decoder with the KV cache, Sampler).
//   - with --baseline DIR (a folder holding another build's attention-core-simd.{js,wasm}, e.g. a
//     copy of main's web/wasm): the op profile of that build and of this one side by side, the two
//     loaded in this process and profiled in turns (--rounds of 20 steps each), with each op's
//     median of the rounds' ratios; --ops-only 1 runs that comparison alone.
// Reports medians, asserts nothing. Writes bench/results/text-preset.json (or, with --ops-only,
// bench/results/text-ops.json) and prints the tables.
//   node bench/text_preset.mjs [--seconds 60] [--baseline DIR [--rounds 7] [--ops-only 1]]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT, isolationHeaders, launch, serve, waitReady } from '../tests/e2e/harness.mjs';
import { createCore } from '../tests/js-api/load-core.mjs';
import { median, parseFlags } from './common.mjs';

/** The preset (web/src/settings/presets.ts TEXT_PRESET): its link and the same config. */
const HASH = 'view=train&d-model=64&heads=4&seq-len=64&batch=16&lr=0.003&seed=0&task=text&layers=2&residual=1' +
  '&positions=rope&norm=layernorm&norm-position=pre&ffn=gelu';
const CONFIG = { dModel: 64, nHeads: 4, seqLen: 64, batchSize: 16, lr: 0.003, seed: 0, task: 'text', nLayers: 2,
  residual: true, positions: 'rope', norm: 'layernorm', normPosition: 'pre', ffn: 'gelu' };
const MARKS_S = [10, 30, 60];
const SAMPLE = { prompt: 'The ', chars: 120, temperature: 0.8, seed: 1 };


/** A tab playing the preset for `seconds`: the readout's step every second (steps/s per 1 s
 * block), the steps at the marks, the status line, and what the page downloaded until Play (each
 * file raw and gzip -9). headers: the server's (isolation); query: the page's (`?threads=1`). */
async function tab(seconds, headers = {}, query = '') {
  const srv = await serve(undefined, { headers });
  const browser = await launch();
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const files = [];
    page.on('response', async (res) => {
      try {
        const body = await res.body();
        files.push({ path: new URL(res.url()).pathname, raw: body.length, gzip: gzipSync(body, { level: 9 }).length });
      } catch {
        // redirects and aborted requests have no body
      }
    });
    await page.goto(`${srv.url}${query}#${HASH}`);
    await waitReady(page);
    const status = await page.textContent('.loading');
    // Each file once (the pthread workers import the threads build's glue again, from the cache).
    const unique = [...new Map(files.map((f) => [f.path, f])).values()];
    const transfer = { files: unique, gzip_bytes: unique.reduce((a, f) => a + f.gzip, 0), raw_bytes: unique.reduce((a, f) => a + f.raw, 0) };
    await page.click('[data-action=play]');
    // Counted inside the page: no Playwright call runs while it trains.
    const steps = await page.evaluate(async (seconds) => {
      const read = () => Number(document.querySelector('.readout').dataset.step);
      const out = [read()];
      for (let s = 1; s <= seconds; ++s) {
        await new Promise((r) => setTimeout(r, 1000));
        out.push(read());
      }
      return out;
    }, seconds);
    await page.click('[data-action=play]');
    const rates = steps.slice(1).map((v, i) => v - steps[i]);
    return { status, transfer, steps, rates, marks: Object.fromEntries(MARKS_S.filter((s) => s <= seconds).map((s) => [s, steps[s]])) };
  } finally {
    await browser.close();
    await srv.close();
  }
}

/** Node: a Trainer of the preset (fresh, or replaying steps s0 -> s1 of the run) in 5 timed
 * blocks of about 1 s after a warm-up block; the median block's steps/s. */
function nodeRate(core, from = 0) {
  const t = new core.Trainer(CONFIG);
  try {
    while (t.stepsDone() < from) t.step(Math.min(100, from - t.stepsDone()));
    const block = () => {
      const t0 = performance.now();
      let n = 0;
      while (performance.now() - t0 < 1000) {
        t.step(4);
        n += 4;
      }
      return (n * 1000) / (performance.now() - t0);
    };
    block();
    return median(Array.from({ length: 5 }, block));
  } finally {
    t.delete();
  }
}

/** Every product of a training step, timed in place (median of 20 steps), and the square GEMM. */
function products(core) {
  const rows = core.productProfile(CONFIG, 20);
  const flops = rows.reduce((a, r) => a + r.flops, 0);
  const seconds = rows.reduce((a, r) => a + r.seconds, 0);
  const square = [];
  for (let b = 0; b < 5; b++) {
    const t0 = performance.now();
    core.gemmProbe(256, 8);
    square.push((2 * 256 ** 3 * 8) / ((performance.now() - t0) / 1000) / 1e9);
  }
  return { rows, gflops_average: flops / seconds / 1e9, step_product_ms: seconds * 1e3, square_256_gflops: median(square) };
}

/** The step's non-product ops, the products and the rest, timed in place (median of 20 steps). */
function ops(core) {
  const rows = core.opProfile(CONFIG, 20);
  return { rows, step_ms: rows.reduce((a, r) => a + r.seconds, 0) * 1e3 };
}

/** The op profiles of two builds (base, core), in turns, `rounds` times (alternating which goes
 * first): per op each build's median ms and share, and the median of the rounds' ratios. */
function opsSideBySide(base, core, rounds) {
  const runs = { base: [], core: [] };
  for (let i = 0; i < rounds; i++)
    for (const k of i % 2 ? ['core', 'base'] : ['base', 'core']) runs[k].push(ops(k === 'base' ? base : core));
  const names = [...new Set([...runs.base[0].rows, ...runs.core[0].rows].map((r) => r.name))];
  const ms = (run, name) => (run.rows.find((r) => r.name === name)?.seconds ?? 0) * 1e3;
  const rows = names.map((name) => ({
    name,
    base_ms: median(runs.base.map((r) => ms(r, name))),
    ms: median(runs.core.map((r) => ms(r, name))),
    ratio: median(runs.core.map((r, i) => ms(r, name) / ms(runs.base[i], name))),
  }));
  return {
    rounds,
    rows,
    base_step_ms: median(runs.base.map((r) => r.step_ms)),
    step_ms: median(runs.core.map((r) => r.step_ms)),
    step_ratio: median(runs.core.map((r, i) => r.step_ms / runs.base[i].step_ms)),
  };
}

/** Prints opsSideBySide's table. */
function printSideBySide(cmp, baseDir) {
  const pct = (x, total) => `${((x * 100) / total).toFixed(1)}%`;
  console.log(`\nThe step op by op, ${baseDir} (before) and this build (after), SIMD build under node, in turns in one process: medians of ${cmp.rounds} rounds of 20 steps; after / before is the median of the rounds' ratios:\n`);
  console.log('| op | before ms | before share | after ms | after share | after / before |');
  console.log('|---|---|---|---|---|---|');
  for (const o of cmp.rows) console.log(`| ${o.name} | ${o.base_ms.toFixed(2)} | ${pct(o.base_ms, cmp.base_step_ms)} | ${o.ms.toFixed(2)} | ${pct(o.ms, cmp.step_ms)} | ${Number.isFinite(o.ratio) ? o.ratio.toFixed(2) : '-'} |`);
  console.log(`| step (the rows' sum) | ${cmp.base_step_ms.toFixed(2)} | 100% | ${cmp.step_ms.toFixed(2)} | 100% | ${cmp.step_ratio.toFixed(2)} |`);
}

/** The run replayed to each step: validation bits/char and the Generate panel's sample. */
function replay(core, steps) {
  const t = new core.Trainer(CONFIG);
  try {
    const vocab = t.corpus().vocab;
    const unigramBits = t.corpus().unigramBits;
    const rows = [];
    for (const step of steps) {
      t.step(step - t.stepsDone());
      const d = new core.Decoder(t, { useCache: true });
      const sampler = new core.Sampler(SAMPLE.seed);
      try {
        let logits;
        for (const id of core.encodeText(vocab, SAMPLE.prompt)) logits = d.push(id);
        const out = [];
        for (let i = 0; i < SAMPLE.chars; ++i) {
          const id = sampler.draw(core.nextTokenDistribution(logits, { temperature: SAMPLE.temperature }));
          out.push(id);
          logits = d.push(id);
        }
        rows.push({ step, val_bits_per_char: t.evaluateText(4).valBitsPerChar, sample: SAMPLE.prompt + core.decodeText(vocab, Int32Array.from(out)) });
      } finally {
        sampler.delete();
        d.delete();
      }
    }
    return { unigramBits, rows };
  } finally {
    t.delete();
  }
}

/** PyTorch with `threads` threads, with OpenBLAS when installed (as bench/run.mjs runs it). */
function torch(threads) {
  const openblas = '/usr/lib/x86_64-linux-gnu/openblas-pthread';
  const env = existsSync(path.join(openblas, 'libblas.so.3')) ? { ...process.env, LD_LIBRARY_PATH: openblas, OPENBLAS_NUM_THREADS: String(threads) } : process.env;
  const out = execFileSync('/usr/bin/python3', ['bench/torch_baseline.py', '--config', 'text', '--threads', String(threads)], { cwd: ROOT, encoding: 'utf8', env });
  return JSON.parse(out.trim().split('\n').at(-1));
}

const args = parseFlags(process.argv.slice(2), { seconds: 60, baseline: '', rounds: 7, opsOnly: 0 });
if (args.opsOnly && !args.baseline) throw new Error('--ops-only needs --baseline DIR (the build to compare with)');
const core = await createCore('simd');
const base = args.baseline ? await createCore('simd', path.resolve(args.baseline)) : null;
if (args.opsOnly) {
  const cmp = opsSideBySide(base, core, args.rounds);
  mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(path.join(ROOT, 'bench/results/text-ops.json'), JSON.stringify({ date: new Date().toISOString(), load_average: os.loadavg(), baseline: args.baseline, ops: cmp }, null, 2) + '\n');
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  printSideBySide(cmp, args.baseline);
  process.exit(0);
}
const threaded = await createCore('threads', undefined, { threads: 2 });
const relaxed = await createCore('relaxed');
const page = await tab(args.seconds);
const pagePlain = await tab(args.seconds, {}, '?core=simd');
const pageIsolated1 = await tab(args.seconds, isolationHeaders(), '?threads=1');
const pageThreads = await tab(args.seconds, isolationHeaders());
// Node replays the one-thread tab's steps after its first 10 s (where the tab's median blocks are).
const nodeRelaxed = nodeRate(relaxed, page.steps[Math.min(10, args.seconds)]);
const node = nodeRate(core, page.steps[Math.min(10, args.seconds)]);
const nodeThreads = nodeRate(threaded, page.steps[Math.min(10, args.seconds)]);
const torch1 = torch(1);
const torch2 = torch(2);
const prod = products(core);
const prodRelaxed = products(relaxed);
const opRows = ops(core);
const opsCompared = base ? opsSideBySide(base, core, args.rounds) : null;
const replayed = replay(relaxed, [0, ...Object.values(page.marks)]);
const tabRate = median(page.rates);
const tabPlainRate = median(pagePlain.rates);
const tabIsolated1Rate = median(pageIsolated1.rates);
const tabThreadsRate = median(pageThreads.rates);
const result = {
  date: new Date().toISOString(),
  load_average: os.loadavg(),
  hash: HASH,
  tab_steps_per_s: { median: tabRate, blocks: page.rates, status: page.status },
  tab_plain_simd_steps_per_s: { median: tabPlainRate, blocks: pagePlain.rates, status: pagePlain.status },
  tab_isolated_1t_steps_per_s: { median: tabIsolated1Rate, blocks: pageIsolated1.rates, status: pageIsolated1.status },
  tab_threads_steps_per_s: { median: tabThreadsRate, blocks: pageThreads.rates, status: pageThreads.status },
  node_wasm_simd_steps_per_s: node,
  node_wasm_relaxed_steps_per_s: nodeRelaxed,
  node_wasm_threads_2_steps_per_s: nodeThreads,
  torch_1t_steps_per_s: torch1.steps_per_s,
  torch_2t_steps_per_s: torch2.steps_per_s,
  ratios: {
    node_simd_over_torch_1t: node / torch1.steps_per_s,
    node_relaxed_over_torch_1t: nodeRelaxed / torch1.steps_per_s,
    node_relaxed_over_node_simd: nodeRelaxed / node,
    tab_over_node: tabRate / nodeRelaxed,
    tab_plain_over_node_simd: tabPlainRate / node,
    tab_threads_over_tab: tabThreadsRate / tabRate,
    tab_threads_over_isolated_1t: tabThreadsRate / tabIsolated1Rate,
    node_threads_2_over_node: nodeThreads / node,
    tab_threads_over_torch_1t: tabThreadsRate / torch1.steps_per_s,
    tab_over_torch_1t: tabRate / torch1.steps_per_s,
  },
  transfer: { plain: page.transfer, isolated_threads: pageThreads.transfer },
  products: prod,
  products_relaxed: prodRelaxed,
  ops: opRows,
  ops_against_baseline: opsCompared ? { baseline: args.baseline, ...opsCompared } : undefined,
  unigram_bits_per_char: replayed.unigramBits,
  at: Object.fromEntries([0, ...Object.keys(page.marks).map(Number)].map((s, i) => [`${s}s`, replayed.rows[i]])),
};
mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
writeFileSync(path.join(ROOT, 'bench/results/text-preset.json'), JSON.stringify(result, null, 2) + '\n');
const f0 = (x) => x.toFixed(0);
const f2 = (x) => x.toFixed(2);
console.log(`load average ${os.loadavg().map(f2).join(' ')}\n`);
console.log('| "Train a GPT on text" | steps/s |');
console.log('|---|---|');
console.log(`| tab (Chromium, median of 1 s blocks over ${args.seconds} s of Play; ${page.status.trim()}) | ${f0(tabRate)} |`);
console.log(`| tab, ?core=simd (${pagePlain.status.trim()}) | ${f0(tabPlainRate)} |`);
console.log(`| tab, cross-origin isolated, ?threads=1 (${pageIsolated1.status.trim()}) | ${f0(tabIsolated1Rate)} |`);
console.log(`| tab, cross-origin isolated (${pageThreads.status.trim()}) | ${f0(tabThreadsRate)} |`);
console.log(`| node wasm relaxed SIMD, the tab's steps | ${f0(nodeRelaxed)} |`);
console.log(`| node wasm SIMD, the same steps | ${f0(node)} |`);
console.log(`| node wasm threads, 2 threads | ${f0(nodeThreads)} |`);
console.log(`| PyTorch 1.13 eager, 1 thread | ${f0(torch1.steps_per_s)} |`);
console.log(`| PyTorch 1.13 eager, 2 threads | ${f0(torch2.steps_per_s)} |`);
console.log('\n| ratio (same run) | measured | target |');
console.log('|---|---|---|');
const r = result.ratios;
console.log(`| node wasm SIMD / PyTorch 1 thread | ${f2(r.node_simd_over_torch_1t)} | >= 1.0 |`);
console.log(`| node wasm relaxed SIMD / PyTorch 1 thread | ${f2(r.node_relaxed_over_torch_1t)} | >= 1.3 |`);
console.log(`| node wasm relaxed SIMD / node wasm SIMD | ${f2(r.node_relaxed_over_node_simd)} | |`);
console.log(`| tab (relaxed SIMD) / node (relaxed SIMD) | ${f2(r.tab_over_node)} | >= 0.9 |`);
console.log(`| tab ?core=simd / node (SIMD) | ${f2(r.tab_plain_over_node_simd)} | >= 0.9 |`);
console.log(`| isolated tab (threads) / tab | ${f2(r.tab_threads_over_tab)} | >= 1.6 |`);
console.log(`| isolated tab (threads) / isolated tab (?threads=1) | ${f2(r.tab_threads_over_isolated_1t)} | |`);
console.log(`| node wasm threads (2) / node wasm SIMD | ${f2(r.node_threads_2_over_node)} | |`);
console.log(`| isolated tab (threads) / PyTorch 1 thread | ${f2(r.tab_threads_over_torch_1t)} | >= 1.0 |`);
const kb = (b) => (b / 1024).toFixed(0);
console.log('\n| the page until Play (gzip -9) | one-thread (relaxed SIMD) build | threads build (isolated) |');
console.log('|---|---|---|');
const where = (f) => (/attention-core/.test(f.path) ? f.path.split('/').at(-1) : /\/assets\/worker-/.test(f.path) ? 'the worker (JS)' : 'the page (HTML, JS, CSS, favicon)');
const parts = (t) => t.files.reduce((m, f) => m.set(where(f), (m.get(where(f)) ?? 0) + f.gzip), new Map());
const plainParts = parts(page.transfer);
const threadParts = parts(pageThreads.transfer);
for (const name of new Set([...plainParts.keys(), ...threadParts.keys()])) console.log(`| ${name} | ${plainParts.has(name) ? kb(plainParts.get(name)) + ' KB' : '-'} | ${threadParts.has(name) ? kb(threadParts.get(name)) + ' KB' : '-'} |`);
console.log(`| total | ${kb(page.transfer.gzip_bytes)} KB (${page.transfer.files.length} files) | ${kb(pageThreads.transfer.gzip_bytes)} KB (${pageThreads.transfer.files.length} files) |`);
console.log(`\nThe products of a step (node; median of 20 steps; GFLOP/s of the full product, the causal ones skip about half), in the SIMD build (mul + add) and the relaxed-SIMD build (fused):\n`);
console.log('| product | layout | C (m x n), k | calls | MFLOP | ms | GFLOP/s | relaxed ms | relaxed GFLOP/s |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const p of prod.rows) {
  const q = prodRelaxed.rows.find((x) => x.name === p.name && x.layout === p.layout) ?? { seconds: NaN };
  console.log(`| ${p.name} | ${p.layout} | ${p.m} x ${p.n}, ${p.k} | ${p.calls} | ${(p.flops / 1e6).toFixed(1)} | ${(p.seconds * 1e3).toFixed(2)} | ${(p.flops / p.seconds / 1e9).toFixed(1)} | ${(q.seconds * 1e3).toFixed(2)} | ${(p.flops / q.seconds / 1e9).toFixed(1)} |`);
}
console.log(`| all | | | | ${(prod.rows.reduce((a, p) => a + p.flops, 0) / 1e6).toFixed(0)} | ${prod.step_product_ms.toFixed(2)} | ${prod.gflops_average.toFixed(1)} | ${prodRelaxed.step_product_ms.toFixed(2)} | ${prodRelaxed.gflops_average.toFixed(1)} |`);
console.log(`\nour GEMM on 256 x 256 squares, same run: ${prod.square_256_gflops.toFixed(1)} GFLOP/s (SIMD), ${prodRelaxed.square_256_gflops.toFixed(1)} GFLOP/s (relaxed SIMD)`);
console.log(`\nunigram entropy: ${replayed.unigramBits.toFixed(2)} bits/char\n`);
console.log('| after Play | step | validation bits/char | sample (temperature 0.8) |');
console.log('|---|---|---|---|');
for (const [s, row] of Object.entries(result.at)) console.log(`| ${s} | ${row.step} | ${row.val_bits_per_char.toFixed(2)} | ${JSON.stringify(row.sample)} |`);
console.log(`\nThe step op by op (SIMD build, node; median of 20 steps each; "rest": RoPE, residual adds, the attention's copies and bookkeeping):\n`);
console.log('| op | ms | share of the step |');
console.log('|---|---|---|');
for (const o of opRows.rows) console.log(`| ${o.name} | ${(o.seconds * 1e3).toFixed(2)} | ${((o.seconds * 1e3 * 100) / opRows.step_ms).toFixed(1)}% |`);
console.log(`| step (the rows' sum) | ${opRows.step_ms.toFixed(2)} | 100% |`);
if (opsCompared) printSideBySide(opsCompared, args.baseline);
process.exit(0);
