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
function naiveStages({ X, Wq, Wk, Wv, causal, mask }) {
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
  const T = scores.cols;
  const maskedScores = map(scaledScores, (v, i, j) => ((causal && j > i) || (mask && mask[i * T + j]) ? -Infinity : v));
  const weights = map(maskedScores, () => 0);
  for (let i = 0; i < weights.rows; ++i) {
    const row = Array.from({ length: weights.cols }, (_, j) => at(maskedScores, i, j));
    const max = Math.max(...row);
    if (max === -Infinity) continue; // every key masked: weights (and so output) 0
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

// The lesson's multi-head call and positions, against the naive JS above (per head), a plain
// concat-times-Wo loop and the sinusoidal formula.
function naiveMultiHead({ X, Wq, Wk, Wv, Wo, mask }) {
  const heads = Wq.map((_, h) => naiveStages({ X, Wq: Wq[h], Wk: Wk[h], Wv: Wv[h], mask }));
  const dv = Wv[0].cols;
  const T = X.rows;
  const concat = { data: new Float64Array(T * heads.length * dv), rows: T, cols: heads.length * dv };
  heads.forEach((st, h) => {
    for (let i = 0; i < T; ++i) for (let c = 0; c < dv; ++c) concat.data[i * concat.cols + h * dv + c] = st.output.data[i * dv + c];
  });
  const output = { data: new Float64Array(T * Wo.cols), rows: T, cols: Wo.cols };
  for (let i = 0; i < T; ++i)
    for (let o = 0; o < Wo.cols; ++o) {
      let acc = 0;
      for (let c = 0; c < concat.cols; ++c) acc += concat.data[i * concat.cols + c] * at(Wo, c, o);
      output.data[i * Wo.cols + o] = acc;
    }
  return { heads, concat, output };
}

function assertClose(got, want, what) {
  assert.deepEqual([got.rows, got.cols], [want.rows, want.cols], `${what} shape`);
  for (let i = 0; i < want.data.length; ++i) {
    const g = got.data[i], w = want.data[i];
    assert.ok(Math.abs(g - w) <= TOL * (1 + Math.abs(w)), `${what}[${i}]: wasm ${g} js ${w}`);
  }
}

for (const variant of variants) {
  describe(`multiHeadSelfAttention and addPositions (${variant})`, async () => {
    const core = await loadCore(variant);
    const T = 5, D = 6, H = 3, dk = 2, dv = 3;
    const input = () => ({
      X: randomMatrix(T, D, 11),
      Wq: [0, 1, 2].map((h) => randomMatrix(D, dk, 20 + h)),
      Wk: [0, 1, 2].map((h) => randomMatrix(D, dk, 30 + h)),
      Wv: [0, 1, 2].map((h) => randomMatrix(D, dv, 40 + h)),
      Wo: randomMatrix(H * dv, D, 50),
    });

    test('three heads with a drawn mask (row 2 fully masked): every head, concat and Wo match the naive JS', () => {
      // Window of 2 (query i reads i-1 and i), and row 2 masked entirely.
      const mask = Uint8Array.from({ length: T * T }, (_, c) => {
        const i = Math.floor(c / T), j = c % T;
        return i === 2 || j > i || j < i - 1 ? 1 : 0;
      });
      const args = { ...input(), mask };
      const got = core.multiHeadSelfAttention(args);
      const want = naiveMultiHead(args);
      assert.equal(got.heads.length, H);
      got.heads.forEach((st, h) => assertStagesClose(st, want.heads[h]));
      assertClose(got.concat, want.concat, 'concat');
      assertClose(got.output, want.output, 'output');
      for (let h = 0; h < H; ++h) {
        const w = got.heads[h].weights.data;
        assert.deepEqual(Array.from(w.slice(2 * T, 3 * T)), [0, 0, 0, 0, 0], 'fully masked row: weights 0');
        assert.ok(w.every(Number.isFinite), 'no NaN anywhere');
      }
      assert.deepEqual(Array.from(got.output.data.slice(2 * D, 3 * D)), [0, 0, 0, 0, 0, 0], 'fully masked row: output 0');
    });

    test('causal: true is the causal mask; no mask is none; one head with Wo = I is selfAttention', () => {
      const a = input();
      const causalCells = Uint8Array.from({ length: T * T }, (_, c) => (c % T > Math.floor(c / T) ? 1 : 0));
      assert.deepEqual(core.multiHeadSelfAttention({ ...a, causal: true }), core.multiHeadSelfAttention({ ...a, mask: causalCells }));
      const one = core.multiHeadSelfAttention({ X: a.X, Wq: [a.Wq[0]], Wk: [a.Wk[0]], Wv: [a.Wv[0]], Wo: mat(dv, dv, [1, 0, 0, 0, 1, 0, 0, 0, 1]) });
      const single = core.selfAttention({ X: a.X, Wq: a.Wq[0], Wk: a.Wk[0], Wv: a.Wv[0] });
      assert.deepEqual(one.heads[0], single);
      assert.deepEqual(one.output, single.output);
    });

    test('bad arguments: one sentence naming the problem, kind input', () => {
      const a = input();
      const cases = [
        [{ ...a, mask: new Uint8Array(7) }, /the mask has 7 cells but T \* T = 5 \* 5 = 25/],
        [{ ...a, mask: new Uint8Array(30) }, /mask has 30 elements, more than the 25 allowed/],
        [{ ...a, mask: new Uint8Array(25), causal: true }, /give mask or causal, not both/],
        [{ ...a, mask: [1, 0] }, /mask must be of type Uint8Array/],
        [{ ...a, Wq: [] }, /Wq has 0 matrices; expected 1 to 64/],
        [{ ...a, Wk: a.Wk[0] }, /Wk must be an array of matrices/],
        [{ ...a, Wo: randomMatrix(4, D, 1) }, /Wo has shape \(4,6\) but the concatenated heads have 9 columns/],
        [{ ...a, heads: 2 }, /unknown multiHeadSelfAttention key 'heads'/],
      ];
      for (const [args, re] of cases) {
        assert.throws(() => core.multiHeadSelfAttention(args), (e) => re.test(e.message) && e.kind === 'input', String(re));
      }
    });

    test('addPositions: X = E + P, P[p][2i] = sin(p / 10000^(2i/D)), P[p][2i+1] = cos(same)', () => {
      const E = randomMatrix(7, 8, 60);
      const { positions: P, X } = core.addPositions(E);
      assert.deepEqual([P.rows, P.cols, X.rows, X.cols], [7, 8, 7, 8]);
      for (let p = 0; p < 7; ++p)
        for (let i = 0; i < 8; i += 2) {
          const angle = p / 10000 ** (i / 8);
          assert.ok(Math.abs(at(P, p, i) - Math.sin(angle)) < 1e-5, `P[${p}][${i}]`);
          assert.ok(Math.abs(at(P, p, i + 1) - Math.cos(angle)) < 1e-5, `P[${p}][${i + 1}]`);
        }
      for (let c = 0; c < X.data.length; ++c) assert.equal(X.data[c], Math.fround(E.data[c] + P.data[c]));
      assert.throws(() => core.addPositions(randomMatrix(3, 5, 1)), (e) => /even width, got \(3,5\)/.test(e.message) && e.kind === 'input');
    });
  });
}
