// nextTokenDistribution through the JS API, both builds: the same hand-computed cases as the
// Catch2 suite (tests/cpp/test_sampling.cpp), the options' names and defaults, and bad arguments
// as errors of kind input that name the value. And the draw, Sampler(seed).draw(probs): the core's
// seeded generator and the inverse CDF.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, variants } from './core.mjs';

// logits ln 4, ln 2, 0, 0: softmax 0.5, 0.25, 0.125, 0.125.
const L = Float32Array.of(Math.log(4), Math.log(2), 0, 0);
const near = (got, want, what) => {
  assert.equal(got.length, want.length, what);
  got.forEach((p, i) => assert.ok(Math.abs(p - want[i]) <= 1e-6 && (want[i] !== 0 || p === 0), `${what}, token ${i}: ${p} vs ${want[i]}`));
};

for (const variant of variants) {
  describe(`nextTokenDistribution (${variant})`, async () => {
    const core = await loadCore(variant);

    test('each strategy, and their chain temperature -> top-k -> top-p -> min-p', () => {
      near(core.nextTokenDistribution(L, {}), [0.5, 0.25, 0.125, 0.125], 'defaults');
      near(core.nextTokenDistribution(L, { temperature: 0.5 }), [16 / 22, 4 / 22, 1 / 22, 1 / 22], 'temperature 0.5');
      near(core.nextTokenDistribution(L, { temperature: 0 }), [1, 0, 0, 0], 'greedy');
      near(core.nextTokenDistribution(L, { topK: 2 }), [2 / 3, 1 / 3, 0, 0], 'top-k 2');
      near(core.nextTokenDistribution(L, { topP: 0.76 }), [0.5 / 0.875, 0.25 / 0.875, 0.125 / 0.875, 0], 'top-p 0.76');
      near(core.nextTokenDistribution(L, { minP: 0.5 }), [2 / 3, 1 / 3, 0, 0], 'min-p 0.5');
      near(core.nextTokenDistribution(L, { topK: 3, topP: 0.8 }), [2 / 3, 1 / 3, 0, 0], 'top-k 3 then top-p 0.8');
      const p = core.nextTokenDistribution(L, { temperature: 0.7, topK: 3, topP: 0.95, minP: 0.05 });
      assert.ok(p instanceof Float32Array);
      assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-6);
    });

    test('bad arguments: one sentence naming the value, kind input', () => {
      const bad = [
        [() => core.nextTokenDistribution(L, { temperature: -1 }), /temperature \(-1\)/],
        [() => core.nextTokenDistribution(L, { topK: 5 }), /top_k \(5\)/],
        [() => core.nextTokenDistribution(L, { topK: 1.5 }), /topK \(1.5\) must be an integer/],
        [() => core.nextTokenDistribution(L, { topP: 0 }), /top_p \(0\)/],
        [() => core.nextTokenDistribution(L, { minP: 2 }), /min_p \(2\)/],
        [() => core.nextTokenDistribution(L, { top_k: 2 }), /unknown sampling option key 'top_k'/],
        [() => core.nextTokenDistribution(L, { temperature: 'hot' }), /temperature must be a number/],
        [() => core.nextTokenDistribution(Float32Array.of(1, NaN), {}), /logit 1/],
        [() => core.nextTokenDistribution(Float32Array.of(), {}), /at least one/],
        [() => core.nextTokenDistribution([1, 2], {}), /Float32Array/],
      ];
      for (const [call, message] of bad) {
        assert.throws(call, (e) => e instanceof Error && e.kind === 'input' && message.test(e.message), String(message));
      }
    });

    test('Sampler: the same seed draws the same tokens, never one of probability 0; bad probs are input errors', () => {
      const p = core.nextTokenDistribution(L, { topK: 3 });
      const draws = (seed) => {
        const s = new core.Sampler(seed);
        try {
          return Array.from({ length: 200 }, () => s.draw(p));
        } finally {
          s.delete();
        }
      };
      const a = draws(7);
      assert.deepEqual(draws(7), a);
      assert.notDeepEqual(draws(8), a);
      assert.ok(a.every((t) => t >= 0 && t < 3), 'token 3 is cut');
      assert.deepEqual(new Set(a), new Set([0, 1, 2]));
      const s = new core.Sampler(1);
      try {
        assert.equal(s.draw(core.nextTokenDistribution(L, { temperature: 0 })), 0, 'greedy: the one token left');
        for (const [call, message] of [
          [() => s.draw(Float32Array.of(0, 0)), /no token with a positive probability/],
          [() => s.draw(Float32Array.of()), /at least one/],
          [() => s.draw([1]), /Float32Array/],
          [() => new core.Sampler(-1), /seed/],
        ]) {
          assert.throws(call, (e) => e instanceof Error && e.kind === 'input' && message.test(e.message), String(message));
        }
      } finally {
        s.delete();
      }
    });
  });
}
