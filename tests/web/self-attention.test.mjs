// selfAttention() stage by stage against a naive JS computation, on tiny cases.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, variants } from './core.mjs';

const TOL = 1e-5; // |wasm - js| <= TOL * (1 + |js|); float32 core against float64 JS

const mat = (rows, cols, values) => ({ data: Float32Array.from(values), rows, cols });

// A small deterministic generator (LCG) for test inputs in [-1, 1).
function randomMatrix(rows, cols, seed) {
  let s = seed >>> 0;
  const values = Array.from({ length: rows * cols }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  });
  return mat(rows, cols, values);
}

const at = (m, i, j) => m.data[i * m.cols + j];

// The lesson's NumPy code in plain loops, in float64.
function naiveStages({ X, Wq, Wk, Wv, causal }) {
  const matmul = (A, B) => {
    const out = { data: new Float64Array(A.rows * B.cols), rows: A.rows, cols: B.cols };
    for (let i = 0; i < A.rows; ++i)
      for (let j = 0; j < B.cols; ++j) {
        let sum = 0;
        for (let k = 0; k < A.cols; ++k) sum += at(A, i, k) * at(B, k, j);
        out.data[i * B.cols + j] = sum;
      }
    return out;
  };
  const map = (m, f) => ({ ...m, data: m.data.map((v, idx) => f(v, Math.floor(idx / m.cols), idx % m.cols)) });
  const Q = matmul(X, Wq), K = matmul(X, Wk), V = matmul(X, Wv);
  const Kt = { data: new Float64Array(K.rows * K.cols), rows: K.cols, cols: K.rows };
  for (let i = 0; i < K.rows; ++i) for (let j = 0; j < K.cols; ++j) Kt.data[j * K.rows + i] = at(K, i, j);
  const scores = matmul(Q, Kt);
  const scaledScores = map(scores, (v) => v / Math.sqrt(Wq.cols));
  const maskedScores = map(scaledScores, (v, i, j) => (causal && j > i ? -Infinity : v));
  const weights = map(maskedScores, () => 0);
  for (let i = 0; i < weights.rows; ++i) {
    const row = Array.from({ length: weights.cols }, (_, j) => at(maskedScores, i, j));
    const max = Math.max(...row);
    const e = row.map((v) => Math.exp(v - max));
    const total = e.reduce((a, b) => a + b, 0);
    e.forEach((v, j) => (weights.data[i * weights.cols + j] = v / total));
  }
  return { Q, K, V, scores, scaledScores, maskedScores, weights, output: matmul(weights, V) };
}

function assertStagesClose(got, want) {
  for (const key of ['Q', 'K', 'V', 'scores', 'scaledScores', 'maskedScores', 'weights', 'output']) {
    assert.ok(got[key].data instanceof Float32Array, key);
    assert.equal(got[key].rows, want[key].rows, `${key}.rows`);
    assert.equal(got[key].cols, want[key].cols, `${key}.cols`);
    for (let i = 0; i < want[key].data.length; ++i) {
      const g = got[key].data[i], w = want[key].data[i];
      if (w === -Infinity) assert.equal(g, -Infinity, `${key}[${i}]`);
      else assert.ok(Math.abs(g - w) <= TOL * (1 + Math.abs(w)), `${key}[${i}]: wasm ${g} js ${w}`);
    }
  }
}

for (const variant of variants) {
  describe(`selfAttention (${variant})`, async () => {
    const core = await loadCore(variant);

    test('a case by hand', () => {
      // X = I, q = (1, 1), k = (1, 0), v = (1, 2); dk = 1 so scaling is the identity.
      // scores = q k^T = [[1, 0], [1, 0]]; causal row 0 = [1, -inf] -> weights [1, 0];
      // row 1 = softmax([1, 0]) = [e/(e+1), 1/(e+1)] = [0.731059, 0.268941];
      // output = weights v = [1, 0.731059 + 2 * 0.268941] = [1, 1.268941].
      const s = core.selfAttention({ X: mat(2, 2, [1, 0, 0, 1]), Wq: mat(2, 1, [1, 1]), Wk: mat(2, 1, [1, 0]), Wv: mat(2, 1, [1, 2]), causal: true });
      assert.deepEqual(Array.from(s.maskedScores.data), [1, -Infinity, 1, 0]);
      const e = Math.E;
      const close = (a, b) => assert.ok(Math.abs(a - b) < 1e-6, `${a} vs ${b}`);
      [1, 0, e / (e + 1), 1 / (e + 1)].forEach((w, i) => close(s.weights.data[i], w));
      [1, 1 + 1 / (e + 1)].forEach((w, i) => close(s.output.data[i], w));
    });

    for (const causal of [false, true]) {
      test(`T=5 D=4 dk=3 dv=2, causal ${causal}: every stage matches the naive JS`, () => {
        const input = { X: randomMatrix(5, 4, 1), Wq: randomMatrix(4, 3, 2), Wk: randomMatrix(4, 3, 3), Wv: randomMatrix(4, 2, 4), causal };
        const got = core.selfAttention(input);
        assertStagesClose(got, naiveStages(input));
        for (let i = 0; i < 5; ++i) {
          let sum = 0;
          for (let j = 0; j < 5; ++j) {
            sum += at(got.weights, i, j);
            if (causal && j > i) assert.equal(at(got.weights, i, j), 0, 'masked weight is exactly 0');
          }
          assert.ok(Math.abs(sum - 1) < 1e-6, `row ${i} sums to ${sum}`);
        }
      });
    }

    test('causal omitted means not causal', () => {
      const input = { X: randomMatrix(3, 2, 5), Wq: randomMatrix(2, 2, 6), Wk: randomMatrix(2, 2, 7), Wv: randomMatrix(2, 3, 8) };
      assert.deepEqual(core.selfAttention(input), core.selfAttention({ ...input, causal: false }));
    });
  });
}
