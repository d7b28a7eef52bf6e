// The JS API behind the learning panels: ablation, evaluate, attention statistics, the one-row
// backward, the self-test and taskTargets. The math is tested natively (tests/cpp); here: the
// bindings carry it, name bad input, and agree with what the rest of the API shows.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { loadCore, repoRoot, variants } from './core.mjs';

const reference = () => {
  const file = (kind) => new Uint8Array(readFileSync(`${repoRoot}tests/reference/data/short.${kind}.safetensors`));
  return { weights: file('weights'), input: file('input'), expected: file('expected') };
};

for (const variant of variants) {
  describe(`learning API (${variant})`, async () => {
    const core = await loadCore(variant);

    test('selfTest: all six checks pass on a fresh and on a trained model, with their errors', () => {
      const t = new core.Trainer({});
      try {
        for (const steps of [0, 50]) {
          t.step(steps);
          const results = t.selfTest(reference());
          assert.deepEqual(results.map((r) => r.id), ['rows_and_mask', 'future_invariance', 'split_merge', 'fused_qkv', 'gradcheck', 'pytorch_reference']);
          for (const r of results) {
            assert.equal(r.pass, true, `${r.id}: ${r.detail}`);
            assert.ok(r.maxError <= r.tolerance && r.maxError >= 0, r.id);
            assert.ok(r.name.length > 0 && r.detail.length > 0);
          }
        }
        const without = t.selfTest(null);
        assert.equal(without.at(-1).pass, false);
        assert.match(without.at(-1).detail, /reference/);
        const bad = reference();
        bad.expected = bad.expected.slice(0, 40);
        const failed = t.selfTest(bad).at(-1);
        assert.equal(failed.pass, false);
        assert.match(failed.detail, /expected/);
        assert.throws(() => t.selfTest({ weights: [1, 2] }), /reference\.weights must be of type Uint8Array/);
      } finally {
        t.delete();
      }
    });

    test('setAblation: switching a head off changes the loss at once; the defaults restore it', () => {
      const t = new core.Trainer({ task: 'copy' });
      try {
        t.step(300);
        const base = t.evaluate(2);
        assert.ok(base.accuracy > 0.9, `trained: ${base.accuracy}`);
        t.setAblation({ headsOff: [true, true, true, true] });
        const off = t.evaluate(2);
        assert.ok(off.loss > base.loss + 1, `${off.loss} vs ${base.loss}`);
        assert.ok(off.accuracy < base.accuracy);
        assert.deepEqual(t.ablation(), { headsOff: [true, true, true, true], headsFrozen: [false, false, false, false], scaleScores: true, mask: 'causal' });
        t.setAblation({});
        assert.deepEqual(t.evaluate(2), base);
        assert.equal(t.evalAccuracy(2), base.accuracy);
      } finally {
        t.delete();
      }
    });

    test('setAblation: the mask and scaling reach attention(); bad input names the key', () => {
      const t = new core.Trainer({});
      try {
        const ids = Int32Array.from([1, 2, 3, 4]);
        const T = 4;
        t.setAblation({ mask: 'none' });
        const w = t.attention(ids).weights;
        assert.ok(w[1] > 0, 'query 0 sees key 1 without a mask');
        t.setAblation({ mask: 'inverted' });
        const inv = t.attention(ids).weights;
        assert.equal(inv[1 * T + 0], 0, 'query 1 cannot see key 0 under the inverted mask');
        assert.equal(inv[(T - 1) * T + T - 1], 1, 'the last query sees only itself');
        t.setAblation({ scaleScores: false });
        assert.equal(t.ablation().scaleScores, false);
        const before = t.ablation();
        for (const [bad, message] of [
          [{ headsOff: [true] }, /headsOff has 1 entries, expected one per head \(4\)/],
          [{ headsOff: 'all' }, /headsOff must be an array/],
          [{ headsFrozen: [1, 0, 0, 0] }, /headsFrozen\[0\] must be a boolean/],
          // Names that never shipped are unknown keys.
          [{ zeroed: [true, true, true, true] }, /unknown ablation key 'zeroed'/],
          [{ frozen: [false, false, false, false] }, /unknown ablation key 'frozen'/],
          [{ mask: 'triu' }, /unknown mask 'triu'/],
          [{ mask: 3 }, /mask must be a string/],
          [{ scaleScores: 'no' }, /scaleScores must be a boolean/],
          [{ heads: [] }, /unknown ablation key 'heads'/],
          [null, /ablation must be an object/],
        ]) assert.throws(() => t.setAblation(bad), message);
        assert.deepEqual(t.ablation(), before, 'a refused ablation changes nothing');
        t.step(2);  // still usable
      } finally {
        t.delete();
      }
    });

    test('rowBackward: shapes, the softmax Jacobian, and the loss of attention() logits', () => {
      const t = new core.Trainer({});
      try {
        t.step(20);
        const ids = Int32Array.from([3, 14, 15, 9, 26]);
        const r = t.rowBackward(ids, 1, 3, 9);
        assert.equal(r.q.length, 8);
        assert.deepEqual([r.k.rows, r.k.cols, r.dK.rows, r.dV.cols], [5, 8, 5, 8]);
        assert.equal(r.scores[4], -Infinity, 'key 4 is in the future of query 3');
        assert.ok(Math.abs(r.scale - 1 / Math.sqrt(8)) < 1e-7);
        const dot = r.weights.reduce((s, w, j) => s + w * r.dWeights[j], 0);
        r.dScores.forEach((d, j) => assert.ok(Math.abs(d - r.weights[j] * (r.dWeights[j] - dot)) < 1e-6));
        const { logits, vocabSize: V } = t.attention(ids);
        const row = logits.subarray(3 * V, 4 * V);
        const max = Math.max(...row);
        const lse = Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0)) + max;
        assert.ok(Math.abs(r.loss - (lse - row[9])) < 1e-4);
        assert.throws(() => t.rowBackward(ids, 4, 0, 1), /head \(4\) must be in \[0, 3\]/);
        assert.throws(() => t.rowBackward(ids, 0, 5, 1), /query position \(5\)/);
        assert.throws(() => t.rowBackward(ids, 0, 0, 64), /target \(64\)/);
        assert.throws(() => t.rowBackward(ids, 0.5, 0, 1), /head \(0.5\) must be an integer/);
      } finally {
        t.delete();
      }
    });

    test('attentionStats and taskTargets', () => {
      const t = new core.Trainer({ task: 'shift' });
      try {
        const s = t.attentionStats();
        assert.equal(s.entropy.length, 4);
        assert.equal(s.answerMass.length, 4);
        for (const e of s.entropy) assert.ok(e >= 0 && e <= Math.log(12));
      } finally {
        t.delete();
      }
      assert.deepEqual([...core.taskTargets('future', Int32Array.from([5, 6, 7]))], [6, 7, -100]);
      assert.deepEqual([...core.taskTargets('shift', Int32Array.from([5, 6, 7]))], [-100, 5, 6]);
      assert.throws(() => core.taskTargets('bogus', Int32Array.from([1])), /unknown task 'bogus'/);
      assert.throws(() => core.taskTargets('copy', new Int32Array(0)), /ids must not be empty/);
    });
  });
}
