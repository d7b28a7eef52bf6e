// transformerBlock(): one block taken apart through the JS API. The result has the declared keys,
// the stages compose, the given-matrix path is the ids path's, RoPE and ALiBi come with their
// figures' numbers, and bad values are Errors with kind and key (camelCase).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, throwsKind, variants } from './core.mjs';

const CONFIG = { vocabSize: 10, dModel: 16, nHeads: 4, kvHeads: 2, seqLen: 6, seed: 3, norm: 'rmsnorm', ffn: 'swiglu', ffnMult: 2 };
const IDS = Int32Array.from([1, 4, 2, 9, 0, 4]);

const maxDiff = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

for (const variant of variants) {
  describe(`transformerBlock (${variant})`, async () => {
    const core = await loadCore(variant);

    test('pre-norm: every stage with its shape, and the stages compose', () => {
      const b = core.transformerBlock({ config: CONFIG, ids: IDS });
      assert.deepEqual([b.seqLen, b.dModel, b.nHeads, b.kvHeads, b.dHead, b.ffnWidth], [6, 16, 4, 2, 4, 32]);
      assert.deepEqual([b.positions, b.norm, b.normPosition, b.ffn], ['sinusoidal', 'rmsnorm', 'pre', 'swiglu']);
      const shape = (m) => [m.rows, m.cols];
      for (const k of ['x', 'norm1', 'attnOut', 'sum1', 'norm2', 'ffnOut', 'sum2', 'out', 'finalOut']) assert.deepEqual(shape(b[k]), [6, 16], k);
      for (const k of ['ffnGate', 'ffnUp', 'ffnHidden']) assert.deepEqual(shape(b[k]), [6, 32], k);
      assert.deepEqual([shape(b.q), shape(b.k), shape(b.v), shape(b.weights)], [[6, 16], [6, 8], [6, 8], [24, 6]]);
      assert.ok(maxDiff(b.sum1.data, b.x.data.map((v, i) => v + b.attnOut.data[i])) <= 1e-6);
      assert.ok(maxDiff(b.sum2.data, b.sum1.data.map((v, i) => v + b.ffnOut.data[i])) <= 1e-6);
      assert.deepEqual(b.out.data, b.sum2.data);
      assert.equal(b.rope, null);
      assert.equal(b.alibi, null);
    });

    test('post-norm without an FFN: the missing stages are null', () => {
      const b = core.transformerBlock({ config: { ...CONFIG, normPosition: 'post', ffn: 'none' }, ids: IDS });
      for (const k of ['norm2', 'ffnGate', 'ffnUp', 'ffnHidden', 'ffnOut', 'sum2', 'finalOut']) assert.equal(b[k], null, k);
      assert.deepEqual(b.out.data, b.norm1.data);
    });

    test('a given x is the block input as it is', () => {
      const a = core.transformerBlock({ config: CONFIG, ids: IDS });
      const b = core.transformerBlock({ config: CONFIG, x: a.x });
      assert.deepEqual(b.out.data, a.out.data);
    });

    test('rope: one pair before and after, with its angle; alibi: slopes and H bias matrices', () => {
      const r = core.transformerBlock({ config: { ...CONFIG, positions: 'rope' }, ids: IDS, ropePair: 1, ropeHead: 2 }).rope;
      assert.deepEqual([r.head, r.kvHead, r.pair], [2, 1, 1]);
      assert.ok(maxDiff(r.angles, [0, 1, 2, 3, 4, 5].map((p) => p / 100)) < 1e-6); // 10000^(2/4) = 100
      for (let p = 0; p < 6; ++p) {
        const n = (m) => Math.hypot(m.data[2 * p], m.data[2 * p + 1]);
        assert.ok(Math.abs(n(r.qBefore) - n(r.qAfter)) < 1e-5);
        assert.ok(Math.abs(n(r.kBefore) - n(r.kAfter)) < 1e-5);
      }
      const a = core.transformerBlock({ config: { ...CONFIG, positions: 'alibi' }, ids: IDS }).alibi;
      assert.ok(maxDiff(a.slopes, [0, 1, 2, 3].map((h) => 2 ** (-8 * (h + 1) / 4))) < 1e-7);
      assert.deepEqual([a.bias.rows, a.bias.cols], [24, 6]);
      assert.ok(Math.abs(a.bias.data[1 * 36 + 5 * 6 + 0] - -(2 ** -4) * 5) < 1e-6); // head 1, i 5, j 0
    });

    test('bad values: kind config with the camelCase key, or kind input', () => {
      throwsKind(() => core.transformerBlock({ config: { ...CONFIG, norm: 'batchnorm' }, ids: IDS }), 'config', 'norm', /batchnorm/);
      throwsKind(() => core.transformerBlock({ config: { ...CONFIG, normPosition: 'middle' }, ids: IDS }), 'config', 'normPosition', /middle/);
      throwsKind(() => core.transformerBlock({ config: { ...CONFIG, kvHeads: 3 }, ids: IDS }), 'config', 'kvHeads');
      throwsKind(() => core.transformerBlock({ config: { ...CONFIG, ffnMult: 0 }, ids: IDS }), 'config', 'ffnMult');
      throwsKind(() => core.transformerBlock({ config: CONFIG }), 'input', undefined, /ids or x/);
      throwsKind(() => core.transformerBlock({ config: CONFIG, ids: IDS, extra: 1 }), 'input', undefined, /extra/);
      throwsKind(() => core.transformerBlock({ config: { ...CONFIG, positions: 'rope' }, ids: IDS, ropePair: 2 }), 'input', undefined, /ropePair/);
      throwsKind(() => core.transformerBlock({ config: CONFIG, ids: Int32Array.from([1, 99]) }), 'input', undefined);
    });
  });
}
