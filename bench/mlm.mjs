// The experiments behind bench/results/mlm.md, printed as markdown tables:
//   fill    a masked language model (objective mlm) against a causal model of the same size, both
//           trained natively on the default text (attn train --save), filling single blanked
//           characters of the validation split: accuracy at the first letter of a word (only the
//           right side helps) and in the middle of one. The mlm model sees 16 characters left and
//           15 right of the blank; the causal model the 31 characters left of it.
//   field   the receptive field measured by the core (Trainer.receptiveField): with L layers of a
//           sliding window of W keys, how far back (and, under mlm, forward) the last (middle)
//           position's output depends on the input, against L (W - 1).
//   depth   the copy task (its answer 5 positions back) with a sliding window of W keys at
//           1 to 4 layers (attn train): the first report step with batch accuracy >= 0.99 and
//           the final eval accuracy, 3 seeds.
// Usage: node bench/mlm.mjs [--experiments fill,field,depth] [--steps 3000] [--variant simd]
// Needs build/native/attn and web/wasm (scripts/build-wasm).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { createCore } from '../tests/js-api/load-core.mjs';
import { parseFlags } from './common.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const ATTN = process.env.ATTN_CLI ?? path.join(root, 'build/native/attn');
const args = parseFlags(process.argv.slice(2), { experiments: 'fill,field,depth', steps: 3000, variant: 'simd' });
const core = await createCore(args.variant);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'attn-mlm-'));
const attn = (argv) => execFileSync(ATTN, argv, { encoding: 'utf8', maxBuffer: 1 << 26 });

// The text model of both sides of the fill comparison, as `attn train` flags and as a JS config.
const TEXT_MODEL = {
  task: 'text', nLayers: 2, residual: true, dModel: 64, nHeads: 4, seqLen: 32, positions: 'rope',
  norm: 'layernorm', ffn: 'gelu', lr: 0.003,
};
const FLAGS = { nLayers: '--layers', nHeads: '--heads', dModel: '--d-model', seqLen: '--seq-len', residual: '--residual' };
const flagsOf = (config) => Object.entries(config).flatMap(([k, v]) => {
  const flag = FLAGS[k] ?? `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  return typeof v === 'boolean' ? (v ? [flag] : []) : [flag, String(v)];
});

const isLetter = (c) => /^[A-Za-z]$/.test(c);
const pct = (right, n) => `${(100 * right / n).toFixed(1)}% (${right}/${n})`;

function fillExperiment() {
  const models = {};
  for (const objective of ['causal', 'mlm']) {
    const file = path.join(tmp, `${objective}.safetensors`);
    const config = { ...TEXT_MODEL, objective };
    const log = attn(['train', ...flagsOf(config), '--steps', String(args.steps), '--log-every', String(args.steps), '--save', file]);
    const t = new core.Trainer(config);
    t.importWeights(new Uint8Array(readFileSync(file)));
    models[objective] = { t, log: log.split('\n').find((l) => l.startsWith(`step ${args.steps} `)) };
  }
  const text = core.defaultCorpus();
  const info = models.mlm.t.corpus();
  const val = [...text].slice(-info.valChars);  // the validation split: the last 10%
  const vocab = [...info.vocab];
  const ids = Int32Array.from(val.map((c) => vocab.indexOf(c)));
  const T = TEXT_MODEL.seqLen, left = T / 2;
  const counts = { first: { n: 0, causal: 0, mlm: 0 }, middle: { n: 0, causal: 0, mlm: 0 } };
  for (let p = T - 1; p + (T - left) <= val.length; ++p) {
    const c = val[p];
    if (!isLetter(c)) continue;
    const kind = !isLetter(val[p - 1]) ? 'first' : isLetter(val[p + 1]) ? 'middle' : null;
    if (!kind) continue;
    // Causal: the next-character prediction after the 31 characters left of the blank.
    const { logits } = models.causal.t.attention(ids.subarray(p - (T - 1), p));
    const last = logits.subarray((T - 2) * vocab.length, (T - 1) * vocab.length);
    let best = 0;
    for (let v = 1; v < vocab.length; ++v) if (last[v] > last[best]) best = v;
    // mlm: the window with the blank at index 16.
    const window = val.slice(p - left, p - left + T);
    window[left] = '_';
    const filled = models.mlm.t.fill(window.join(''));
    counts[kind].n += 1;
    counts[kind].causal += vocab[best] === c;
    counts[kind].mlm += filled.blanks[0].top[0].char === c;
  }
  console.log(`### Filling one blanked character of the validation split (${args.steps} steps each)\n`);
  console.log(`Model: ${flagsOf(TEXT_MODEL).join(' ')}; mask rate 0.15.`);
  for (const [name, m] of Object.entries(models)) console.log(`- ${name}: \`${m.log}\``);
  console.log('\n| blank | causal model (31 characters left) | mlm model (16 left, 15 right) |\n|---|---|---|');
  for (const kind of ['first', 'middle'])
    console.log(`| ${kind === 'first' ? 'first letter of a word' : 'inside a word'} | ${pct(counts[kind].causal, counts[kind].n)} | ${pct(counts[kind].mlm, counts[kind].n)} |`);
  console.log();
  for (const m of Object.values(models)) m.t.delete();
}

function fieldExperiment() {
  const T = 24;
  const ids = Int32Array.from({ length: T }, (_, i) => (i * 7 + 3) % 64);
  console.log(`### The receptive field, measured (T = ${T}, untrained models, Trainer.receptiveField)\n`);
  console.log('Farthest input position with a nonzero attribution, as a distance from the output position; in brackets L (W - 1).\n');
  console.log('| layers L | window W | causal: last position, back | mlm: middle position, back / forward | strided (W, stride 4): last position, back |\n|---|---|---|---|---|');
  for (let L = 1; L <= 4; ++L)
    for (const W of [2, 3, 4]) {
      const reach = (config, i) => {
        const t = new core.Trainer({ seqLen: T, residual: true, nLayers: L, positions: 'rope', norm: 'layernorm', ffn: 'gelu', ffnMult: 2, window: W, ...config });
        try {
          const { data } = t.receptiveField(ids);
          let back = 0, forward = 0;
          for (let j = 0; j < T; ++j)
            if (data[i * T + j] !== 0) {
              if (j <= i) back = Math.max(back, i - j);
              else forward = Math.max(forward, j - i);
            }
          return { back, forward };
        } finally {
          t.delete();
        }
      };
      const causal = reach({ attention: 'window' }, T - 1);
      const mlm = reach({ attention: 'window', objective: 'mlm' }, T / 2);
      const strided = reach({ attention: 'strided', stride: 4 }, T - 1);
      console.log(`| ${L} | ${W} | ${causal.back} (${L * (W - 1)}) | ${mlm.back} / ${mlm.forward} (${L * (W - 1)}) | ${strided.back} |`);
    }
  console.log();
}

function depthExperiment() {
  console.log('### A window that grows with depth: the copy task (answer 5 positions back)\n');
  const base = ['--task', 'copy', '--vocab-size', '16', '--residual', '--positions', 'rope', '--attention', 'window', '--steps', '2000', '--log-every', '50'];
  console.log(`\`attn train ${base.join(' ')} --window W --layers L --seed S\` (V 16, D 32, H 4, T 12, B 16, lr 0.005): the first report with batch accuracy >= 0.99, and the eval accuracy at 2000 steps (chance 1/16).\n`);
  console.log('| window W | layers L | reach L (W - 1) | first step >= 0.99, seeds 1 2 3 | eval accuracy, seeds 1 2 3 |\n|---|---|---|---|---|');
  for (const W of [3, 4])
    for (let L = 1; L <= 4; ++L) {
      const first = [], evals = [];
      for (const seed of [1, 2, 3]) {
        const out = attn(['train', ...base, '--window', String(W), '--layers', String(L), '--seed', String(seed)]);
        const hit = out.split('\n').find((l) => l.startsWith('step ') && Number(l.split(' ')[5]) >= 0.99);
        first.push(hit ? hit.split(' ')[1] : '-');
        evals.push(out.match(/^# eval accuracy (\S+)/m)[1]);
      }
      console.log(`| ${W} | ${L} | ${L * (W - 1)} | ${first.join(', ')} | ${evals.join(', ')} |`);
    }
  console.log();
}

try {
  const run = { fill: fillExperiment, field: fieldExperiment, depth: depthExperiment };
  for (const name of args.experiments.split(',')) {
    if (!run[name]) throw new Error(`unknown experiment ${name} (expected fill, field or depth)`);
    run[name]();
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
