// Every wrong input reaches JS as an Error naming the key or value (with its .kind and, for a
// config key at fault, its .key), never a trap or an abort, and the module keeps working
// afterwards (same losses as before the errors, no leaked handles).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { errorMessage, loadCore, variants } from './core.mjs';

const SIZE_KEYS = ['vocabSize', 'dModel', 'nHeads', 'seqLen', 'batchSize'];
const SMALL = { vocabSize: 16, dModel: 8, nHeads: 2, seqLen: 6, batchSize: 4 };

// Losses of a fresh small Trainer, the yardstick for "the module still works".
function fingerprint(core) {
  const t = new core.Trainer(SMALL);
  try {
    t.step(5);
    return Array.from(t.lossHistory());
  } finally {
    t.delete();
  }
}

// The tensors of a safetensors file: name -> {dtype, shape, begin, end} (offsets into the file).
function safetensorsIndex(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    out[name] = { ...t, begin: 8 + n + t.data_offsets[0], end: 8 + n + t.data_offsets[1] };
  }
  return out;
}

for (const variant of variants) {
  describe(`errors (${variant})`, async () => {
    const core = await loadCore(variant);
    const before = fingerprint(core);
    const handles = core.count_emval_handles();

    test('a missing key takes its default', () => {
      const t = new core.Trainer({ vocabSize: 20 });
      assert.deepEqual(t.config(), { ...core.defaultConfig(), vocabSize: 20 });
      t.delete();
      const d = new core.Trainer({});
      assert.deepEqual(d.config(), core.defaultConfig());
      d.delete();
    });

    test('a size key that is a string, NaN, Infinity, negative, non-integer or huge', () => {
      for (const key of SIZE_KEYS) {
        const cases = [
          ['16', new RegExp(`^${key} must be a number, got string`)],
          [true, new RegExp(`^${key} must be a number, got boolean`)],
          [null, new RegExp(`^${key} must be a number, got null`)],
          [[16], new RegExp(`^${key} must be a number, got an array`)],
          [NaN, new RegExp(`^${key} \\(nan\\) must be a finite number`)],
          [Infinity, new RegExp(`^${key} \\(inf\\) must be a finite number`)],
          [-4, new RegExp(`^${key} \\(-4\\) must be`)],
          [0, new RegExp(`^${key} \\(0\\) must be`)],
          [2.5, new RegExp(`^${key} \\(2.5\\) must be an integer`)],
          [2e6, new RegExp(`^${key} \\(2000000\\) must be in \\[`)],
          [1e12, new RegExp(`^${key} \\(1e\\+12\\) must be in \\[`)],
        ];
        for (const [value, re] of cases) {
          const msg = errorMessage(() => new core.Trainer({ [key]: value }));
          assert.match(msg, re, `${key}: ${String(value)}`);
        }
      }
    });

    test('sizes that are each valid but together need too much state', () => {
      const msg = errorMessage(() => new core.Trainer({ vocabSize: 4096, dModel: 1024, seqLen: 1024, batchSize: 64 }));
      assert.match(msg, /floats of state, more than the \d+ allowed; reduce vocabSize, dModel, seqLen or batchSize/);
    });

    test('float keys, the seed and the task', () => {
      const cases = [
        [{ lr: 'fast' }, /^lr must be a number, got string/],
        [{ lr: NaN }, /^lr \(nan\) must be a finite number/],
        [{ lr: 0 }, /^lr \(0\) must be in \(0, 10\]/],
        [{ lr: -1e-3 }, /^lr \(-0.001\) must be in \(0, 10\]/],
        [{ lr: 1e300 }, /^lr \(inf\) must be in \(0, 10\]/],
        [{ attnDropout: 1 }, /^attnDropout \(1\) must be in \[0, 1\)/],
        [{ outDropout: -0.5 }, /^outDropout \(-0.5\) must be in \[0, 1\)/],
        [{ outDropout: '0.1' }, /^outDropout must be a number, got string/],
        [{ seed: -1 }, /^seed \(-1\) must be in \[0, 9007199254740991\]/],
        [{ seed: 0.5 }, /^seed \(0.5\) must be an integer/],
        [{ seed: 2 ** 60 }, /^seed \(1.15292e\+18\) must be in \[0, 9007199254740991\]/],
        [{ seed: 42n }, /^seed must be a number, got bigint/],
        [{ task: 'bogus' }, /^task: unknown task 'bogus'/],
        [{ task: 1 }, /^task must be a string, got number/],
        [{ vocab_size: 10 }, /^unknown config key 'vocab_size'/],
        [{ dModel: 30, nHeads: 4 }, /^dModel \(30\) must be divisible by nHeads \(4\)/],
        [{ nHeads: 64 }, /^nHeads \(64\) must be in \[1, 32\]/],
      ];
      for (const [config, re] of cases) assert.match(errorMessage(() => new core.Trainer(config)), re);
    });

    test('a config that is not an object', () => {
      for (const [config, what] of [[null, 'null'], [undefined, 'undefined'], [5, 'number'], ['x', 'string'], [[], 'an array']])
        assert.equal(errorMessage(() => new core.Trainer(config)), `config must be an object, got ${what}`);
    });

    test('attention: ids out of range, of the wrong type or length', () => {
      const t = new core.Trainer(SMALL);
      try {
        assert.match(errorMessage(() => t.attention(new Int32Array([1, 16, 2]))), /^token id 16 at position 1 is outside \[0, 16\)/);
        assert.match(errorMessage(() => t.attention(new Int32Array([-1]))), /^token id -1 at position 0 is outside \[0, 16\)/);
        assert.match(errorMessage(() => t.attention(new Int32Array([]))), /^sequence length \(0\) must be in \[1, 6\]/);
        assert.match(errorMessage(() => t.attention(new Int32Array(7))), /^ids has 7 elements, more than the 6 allowed/);
        assert.match(errorMessage(() => t.attention([1, 2])), /^ids must be of type Int32Array, got an array/);
        assert.match(errorMessage(() => t.attention(new Float32Array([1, 2]))), /^ids must be of type Int32Array, got object/);
        assert.match(errorMessage(() => t.attention(new Int32Array(1e8))), /^ids has 100000000 elements/);
        assert.equal(t.attention(new Int32Array([1, 2])).seqLen, 2);
      } finally {
        t.delete();
      }
    });

    test('step: a count that is negative, non-integer or not a number', () => {
      const t = new core.Trainer(SMALL);
      try {
        assert.match(errorMessage(() => t.step(-1)), /^step count \(-1\) must be in \[0, 2147483647\]/);
        assert.match(errorMessage(() => t.step(1.5)), /^step count \(1.5\) must be an integer/);
        assert.match(errorMessage(() => t.step('3')), /^step count must be a number, got string/);
        assert.match(errorMessage(() => t.step(NaN)), /^step count \(nan\) must be a finite number/);
        assert.equal(t.stepsDone(), 0);
        assert.ok(Number.isNaN(t.step(0)));
      } finally {
        t.delete();
      }
    });

    test('a non-finite loss stops step() with an Error and keeps the last good weights', () => {
      const t = new core.Trainer(SMALL);
      try {
        t.step(2);
        // A finite but huge LM-head bias: +3e38 for token 0, -3e38 for the others, so the loss
        // -log softmax(logits)[target] = 3e38 - (-3e38) overflows for every target but 0.
        const bytes = t.exportWeights();
        const b = safetensorsIndex(bytes)['lm_head.bias'];
        const view = new DataView(bytes.buffer, bytes.byteOffset);
        for (let o = b.begin; o < b.end; o += 4) view.setFloat32(o, o === b.begin ? 3e38 : -3e38, true);
        t.importWeights(bytes);
        assert.match(errorMessage(() => t.step(3)), /^training stopped at step 3 because the loss became non-finite \(lr 0.005 is probably too high\)/);
        assert.equal(t.stepsDone(), 2);
        assert.equal(t.lossHistory().length, 2);
        assert.deepEqual(t.exportWeights(), bytes);
      } finally {
        t.delete();
      }
    });

    test('importWeights: wrong type, truncated, hostile or of another config; all or nothing', () => {
      const t = new core.Trainer(SMALL);
      const other = new core.Trainer({ ...SMALL, vocabSize: 17 });
      try {
        const good = t.exportWeights();
        assert.match(errorMessage(() => t.importWeights(Array.from(good))), /^bytes must be of type Uint8Array, got an array/);
        assert.match(errorMessage(() => t.importWeights(good.buffer)), /^bytes must be of type Uint8Array, got object/);
        for (const n of [0, 4, 8, 100, good.length - 1])
          assert.throws(() => t.importWeights(good.subarray(0, n)), Error, `truncated to ${n}`);
        const hugeHeader = good.slice();
        new DataView(hugeHeader.buffer).setBigUint64(0, 1n << 40n, true);
        assert.throws(() => t.importWeights(hugeHeader), Error);
        assert.throws(() => t.importWeights(other.exportWeights()), /lm_head\.weight|token_emb\.embedding\.weight/);
        const nan = good.slice();
        const b = safetensorsIndex(nan)['lm_head.bias'];
        new DataView(nan.buffer).setFloat32(b.begin, NaN, true);
        assert.throws(() => t.importWeights(nan), Error);
        assert.deepEqual(t.exportWeights(), good);
      } finally {
        t.delete();
        other.delete();
      }
    });

    test('selfAttention: malformed matrices and flags', () => {
      const m = (rows, cols, data = new Float32Array(rows * cols).fill(0.5)) => ({ data, rows, cols });
      const ok = { X: m(3, 4), Wq: m(4, 2), Wk: m(4, 2), Wv: m(4, 3) };
      const cases = [
        [{ ...ok, X: undefined }, /^X must be \{data: Float32Array, rows, cols\}, got undefined/],
        [{ ...ok, Wq: m(4, 2, new Float32Array(7)) }, /^Wq.data has 7 elements but rows \* cols = 4 \* 2 = 8/],
        [{ ...ok, Wk: m(4, 2, new Float32Array(9)) }, /^Wk.data has 9 elements, more than the 8 allowed/],
        [{ ...ok, Wv: m(4, 3, new Float64Array(12)) }, /^Wv.data must be of type Float32Array/],
        [{ ...ok, Wv: { ...m(4, 3), rows: '4' } }, /^Wv.rows must be a number, got string/],
        [{ ...ok, X: m(3, 4.5, new Float32Array(12)) }, /^X.cols \(4.5\) must be an integer/],
        [{ ...ok, X: m(0, 4, new Float32Array(0)) }, /^X.rows \(0\) must be in \[1, 1024\]/],
        [{ ...ok, X: { data: new Float32Array(4), rows: 5000, cols: 1 } }, /^X.rows \(5000\) must be in \[1, 1024\]/],
        [{ ...ok, X: m(3, 4, new Float32Array(12).fill(NaN)) }, /^X.data contains NaN or Infinity/],
        [{ ...ok, Wq: m(3, 2) }, /^Wq has 3 rows but X has 4 columns/],
        [{ ...ok, Wk: m(4, 3) }, /^Wq and Wk must have the same dk/],
        [{ ...ok, causal: 1 }, /^causal must be a boolean, got number/],
        [null, /^selfAttention expects \{X, Wq, Wk, Wv, causal\}, got null/],
      ];
      for (const [args, re] of cases) assert.match(errorMessage(() => core.selfAttention(args)), re);
      assert.equal(core.selfAttention(ok).output.rows, 3);
    });

    test('every error carries a kind, and a config error the key at fault', () => {
      const t = new core.Trainer(SMALL);
      const bytes = t.exportWeights();
      const other = new core.Trainer({ ...SMALL, vocabSize: 17 });
      const otherBytes = other.exportWeights();
      other.delete();
      const nan = bytes.slice();
      new DataView(nan.buffer).setFloat32(safetensorsIndex(nan)['lm_head.bias'].begin, NaN, true);
      const ids = new Int32Array([1, 2, 3]);
      // [call, kind, key or undefined for none]
      const cases = [
        [() => new core.Trainer({ dModel: 10, nHeads: 3 }), 'config', 'dModel'],
        [() => new core.Trainer({ nHeads: 64 }), 'config', 'nHeads'],
        [() => new core.Trainer({ seqLen: 0 }), 'config', 'seqLen'],
        [() => new core.Trainer({ lr: 1e30 }), 'config', 'lr'],
        [() => new core.Trainer({ attnDropout: 1 }), 'config', 'attnDropout'],
        [() => new core.Trainer({ task: 'bogus' }), 'config', 'task'],
        [() => new core.Trainer({ task: 'sort', vocabSize: 2 }), 'config', 'task'],
        // Checked by the binding before the core sees them: the same kind and key.
        [() => new core.Trainer({ vocabSize: '16' }), 'config', 'vocabSize'],
        [() => new core.Trainer({ batchSize: 2.5 }), 'config', 'batchSize'],
        [() => new core.Trainer({ seed: -1 }), 'config', 'seed'],
        [() => new core.Trainer({ task: 1 }), 'config', 'task'],
        // No one key at fault.
        [() => new core.Trainer({ vocab_size: 10 }), 'config', undefined],
        [() => new core.Trainer(null), 'config', undefined],
        [() => new core.Trainer({ vocabSize: 4096, dModel: 1024, seqLen: 1024, batchSize: 64 }), 'config', undefined],
        [() => t.attention(new Int32Array([1, 16, 2])), 'input', undefined],
        [() => t.attention(new Int32Array(0)), 'input', undefined],
        [() => t.attention([1, 2]), 'input', undefined],
        [() => t.step(-1), 'input', undefined],
        [() => t.evaluate(0), 'input', undefined],
        [() => t.rowBackward(ids, 2, 0, 0), 'input', undefined],
        [() => t.setAblation({ headsOff: [true] }), 'input', undefined],
        [() => t.setAblation({ zeroed: [true] }), 'input', undefined],
        [() => t.setAblation({ mask: 'triu' }), 'input', undefined],
        [() => t.setAblation({ off: [] }), 'input', undefined],
        [() => t.importWeights(Array.from(bytes)), 'input', undefined],
        [() => core.selfAttention(null), 'input', undefined],
        [() => core.taskTargets('repeat', new Int32Array(0)), 'input', undefined],
        [() => core.taskTargets('bogus', ids), 'config', 'task'],
        [() => t.importWeights(bytes.subarray(0, 100)), 'format', undefined],
        [() => t.importWeights(new Uint8Array(0)), 'format', undefined],
        [() => t.importWeights(otherBytes), 'format', undefined],
        [() => t.importWeights(nan), 'format', undefined],
      ];
      try {
        for (const [f, kind, key] of cases) {
          let err = null;
          try {
            f();
          } catch (e) {
            err = e;
          }
          assert.ok(err instanceof Error, `${f}: expected an Error`);
          assert.equal(err.kind, kind, `${f}: ${err.message}`);
          assert.equal(err.key, key, `${f}: ${err.message}`);
          assert.equal('key' in err, key !== undefined, `${f}: .key only when there is one`);
        }
        assert.deepEqual(t.exportWeights(), bytes);
      } finally {
        t.delete();
      }
    });

    test('a non-finite loss is kind nonFinite, without a key', () => {
      const t = new core.Trainer(SMALL);
      try {
        t.step(1);
        const bytes = t.exportWeights();
        const b = safetensorsIndex(bytes)['lm_head.bias'];
        const view = new DataView(bytes.buffer, bytes.byteOffset);
        for (let o = b.begin; o < b.end; o += 4) view.setFloat32(o, o === b.begin ? 3e38 : -3e38, true);
        t.importWeights(bytes);
        assert.throws(() => t.step(1), (e) => e instanceof Error && e.kind === 'nonFinite' && !('key' in e) && /non-finite/.test(e.message));
      } finally {
        t.delete();
      }
    });

    test('a deleted Trainer refuses to be used', () => {
      const t = new core.Trainer(SMALL);
      t.delete();
      assert.throws(() => t.step(1), Error);
      // Embind's own error, not the core's: it has no kind (attention-core.d.ts, CoreError).
      assert.throws(() => t.step(1), (e) => e.kind === undefined);
    });

    test('after all the errors: same losses as before, no leaked JS handles', () => {
      assert.deepEqual(fingerprint(core), before);
      assert.equal(core.count_emval_handles(), handles);
    });
  });
}
