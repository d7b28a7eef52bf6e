// taskSample: one sequence from a task's generator, the page's default sample. The C++ test checks
// it is row 0 of make_batch; here the binding carries it, agrees with a plain JS copy of the
// generator (splitmix64 and the tasks' rules of cpp/attn/data/tasks.h), and names bad input.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, variants } from './core.mjs';

const M64 = (1n << 64n) - 1n;

/** splitmix64 with the core's below(n) (cpp/attn/base/rng.h). */
function rng(seed) {
  let state = BigInt(seed);
  return {
    below(n) {
      state = (state + 0x9e3779b97f4a7c15n) & M64;
      let z = state;
      z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
      z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
      z ^= z >> 31n;
      return Number(((z >> 32n) * BigInt(n)) >> 32n);
    },
  };
}

/** The first T inputs of a row of the task, drawn as cpp/attn/data/tasks.cpp draws them. */
function referenceRow(task, V, T, seed) {
  const r = rng(seed);
  const h = Math.floor((T + 1) / 2);
  const z = [];
  if (task === 'repeat') return new Array(T).fill(r.below(V));
  if (task === 'shift' || task === 'future') {
    for (let i = 0; i <= T; ++i) z.push(r.below(V));
    return z.slice(0, T);
  }
  while (z.length < h) {
    const id = r.below(V);
    if (task !== 'sort' || !z.includes(id)) z.push(id);
  }
  const first = z.slice();
  const second = task === 'copy' ? first : task === 'reverse' ? first.slice().reverse() : first.slice().sort((a, b) => a - b);
  return [...first, ...second, first[0]].slice(0, T);
}

for (const variant of variants) {
  describe(`taskSample (${variant})`, async () => {
    const core = await loadCore(variant);

    test('equals a plain copy of the generator for every task, and fits the task', () => {
      for (const task of ['repeat', 'shift', 'copy', 'reverse', 'sort', 'future']) {
        for (const [V, T] of [[64, 12], [16, 7], [9, 3]]) {
          for (const seed of [0, 1, 2, 12345, 2 ** 31 - 1]) {
            const ids = core.taskSample(task, V, T, seed);
            assert.ok(ids instanceof Int32Array);
            assert.deepEqual([...ids], referenceRow(task, V, T, seed), `${task} V=${V} T=${T} seed=${seed}`);
            // Every position the task can answer is answered from inside the sample.
            const targets = core.taskTargets(task, ids);
            if (task === 'repeat') assert.deepEqual([...targets], [...ids]);
          }
        }
      }
      assert.notDeepEqual([...core.taskSample('copy', 64, 12, 1)], [...core.taskSample('copy', 64, 12, 2)]);
    });

    test('names bad input with its kind and key', () => {
      const cases = [
        [() => core.taskSample('bogus', 64, 12, 1), 'config', 'task', /unknown task 'bogus'/],
        [() => core.taskSample('sort', 4, 12, 1), 'config', 'task', /vocab_size \(4\)/],
        [() => core.taskSample('copy', 64, 2, 1), 'config', 'task', /seq_len >= 3/],
        [() => core.taskSample('repeat', 64, 5000, 1), 'config', 'seqLen', /sequence length/],
        [() => core.taskSample('repeat', 0, 12, 1), 'input', undefined, /vocabSize/],
        [() => core.taskSample('repeat', 64, 12, -1), 'input', undefined, /seed/],
        [() => core.taskSample('repeat', 64, 12, 0.5), 'input', undefined, /seed/],
        [() => core.taskSample('repeat', 64, '12', 1), 'input', undefined, /seqLen/],
      ];
      for (const [f, kind, key, message] of cases) {
        assert.throws(f, (e) => e instanceof Error && e.kind === kind && e.key === key && message.test(e.message), String(f));
      }
    });
  });
}
