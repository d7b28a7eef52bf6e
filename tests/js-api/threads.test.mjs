// The threads build (SIMD + pthreads) under node, its pthread workers on worker_threads
// (web-worker.mjs): the same numbers as the one-thread SIMD build, bit for bit, on 1, 2 and 3
// threads; errors with their kind and key, as in the other builds; copies out that are plain
// (never views of the shared memory); and the one-thread builds refusing threads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createCore } from './load-core.mjs';
import { throwsKind } from './core.mjs';

// The "Train a GPT on text" preset (a smaller batch), and the grouped block with dropout.
const CONFIGS = {
  text: { dModel: 64, nHeads: 4, seqLen: 32, batchSize: 6, lr: 0.003, seed: 0, task: 'text', nLayers: 2, residual: true, positions: 'rope', norm: 'layernorm', ffn: 'gelu' },
  grouped: { vocabSize: 24, dModel: 32, nHeads: 4, kvHeads: 2, seqLen: 16, batchSize: 8, seed: 3, nLayers: 2, residual: true, positions: 'rope', norm: 'rmsnorm', ffn: 'swiglu', attnDropout: 0.1 },
};
const STEPS = 5;

const simd = await createCore('simd');
const threads = await createCore('threads', undefined, { threads: 3 });

/** Loss history, weights file and one eval forward after STEPS steps. */
function run(core, config) {
  const t = new core.Trainer(config);
  try {
    t.step(STEPS);
    const att = t.attention(Int32Array.from({ length: config.seqLen }, (_, i) => i % 5));
    return { losses: t.lossHistory(), weights: t.exportWeights(), attention: att.weights, logits: att.logits };
  } finally {
    t.delete();
  }
}

test('the threads build says what it is and how many threads it runs', () => {
  assert.equal(threads.threaded, true);
  assert.equal(threads.simd, true);
  assert.equal(threads.threads(), 3);
  assert.equal(simd.threaded, false);
  assert.equal(simd.threads(), 1);
  assert.equal(simd.threadCapacity(), 1);
});

test('training on 1, 2 and 3 threads gives the one-thread SIMD build numbers, bit for bit', () => {
  for (const [name, config] of Object.entries(CONFIGS)) {
    const want = run(simd, config);
    for (const n of [1, 2, 3]) {
      threads.setThreads(n);
      const got = run(threads, config);
      for (const key of Object.keys(want)) assert.deepEqual(got[key], want[key], `${name}, ${n} threads: ${key}`);
    }
  }
  threads.setThreads(3);
});

test('copies out are plain arrays, never views of the shared memory', () => {
  const t = new threads.Trainer(CONFIGS.text);
  try {
    t.step(1);
    assert.ok(threads.HEAP8.buffer instanceof SharedArrayBuffer);
    for (const a of [t.lossHistory(), t.exportWeights(), t.attention(Int32Array.of(1, 2, 3)).weights]) {
      assert.ok(!(a.buffer instanceof SharedArrayBuffer), a.constructor.name);
      structuredClone(a); // what postMessage does
    }
  } finally {
    t.delete();
  }
});

test('errors keep their kind and key; a bad thread count is an input error', () => {
  throwsKind(() => new threads.Trainer({ dModel: 10, nHeads: 3 }), 'config', 'dModel', /d_?[mM]odel \(10\)/);
  throwsKind(() => threads.setThreads(0), 'input', undefined, /threads \(0\) must be in \[1, /);
  throwsKind(() => simd.setThreads(2), 'input', undefined, /threads \(2\) must be in \[1, 1\]/);
  // More threads than the module started workers for (2, + this thread): refused, and the pool
  // keeps working.
  assert.equal(threads.threadCapacity(), 3);
  throwsKind(() => threads.setThreads(4), 'input', undefined, /threads \(4\) must be in \[1, 3\]/);
  threads.setThreads(2);
  assert.equal(threads.threads(), 2);
  const t = new threads.Trainer(CONFIGS.text);
  assert.ok(Number.isFinite(t.step(1)));
  t.delete();
});
