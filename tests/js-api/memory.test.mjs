// After warm-up, long training and many create/step/delete cycles leave the wasm memory size and
// the bytes allocated on its heap unchanged: nothing leaks, and step() allocates nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { heapSize, loadCore, variants } from './core.mjs';

const SMALL = { vocabSize: 16, dModel: 8, nHeads: 2, seqLen: 8, batchSize: 4 };

// Every call of the Trainer API once, so lazily sized workspaces exist before measuring.
function exercise(t, ids) {
  t.attention(ids);
  t.lossHistory();
  t.exportWeights();
  t.config();
}

for (const variant of variants) {
  describe(`memory (${variant})`, async () => {
    const core = await loadCore(variant);
    const ids = Int32Array.from([3, 1, 4, 1, 5, 9, 2, 6]);

    test('20,000 steps (past the loss-history cap) leave the heap unchanged', () => {
      const t = new core.Trainer(SMALL);
      try {
        t.step(1);
        exercise(t, ids);
        const size = heapSize(core), inUse = core.heapBytesInUse();
        for (let i = 0; i < 200; ++i) {
          t.step(100);
          exercise(t, ids);
        }
        assert.equal(t.stepsDone(), 20001);
        assert.equal(t.historyStride(), 2); // the history was thinned once, not grown
        assert.equal(heapSize(core), size, 'wasm memory grew');
        assert.equal(core.heapBytesInUse(), inUse, 'bytes allocated on the heap changed');
      } finally {
        t.delete();
      }
    });

    test('1,000 create/step/delete cycles leave the heap unchanged', () => {
      const cycle = (seed) => {
        const t = new core.Trainer({ seed });
        t.step(1);
        exercise(t, ids);
        t.delete();
      };
      cycle(0);
      const size = heapSize(core), inUse = core.heapBytesInUse(), handles = core.count_emval_handles();
      for (let seed = 1; seed <= 1000; ++seed) cycle(seed);
      assert.equal(heapSize(core), size, 'wasm memory grew');
      assert.equal(core.heapBytesInUse(), inUse, 'bytes allocated on the heap changed');
      assert.equal(core.count_emval_handles(), handles, 'JS handles leaked');
    });

    test('the measure sees a leak: a Trainer left undeleted shows in heapBytesInUse', () => {
      const inUse = core.heapBytesInUse();
      const t = new core.Trainer(SMALL);
      assert.ok(core.heapBytesInUse() > inUse);
      t.delete();
      assert.equal(core.heapBytesInUse(), inUse);
    });

    test('returned arrays are copies that survive memory growth', () => {
      const t = new core.Trainer(SMALL);
      try {
        t.step(3);
        const history = t.lossHistory();
        const attention = t.attention(ids);
        assert.notEqual(history.buffer, core.HEAP8.buffer);
        assert.notEqual(attention.weights.buffer, core.HEAP8.buffer);
        const saved = Float32Array.from(history), weights = Float32Array.from(attention.weights);
        const size = heapSize(core);
        const big = new core.Trainer({ vocabSize: 1024, dModel: 256, seqLen: 64, batchSize: 32 });
        big.step(1);
        big.delete();
        assert.ok(heapSize(core) > size, 'the wasm memory grew (the old buffer is detached)');
        assert.deepEqual(history, saved);
        assert.deepEqual(attention.weights, weights);
        history[0] = 123; // writing to a copy leaves the Trainer alone
        assert.notEqual(t.lossHistory()[0], 123);
      } finally {
        t.delete();
      }
    });
  });
}
