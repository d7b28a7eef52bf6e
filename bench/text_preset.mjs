// npm run bench:text: the "Train a GPT on text" preset in a tab, against the same core
// under node and PyTorch with 1 thread on the same config, measured side by side in one run:
//   - training steps/s in the tab while playing (median of 1 s blocks over the first 60 s), the
//     node wasm SIMD figure of the same config, and PyTorch 1.13 eager, 1 thread
//     (bench/torch_baseline.py --config text: tests/reference/block.py's model);
//   - the step the tab had reached 10, 30 and 60 s after Play, and for each of those steps (and
//     step 0) the validation bits per character and a sample: the same run replayed under node
//     (the core is deterministic, so step n in node is the tab's model at step n), then 120
//     characters from "The " at temperature 0.8 (seed 1), as the Generate panel draws them
//     (Decoder with the KV cache, Sampler).
// Reports medians, asserts nothing. Writes bench/results/text-preset.json and prints the tables.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, launch, serve, waitReady } from '../tests/e2e/harness.mjs';
import { createCore } from '../tests/js-api/load-core.mjs';
import { median } from './common.mjs';

/** The preset (web/src/settings/presets.ts TEXT_PRESET): its link and the same config. */
const HASH = 'view=train&d-model=64&heads=4&seq-len=64&batch=16&lr=0.003&seed=0&task=text&layers=2&residual=1' +
  '&positions=rope&norm=layernorm&norm-position=pre&ffn=gelu';
const CONFIG = { dModel: 64, nHeads: 4, seqLen: 64, batchSize: 16, lr: 0.003, seed: 0, task: 'text', nLayers: 2,
  residual: true, positions: 'rope', norm: 'layernorm', normPosition: 'pre', ffn: 'gelu' };
const MARKS_S = [10, 30, 60];
const SAMPLE = { prompt: 'The ', chars: 120, temperature: 0.8, seed: 1 };


/** The tab: Play, then the readout's step every second for 60 s (steps/s per 1 s block), and the
 * steps at the marks. */
async function tab() {
  const srv = await serve();
  const browser = await launch();
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(`${srv.url}#${HASH}`);
    await waitReady(page);
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
    }, MARKS_S.at(-1));
    await page.click('[data-action=play]');
    const rates = steps.slice(1).map((v, i) => v - steps[i]);
    return { rates, marks: Object.fromEntries(MARKS_S.map((s) => [s, steps[s]])) };
  } finally {
    await browser.close();
    await srv.close();
  }
}

/** Node: the same config's steps/s (median of 5 blocks of 1 s after a warm-up block). */
function nodeRate(core) {
  const t = new core.Trainer(CONFIG);
  try {
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

/** PyTorch, 1 thread, with OpenBLAS when installed (as bench/run.mjs runs it). */
function torch() {
  const openblas = '/usr/lib/x86_64-linux-gnu/openblas-pthread';
  const env = existsSync(path.join(openblas, 'libblas.so.3')) ? { ...process.env, LD_LIBRARY_PATH: openblas, OPENBLAS_NUM_THREADS: '1' } : process.env;
  const out = execFileSync('/usr/bin/python3', ['bench/torch_baseline.py', '--config', 'text', '--threads', '1'], { cwd: ROOT, encoding: 'utf8', env });
  return JSON.parse(out.trim().split('\n').at(-1));
}

const core = await createCore('simd');
const page = await tab();
const node = nodeRate(core);
const pytorch = torch();
const replayed = replay(core, [0, ...MARKS_S.map((s) => page.marks[s])]);
const result = {
  date: new Date().toISOString(),
  hash: HASH,
  tab_steps_per_s: { median: median(page.rates), blocks: page.rates },
  node_wasm_simd_steps_per_s: node,
  torch_1t_steps_per_s: pytorch.steps_per_s,
  tab_over_torch: median(page.rates) / pytorch.steps_per_s,
  unigram_bits_per_char: replayed.unigramBits,
  at: Object.fromEntries([0, ...MARKS_S].map((s, i) => [`${s}s`, replayed.rows[i]])),
};
mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
writeFileSync(path.join(ROOT, 'bench/results/text-preset.json'), JSON.stringify(result, null, 2) + '\n');
console.log('| "Train a GPT on text" | steps/s |');
console.log('|---|---|');
console.log(`| tab (Chromium, median of 1 s blocks over 60 s of Play) | ${result.tab_steps_per_s.median.toFixed(0)} |`);
console.log(`| node wasm SIMD, same config | ${node.toFixed(0)} |`);
console.log(`| PyTorch 1.13 eager, 1 thread | ${pytorch.steps_per_s.toFixed(0)} |`);
console.log(`| tab / PyTorch | ${result.tab_over_torch.toFixed(2)} |`);
console.log(`\nunigram entropy: ${replayed.unigramBits.toFixed(2)} bits/char\n`);
console.log('| after Play | step | validation bits/char | sample (temperature 0.8) |');
console.log('|---|---|---|---|');
for (const [s, r] of Object.entries(result.at)) console.log(`| ${s} | ${r.step} | ${r.val_bits_per_char.toFixed(2)} | ${JSON.stringify(r.sample)} |`);
