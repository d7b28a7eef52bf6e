// The JS API of cpp/wasm/README.md: what each call returns, its shapes, and its guarantees.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { errorMessage, loadCore, repoRoot, variants } from './core.mjs';

const SMALL = { vocabSize: 16, dModel: 8, nHeads: 2, seqLen: 6, batchSize: 4 };

/** Every task's budget: the table the C++ suite and cpp/cli/README.md's tasks table share. */
const BUDGETS = JSON.parse(readFileSync(`${repoRoot}tests/task_budgets.json`, 'utf8'));

/** A config of the table (snake_case, the core's spelling) in the JS API's keys. */
const camel = (config) => Object.fromEntries(Object.entries(config).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c) => c.toUpperCase()), v]));

/** The core's tasks, in its order: the choices its error for an unknown task names. */
function coreTasks(core) {
  const m = /expected ([a-z, ]+) or ([a-z]+)\)/.exec(errorMessage(() => new core.Trainer({ task: '?' })));
  assert.ok(m, 'the unknown-task error names the choices');
  return [...m[1].split(', '), m[2]];
}

test('cpp/cli/README.md\'s tasks table gives every task the budget of tests/task_budgets.json', () => {
  const readme = readFileSync(`${repoRoot}cpp/cli/README.md`, 'utf8');
  const start = readme.indexOf('| task | sequence | solved by | budget (steps) |');
  assert.ok(start >= 0, 'the tasks table');
  const table = readme.slice(start, readme.indexOf('\n\n', start));
  const rows = Object.fromEntries([...table.matchAll(/^\| `([a-z]+)` \|.*\| (\d+)[^|]*\|$/gm)].map((m) => [m[1], Number(m[2])]));
  for (const [task, b] of Object.entries(BUDGETS.tasks)) assert.equal(rows[task], b.steps, `${task}: the README's budget`);
});

for (const variant of variants) {
  describe(`API (${variant})`, async () => {
    const core = await loadCore(variant);

    test('the module: Trainer, selfAttention, defaultConfig, heapBytesInUse, simd, relaxedSimd', () => {
      assert.equal(typeof core.Trainer, 'function');
      assert.equal(typeof core.selfAttention, 'function');
      assert.equal(core.simd, variant === 'simd' || variant === 'relaxed');
      assert.equal(core.relaxedSimd, variant === 'relaxed');
      // Every key at the schema's default (the values: tests/unit/public-contract.txt).
      assert.deepEqual(core.defaultConfig(), Object.fromEntries(core.configSchema().map((k) => [k.js, k.default])));
    });

    test('config() returns what was set, and feeds a Trainer with the same weights', () => {
      const config = {
        ...SMALL, lr: 0.003, seed: 2 ** 53 - 1, attnDropout: 0.25, outDropout: 0.1, task: 'repeat', nLayers: 2, residual: true,
        kvHeads: 1, positions: 'rope', maxSeqLen: 0, norm: 'rmsnorm', normPosition: 'post', ffn: 'swiglu', ffnMult: 2, embInitStd: 0.5,
        objective: 'mlm', maskRate: 0.2, attention: 'strided', window: 3, stride: 2, differential: true,
      };
      const a = new core.Trainer(config);
      const b = new core.Trainer(a.config());
      try {
        assert.deepEqual(a.config(), { ...core.defaultConfig(), ...config });
        assert.deepEqual(b.exportWeights(), a.exportWeights());
      } finally {
        a.delete();
        b.delete();
      }
    });

    test('peekLoss() is the loss the next step returns, and changes nothing', () => {
      for (const extra of [{}, { attnDropout: 0.2, outDropout: 0.1 }]) {
        const t = new core.Trainer({ ...SMALL, ...extra, seed: 5 });
        try {
          const before = t.exportWeights();
          const peeked = t.peekLoss();
          assert.equal(t.peekLoss(), peeked, 'twice the same');
          assert.deepEqual(t.exportWeights(), before, 'weights unchanged');
          assert.equal(t.stepsDone(), 0);
          assert.ok(Math.abs(peeked - Math.log(SMALL.vocabSize)) < 0.5, `near ln V: ${peeked}`);
          assert.equal(t.step(1), peeked, 'step(1) returns the peeked loss exactly');
          const next = t.peekLoss();
          assert.equal(t.step(1), next);
        } finally {
          t.delete();
        }
      }
    });

    // In one build (the SIMD one when tested): both builds train as the native one does, step by
    // step (native.test.mjs), and the native suite trains every task to its budget too.
    const trains = variant === (variants.includes('simd') ? 'simd' : variants[0]);
    if (trains) test('every task of the core reaches its target within its budget (tests/task_budgets.json)', () => {
      const tasks = coreTasks(core);
      assert.deepEqual(Object.keys(BUDGETS.tasks), tasks, 'one budget per task of the core, in its order');
      for (const task of tasks) {
        const b = BUDGETS.tasks[task];
        const t = new core.Trainer({ ...camel(b.config), task });
        try {
          assert.ok(Number.isNaN(t.lastAccuracy()), 'NaN before any step');
          if (b.mask) t.setAblation({ mask: b.mask });
          const metric = () => {
            if (b.metric === 'accuracy') return t.evalAccuracy(BUDGETS.eval_batches);
            const e = t.evaluateText(BUDGETS.eval_batches);
            return e.unigramNats - e.valLoss;
          };
          const before = metric();
          assert.equal(metric(), before, `${task}: the same eval batches every call`);
          assert.ok(before < b.target, `${task}: ${before} before training`);
          let after = before;
          while (t.stepsDone() < b.steps && after < b.target) {
            t.step(b.every);
            after = metric();
          }
          assert.ok(after >= b.target, `${task}: ${b.metric} ${after} after ${t.stepsDone()} steps, target ${b.target} within ${b.steps}`);
          assert.equal(t.config().task, task);
        } finally {
          t.delete();
        }
      }
      assert.throws(() => new core.Trainer({ task: 'sort', vocabSize: 4 }), /^Error: task: the sort task draws 6 distinct ids/);
    });

    test('predictions(ids, k): the top k of the sampler\'s distribution at each position, and the task\'s answers', () => {
      const t = new core.Trainer({ ...SMALL, task: 'copy', seed: 4 });
      try {
        t.step(30);
        const ids = t.sampleSequence(2);
        const T = ids.length;
        const p = t.predictions(ids, 3);
        assert.equal(p.k, 3);
        assert.ok(p.top instanceof Int32Array && p.probs instanceof Float32Array && p.answerProbs instanceof Float32Array);
        assert.deepEqual([p.top.length, p.probs.length, p.answers.length, p.answerProbs.length], [3 * T, 3 * T, T, T]);
        assert.deepEqual(p.answers, core.taskTargets('copy', ids));
        const { logits } = t.attention(ids);
        const V = SMALL.vocabSize;
        for (let i = 0; i < T; ++i) {
          const dist = core.nextTokenDistribution(logits.slice(i * V, (i + 1) * V), {});
          const order = [...dist.keys()].sort((a, b) => dist[b] - dist[a] || a - b);
          assert.deepEqual(Array.from(p.top.subarray(3 * i, 3 * i + 3)), order.slice(0, 3), `position ${i}`);
          assert.deepEqual(Array.from(p.probs.subarray(3 * i, 3 * i + 3)), order.slice(0, 3).map((v) => dist[v]));
          const a = p.answers[i];
          if (a < 0) assert.ok(Number.isNaN(p.answerProbs[i]));
          else assert.equal(p.answerProbs[i], dist[a]);
        }
        assert.equal(t.predictions(ids, 99).k, V, 'k is capped at V');
        assert.throws(() => t.predictions(ids, 0), /k/);
      } finally {
        t.delete();
      }
    });

    test('the seed decides the weights', () => {
      const [a, b, c] = [1, 1, 2].map((seed) => new core.Trainer({ ...SMALL, seed }));
      try {
        assert.deepEqual(a.exportWeights(), b.exportWeights());
        assert.notDeepEqual(a.exportWeights(), c.exportWeights());
      } finally {
        [a, b, c].forEach((t) => t.delete());
      }
    });

    test('step(n) returns the last loss; the history has every step', () => {
      const t = new core.Trainer(SMALL);
      try {
        assert.ok(Number.isNaN(t.step(0)), 'NaN before any step');
        assert.equal(t.lossHistory().length, 0);
        const first = t.step(1);
        const last = t.step(9);
        const h = t.lossHistory();
        assert.ok(h instanceof Float32Array);
        assert.equal(h.length, 10);
        assert.equal(h[0], first);
        assert.equal(h[9], last);
        assert.equal(t.step(0), last);
        assert.equal(t.stepsDone(), 10);
        assert.equal(t.historyStride(), 1);
      } finally {
        t.delete();
      }
    });

    test('training on the repeat task brings the loss down', () => {
      const t = new core.Trainer({});
      try {
        t.step(120);
        const h = t.lossHistory();
        const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
        assert.ok(mean(h.slice(-10)) < 0.5 * mean(h.slice(0, 10)), `${mean(h.slice(0, 10))} -> ${mean(h.slice(-10))}`);
      } finally {
        t.delete();
      }
    });

    test('attention(ids): eval mode, (H,T,T) causal weights whose rows sum to 1, (T,V) logits', () => {
      const t = new core.Trainer({ ...SMALL, attnDropout: 0.5, outDropout: 0.5 });
      try {
        t.step(3);
        const ids = Int32Array.from([5, 0, 15, 7]);
        const r = t.attention(ids);
        const T = ids.length, H = SMALL.nHeads;
        assert.deepEqual([r.nHeads, r.seqLen, r.vocabSize], [H, T, SMALL.vocabSize]);
        assert.ok(r.weights instanceof Float32Array && r.logits instanceof Float32Array);
        assert.equal(r.weights.length, H * T * T);
        assert.equal(r.logits.length, T * SMALL.vocabSize);
        for (let h = 0; h < H; ++h)
          for (let i = 0; i < T; ++i) {
            let sum = 0;
            for (let j = 0; j < T; ++j) {
              const w = r.weights[(h * T + i) * T + j];
              if (j > i) assert.equal(w, 0, `head ${h} (${i},${j}) is masked`);
              sum += w;
            }
            assert.ok(Math.abs(sum - 1) < 1e-5, `head ${h} row ${i} sums to ${sum}`);
          }
        assert.ok(r.logits.every(Number.isFinite));
        assert.deepEqual(t.attention(ids), r, 'no dropout in eval mode: the same answer twice');
        // The past does not see the future: a prefix gives the prefix's rows.
        const prefix = t.attention(ids.subarray(0, 2));
        for (let i = 0; i < 2 * SMALL.vocabSize; ++i) assert.ok(Math.abs(prefix.logits[i] - r.logits[i]) < 1e-5);
        assert.equal(t.stepsDone(), 3, 'attention() does not train');
      } finally {
        t.delete();
      }
    });

    test('exportWeights() is safetensors with the PyTorch names; importWeights() restores it', () => {
      const t = new core.Trainer(SMALL);
      try {
        const initial = t.exportWeights();
        assert.ok(initial instanceof Uint8Array);
        const n = Number(new DataView(initial.buffer).getBigUint64(0, true));
        const header = JSON.parse(new TextDecoder().decode(initial.subarray(8, 8 + n)));
        assert.deepEqual(Object.keys(header).sort(), [
          '__metadata__', 'attn.out_proj.bias', 'attn.out_proj.weight', 'attn.qkv_proj.bias', 'attn.qkv_proj.weight',
          'lm_head.bias', 'lm_head.weight', 'token_emb.embedding.weight',
        ]);
        assert.deepEqual(header['attn.qkv_proj.weight'].shape, [3 * SMALL.dModel, SMALL.dModel]);
        assert.equal(header.__metadata__.n_heads, String(SMALL.nHeads));
        const ids = Int32Array.from([1, 2, 3]);
        const before = t.attention(ids);
        t.step(20);
        assert.notDeepEqual(t.exportWeights(), initial);
        t.importWeights(initial);
        assert.deepEqual(t.exportWeights(), initial);
        assert.deepEqual(t.attention(ids), before);
      } finally {
        t.delete();
      }
    });

    test('Trainers are independent', () => {
      const a = new core.Trainer(SMALL), b = new core.Trainer(SMALL);
      try {
        a.step(5);
        b.step(2);
        b.step(3);
        assert.deepEqual(a.lossHistory(), b.lossHistory());
      } finally {
        a.delete();
        b.delete();
      }
    });
  });
}
