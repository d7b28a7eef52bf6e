// The lesson panels' core calls, scalingDemo and softmaxSteps, against plain JS references in
// float64 (and Math.fround for the float32 overflow), plus their argument errors.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, variants } from './core.mjs';
import { entropy, softmax } from '../reference-math.mjs';

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol * (1 + Math.abs(b)), `${what}: ${a} vs ${b}`);

for (const variant of variants) {
  describe(`lesson panels (${variant})`, async () => {
    const core = await loadCore(variant);

    test('scalingDemo: scores are query . key, both softmaxes, max and entropy match a JS reference', () => {
      for (const dk of [1, 3, 16, 64]) {
        const d = core.scalingDemo(dk, 8, 7);
        assert.equal(d.query.length, dk);
        assert.deepEqual([d.keys.rows, d.keys.cols], [8, dk]);
        const scores = Array.from({ length: 8 }, (_, j) => d.query.reduce((s, q, i) => s + q * d.keys.data[j * dk + i], 0));
        const scaled = scores.map((s) => s / Math.sqrt(dk));
        const wu = softmax(scores);
        const ws = softmax(scaled);
        for (let j = 0; j < 8; ++j) {
          close(d.scores[j], scores[j], 1e-5, `dk ${dk} score ${j}`);
          close(d.scaledScores[j], scaled[j], 1e-5, `dk ${dk} scaled ${j}`);
          close(d.weightsUnscaled[j], wu[j], 1e-4, `dk ${dk} unscaled weight ${j}`);
          close(d.weightsScaled[j], ws[j], 1e-5, `dk ${dk} scaled weight ${j}`);
        }
        close(d.maxUnscaled, Math.max(...wu), 1e-4, 'max unscaled');
        close(d.maxScaled, Math.max(...ws), 1e-5, 'max scaled');
        close(d.entropyUnscaled, entropy(wu), 1e-4, 'entropy unscaled');
        close(d.entropyScaled, entropy(ws), 1e-5, 'entropy scaled');
      }
      // The same seed gives the same draws; another seed others.
      assert.deepEqual(core.scalingDemo(8, 4, 1).query, core.scalingDemo(8, 4, 1).query);
      assert.notDeepEqual(core.scalingDemo(8, 4, 1).query, core.scalingDemo(8, 4, 2).query);
      assert.equal(core.scalingDemo(8, 4, 2 ** 32 - 1).query.length, 8);
    });

    test('softmaxSteps: [100, 200, 300] overflows without the max and not with it', () => {
      const x = Float32Array.of(100, 200, 300);
      const bad = core.softmaxSteps(x, false);
      assert.equal(bad.max, 0);
      assert.deepEqual(Array.from(bad.shifted), [100, 200, 300]);
      assert.deepEqual(Array.from(bad.exps), [Infinity, Infinity, Infinity]); // exp(100) > 3.4e38
      assert.equal(bad.sum, Infinity);
      assert.ok(Array.from(bad.weights).every(Number.isNaN));
      const good = core.softmaxSteps(x, true);
      assert.equal(good.max, 300);
      assert.deepEqual(Array.from(good.shifted), [-200, -100, 0]);
      assert.equal(good.exps[0], 0);
      assert.ok(good.exps[1] >= 0 && good.exps[1] < 1e-43);
      assert.equal(good.exps[2], 1);
      assert.equal(good.sum, 1);
      assert.equal(good.weights[2], 1);
      // Small logits: both recipes are the plain softmax.
      const small = Float32Array.of(0.5, -1, 2, 0);
      const ref = softmax(Array.from(small));
      for (const sub of [false, true]) {
        const r = core.softmaxSteps(small, sub);
        ref.forEach((w, j) => close(r.weights[j], w, 1e-6, `weight ${j} (subtractMax ${sub})`));
        close(r.sum, Array.from(r.exps).reduce((a, b) => a + b, 0), 1e-6, 'sum of exps');
        r.exps.forEach((e, j) => close(e, Math.exp(small[j] - r.max), 1e-6, `exp ${j}`));
      }
    });

    test('bad arguments throw an input Error naming the value, and the module keeps working', () => {
      const bad = [
        [() => core.scalingDemo(0, 8, 1), /dk \(0\) must be in \[1, 64\]/],
        [() => core.scalingDemo(65, 8, 1), /dk \(65\)/],
        [() => core.scalingDemo(4, 1, 1), /keys \(1\)/],
        [() => core.scalingDemo(4, 8, -1), /seed \(-1\)/],
        [() => core.scalingDemo(4, 8, 2 ** 32), /seed/],
        [() => core.scalingDemo(4.5, 8, 1), /dk \(4.5\) must be an integer/],
        [() => core.softmaxSteps(Float32Array.of(), true), /at least one/],
        [() => core.softmaxSteps(Float32Array.of(1, NaN), true), /NaN or Infinity/],
        [() => core.softmaxSteps([1, 2], true), /Float32Array/],
        [() => core.softmaxSteps(new Float32Array(65), true), /65 elements/],
        [() => core.softmaxSteps(Float32Array.of(1), 1), /subtractMax must be a boolean/],
      ];
      for (const [call, message] of bad) {
        assert.throws(call, (e) => e instanceof Error && e.kind === 'input' && message.test(e.message), String(message));
      }
      assert.equal(core.softmaxSteps(Float32Array.of(1, 1), true).weights[0], 0.5);
    });
  });
}
