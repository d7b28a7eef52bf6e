// The induction task and the circuit measurements through the JS API: taskTargets,
// trainer.headScores() and trainer.phaseChange(), against plain references computed here and
// against the native build (the same batches: the same loss history).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, runCli, variants } from './core.mjs';
import { readSafetensors } from './safetensors.mjs';

const PRESET = { vocabSize: 32, dModel: 32, nHeads: 2, seqLen: 32, batchSize: 32, lr: 5e-3, seed: 0, task: 'induction', nLayers: 2, residual: true };

for (const variant of variants) {
  describe(`induction (${variant})`, async () => {
    const core = await loadCore(variant);

    test('taskTargets: the second occurrence of the segment predicts the segment', () => {
      // 1 2 3 4 at 0 and 6 (T 12): positions 6, 7, 8 predict 2, 3, 4; nothing else counts.
      const ids = Int32Array.from([1, 2, 3, 4, 9, 8, 1, 2, 3, 4, 7, 6]);
      const want = new Array(12).fill(-100);
      want[6] = 2; want[7] = 3; want[8] = 4;
      assert.deepEqual([...core.taskTargets('induction', ids)], want);
      assert.deepEqual([...core.taskTargets('induction', Int32Array.from([1, 2, 3, 4, 5, 6]))], new Array(6).fill(-100));
    });

    test('the same seed gives the same batches as the native build (equal loss histories)', () => {
      const t = new core.Trainer(PRESET);
      try {
        t.step(20);
        const stdout = runCli(['train', '--vocab-size', '32', '--d-model', '32', '--heads', '2', '--seq-len', '32',
          '--batch', '32', '--lr', '0.005', '--seed', '0', '--task', 'induction', '--layers', '2', '--residual',
          '--steps', '20', '--log-every', '1']);
        const native = [...stdout.matchAll(/^step \d+ loss (\S+) accuracy/gm)].map((m) => Number(m[1]));
        const wasm = [...t.lossHistory()];
        assert.equal(native.length, 20);
        for (let i = 0; i < 20; ++i) assert.ok(Math.abs(wasm[i] - native[i]) <= 1e-4 * Math.abs(native[i]), `step ${i + 1}: ${wasm[i]} vs ${native[i]}`);
      } finally {
        t.delete();
      }
    });

    test('headScores: shapes, ranges, the composition of the weights, and the CLI\'s numbers', () => {
      const t = new core.Trainer(PRESET);
      try {
        t.step(10);
        const s = t.headScores();
        assert.equal(s.nLayers, 2);
        assert.equal(s.nHeads, 2);
        assert.ok(s.previousToken instanceof Float32Array && s.previousToken.length === 4);
        assert.equal(s.prefixMatching.length, 4);
        assert.equal(s.composition.length, 4);
        for (const x of [...s.previousToken, ...s.prefixMatching]) assert.ok(x > 0 && x < 1);
        for (const x of s.composition) assert.ok(x > 0 && x <= 1);
        assert.ok(s.compositionBaseline > 0 && s.compositionBaseline < 1);
        // K-composition from the exported weights, in plain JS: W_QK of layer 2's head h2 and
        // W_OV of layer 1's head h1 (row-vector convention, cpp/attn/interp/circuits.h).
        const w = Object.fromEntries(Object.entries(readSafetensors(t.exportWeights())).map(([k, v]) => [k, v.data]));
        const D = 32, Dh = 16;
        for (let h1 = 0; h1 < 2; ++h1)
          for (let h2 = 0; h2 < 2; ++h2) {
            const qk = matmul(D, Dh, D, (a, e) => w['layers.1.qkv_proj.weight'][(h2 * Dh + e) * D + a],
              (e, c) => w['layers.1.qkv_proj.weight'][(D + h2 * Dh + e) * D + c]);
            const ov = matmul(D, Dh, D, (a, e) => w['layers.0.qkv_proj.weight'][(2 * D + h1 * Dh + e) * D + a],
              (e, c) => w['layers.0.out_proj.weight'][c * D + h1 * Dh + e]);
            const prod = matmul(D, D, D, (a, e) => qk[a * D + e], (e, c) => ov[c * D + e]);
            const want = norm(prod) / (norm(qk) * norm(ov));
            assert.ok(Math.abs(s.composition[h1 * 2 + h2] - want) < 1e-4, `${h1}->${h2}: ${s.composition[h1 * 2 + h2]} vs ${want}`);
          }
        // The native build measures the same numbers after the same training.
        const stdout = runCli(['train', '--vocab-size', '32', '--d-model', '32', '--heads', '2', '--seq-len', '32',
          '--batch', '32', '--lr', '0.005', '--seed', '0', '--task', 'induction', '--layers', '2', '--residual',
          '--steps', '10', '--log-every', '10']);
        const heads = [...stdout.matchAll(/^head L(\d)\.H(\d) previous-token (\S+) prefix-matching (\S+)$/gm)];
        assert.equal(heads.length, 4);
        for (const m of heads) {
          const g = (Number(m[1]) - 1) * 2 + Number(m[2]) - 1;
          assert.ok(Math.abs(s.previousToken[g] - Number(m[3])) < 1e-3);
          assert.ok(Math.abs(s.prefixMatching[g] - Number(m[4])) < 1e-3);
        }
        assert.equal(t.phaseChange(), -1);
      } finally {
        t.delete();
      }
    });

    test('phaseChange: found during real training, at the step the native build finds', () => {
      // The page's preset (embedding init std 0.5), seed 1: the phase change comes at step 442
      // natively (bench/results/induction.md, "The embedding's init scale"): none after 300 steps, found by 700.
      const config = { ...PRESET, seed: 1, embInitStd: 0.5 };
      const t = new core.Trainer(config);
      try {
        t.step(300);
        const before = t.phaseChange();
        t.step(400);
        const phase = t.phaseChange();
        const stdout = runCli(['train', '--vocab-size', '32', '--d-model', '32', '--heads', '2', '--seq-len', '32',
          '--batch', '32', '--lr', '0.005', '--seed', '1', '--task', 'induction', '--layers', '2', '--residual',
          '--emb-init-std', '0.5', '--steps', '700', '--log-every', '700']);
        const native = Number(stdout.match(/^# phase change at step (-?\d+) /m)[1]);
        assert.equal(before, -1);
        assert.ok(phase > 300 && phase <= 700, `phase change at ${phase}`);
        assert.ok(Math.abs(phase - native) <= 5, `wasm ${phase}, native ${native}`);
        const s = t.headScores();
        assert.ok(Math.max(...s.prefixMatching.slice(2)) > 0.5, `prefix-matching ${[...s.prefixMatching]}`);
      } finally {
        t.delete();
      }
    });
  });
}

// (n,k) x (k,m) from element getters.
function matmul(n, k, m, a, b) {
  const out = new Float64Array(n * m);
  for (let i = 0; i < n; ++i)
    for (let j = 0; j < m; ++j) {
      let s = 0;
      for (let e = 0; e < k; ++e) s += a(i, e) * b(e, j);
      out[i * m + j] = s;
    }
  return out;
}

function norm(x) {
  let s = 0;
  for (const v of x) s += v * v;
  return Math.sqrt(s);
}
