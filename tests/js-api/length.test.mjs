// The JS API of the length-extrapolation experiment: Trainer.evaluateAt. The math is
// tested natively (tests/cpp/test_length_eval.cpp); here: the binding carries it, its shape, and
// its errors' kind and key as JS spells them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, variants } from './core.mjs';

const small = (positions, extra = {}) => ({ task: 'shift', seqLen: 8, vocabSize: 16, dModel: 16, nHeads: 2, batchSize: 8, residual: true, positions, ...extra });

for (const variant of variants) {
  describe(`evaluateAt (${variant})`, async () => {
    const core = await loadCore(variant);

    test('at 1x it measures what evaluate does; at 2x and 4x one accuracy per position', () => {
      for (const positions of ['sinusoidal', 'rope', 'alibi', 'none']) {
        const t = new core.Trainer(small(positions));
        try {
          t.step(20);
          const e = t.evaluate(3);
          const at1 = t.evaluateAt(8, 3);
          assert.ok(Math.abs(at1.loss - e.loss) < 1e-5, `${positions}: ${at1.loss} vs ${e.loss}`);
          assert.ok(Math.abs(at1.accuracy - e.accuracy) < 1e-6, positions);
          for (const N of [8, 16, 32]) {
            const r = t.evaluateAt(N, 2);
            assert.ok(r.accuracyPerPosition instanceof Float32Array);
            assert.equal(r.accuracyPerPosition.length, N);
            assert.ok(Number.isNaN(r.accuracyPerPosition[0]), 'shift: no target at position 0');
            assert.ok(Number.isFinite(r.loss) && r.accuracy >= 0 && r.accuracy <= 1, `${positions} at ${N}`);
          }
          // Evaluating changes nothing: the next evaluation is the same.
          assert.equal(t.evaluateAt(32, 2).loss, t.evaluateAt(32, 2).loss);
          assert.equal(t.stepsDone(), 20);
        } finally {
          t.delete();
        }
      }
    });

    test('learned positions past maxSeqLen: a config error with key maxSeqLen', () => {
      const t = new core.Trainer(small('learned'));
      try {
        assert.equal(t.evaluateAt(8, 1).accuracyPerPosition.length, 8);
        assert.throws(() => t.evaluateAt(16, 1), (e) => e.kind === 'config' && e.key === 'maxSeqLen' && /maxSeqLen 8/.test(e.message));
      } finally {
        t.delete();
      }
      const roomy = new core.Trainer(small('learned', { maxSeqLen: 32 }));
      try {
        assert.equal(roomy.evaluateAt(32, 1).accuracyPerPosition.length, 32);
      } finally {
        roomy.delete();
      }
    });

    test('bad lengths and batch counts name themselves', () => {
      const t = new core.Trainer(small('rope'));
      try {
        assert.throws(() => t.evaluateAt(0, 1), (e) => e.kind === 'config' && e.key === 'seqLen');
        assert.throws(() => t.evaluateAt(5000, 1), (e) => e.kind === 'config' && e.key === 'seqLen');
        assert.throws(() => t.evaluateAt(16, 0), /evaluateAt batches/);
        assert.throws(() => t.evaluateAt('16', 1), /evaluateAt seqLen/);
      } finally {
        t.delete();
      }
    });
  });
}
