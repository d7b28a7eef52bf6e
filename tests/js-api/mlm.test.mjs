// Masked language modelling and the attention variants through the JS API: the new config keys
// (defaults, errors with kind and camelCase key), fill(text, {blank, top}) on a trained model and
// its errors, the receptive field of a sliding window, differential rows summing to 1 - lambda,
// and an mlm model that refuses to decode left to right.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, throwsKind, variants } from './core.mjs';
import { readSafetensors } from './safetensors.mjs';

// A periodic text: a model learns to fill it within a few hundred steps.
const TEXT = 'abcdefgh '.repeat(60);
const FILL_CONFIG = { task: 'text', objective: 'mlm', seqLen: 16, residual: true, nLayers: 2, positions: 'learned', lr: 0.01 };

for (const variant of variants) {
  describe(`masked language modelling and attention variants (${variant})`, async () => {
    const core = await loadCore(variant);

    test('the new keys have their defaults in config() and defaultConfig()', () => {
      const want = { objective: 'causal', maskRate: 0.15, attention: 'full', window: 4, stride: 4, differential: false };
      const t = new core.Trainer({});
      try {
        for (const [k, v] of Object.entries(want)) {
          assert.equal(t.config()[k], v, k);
          assert.equal(core.defaultConfig()[k], v, k);
        }
      } finally {
        t.delete();
      }
    });

    test('bad values are config errors keyed in camelCase', () => {
      throwsKind(() => new core.Trainer({ window: 0 }), 'config', 'window', /^window \(0\) must be in \[1, 4096\]$/);
      throwsKind(() => new core.Trainer({ stride: 0 }), 'config', 'stride', /stride \(0\)/);
      throwsKind(() => new core.Trainer({ maskRate: 0.6 }), 'config', 'maskRate', /^maskRate \(0\.6\) must be in \[0\.01, 0\.5\]$/);
      throwsKind(() => new core.Trainer({ objective: 'bert' }), 'config', 'objective', /unknown objective 'bert'/);
      throwsKind(() => new core.Trainer({ attention: 'sparse' }), 'config', 'attention', /unknown attention 'sparse'/);
      throwsKind(() => new core.Trainer({ differential: 1 }), 'config', 'differential', /boolean/);
      throwsKind(() => new core.Trainer({ objective: 'mlm', vocabSize: 1 }), 'config', 'vocabSize', /objective mlm/);
    });

    test('an mlm model has [MASK] as its last id and trains on the selected positions', () => {
      const t = new core.Trainer({ objective: 'mlm', task: 'copy', vocabSize: 16 });
      try {
        assert.equal(t.config().vocabSize, 16);
        const r = t.attention(Int32Array.from([1, 16, 3]));  // 16 is [MASK]
        assert.equal(r.vocabSize, 17);
        assert.equal(r.logits.length, 3 * 17);
        // Bidirectional: position 0 attends to later keys.
        const w = r.weights;
        assert.ok(w[1] > 0 && w[2] > 0, 'row 0 sees keys 1 and 2');
        const before = t.evaluate(8).accuracy;
        t.step(400);
        const after = t.evaluate(8).accuracy;
        assert.ok(after > 0.6 && after > before, `masked-position accuracy ${before} -> ${after}`);
        throwsKind(() => new core.Decoder(t, {}), 'config', 'objective', /cannot generate left to right/);
      } finally {
        t.delete();
      }
    });

    test('fill(text, {blank, top}) on a trained model of text', () => {
      const t = new core.Trainer(FILL_CONFIG, TEXT);
      try {
        t.step(300);
        const r = t.fill('abc_efgh a_cd', { top: 3 });
        assert.equal(r.text, 'abcdefgh abcd');
        assert.deepEqual(r.blanks.map((b) => b.position), [3, 10]);
        for (const b of r.blanks) {
          assert.equal(b.top.length, 3);
          assert.deepEqual(Object.keys(b.top[0]).sort(), ['char', 'prob']);
          assert.ok(b.top[0].prob >= b.top[1].prob && b.top[1].prob >= b.top[2].prob);
        }
        assert.equal(r.blanks[0].top[0].char, 'd');
        assert.equal(t.fill(' abcdefgh ab*def', { blank: '*' }).text, ' abcdefgh abcdef');
        assert.equal(t.fill(' abcdefgh ab_def').blanks[0].top.length, 1);  // default top 1, blank "_"
        const all = t.fill('ab_d', { top: t.corpus().vocabSize }).blanks[0].top;
        assert.ok(Math.abs(all.reduce((s, g) => s + g.prob, 0) - 1) < 1e-5);

        throwsKind(() => t.fill('abc'), 'input', undefined, /^text has no blank/);
        throwsKind(() => t.fill('___'), 'input', undefined, /all blanks/);
        throwsKind(() => t.fill('a_c', { blank: 'a' }), 'input', undefined, /^blank: 'a' \(U\+0061\) is a character of the model's vocabulary/);
        throwsKind(() => t.fill('a_Q'), 'input', undefined, /'Q' \(U\+0051\) is not in the model's vocabulary/);
        throwsKind(() => t.fill('a_c', { blank: 'ab' }), 'input', undefined, /blank must be one character/);
        throwsKind(() => t.fill('a_c', { top: 0 }), 'input', undefined, /top \(0\)/);
        throwsKind(() => t.fill('a_c', { bogus: 1 }), 'input', undefined, /bogus/);
        throwsKind(() => t.fill(3), 'input', undefined, /text/);
        assert.equal(t.fill('abc_').text.length, 4);  // the module still works
      } finally {
        t.delete();
      }
      const causal = new core.Trainer({ ...FILL_CONFIG, objective: 'causal' }, TEXT);
      const copy = new core.Trainer({ objective: 'mlm', task: 'copy' });
      try {
        throwsKind(() => causal.fill('a_c'), 'config', 'objective', /a causal model cannot see the right side of a blank/);
        throwsKind(() => copy.fill('a_c'), 'state', undefined, /text task/);
      } finally {
        causal.delete();
        copy.delete();
      }
    });

    test('receptiveField: two layers of a window of 3 reach exactly 4 positions back', () => {
      const t = new core.Trainer({ seqLen: 12, residual: true, nLayers: 2, attention: 'window', window: 3, positions: 'rope' });
      try {
        const ids = Int32Array.from({ length: 12 }, (_, i) => (i * 5 + 1) % 64);
        const m = t.receptiveField(ids);
        assert.deepEqual([m.rows, m.cols], [12, 12]);
        for (let i = 0; i < 12; ++i)
          for (let j = 0; j < 12; ++j) {
            const v = m.data[i * 12 + j];
            if (j <= i && i - j <= 4) assert.ok(v > 0, `(${i}, ${j}) inside`);
            else assert.equal(v, 0, `(${i}, ${j}) outside`);
          }
      } finally {
        t.delete();
      }
    });

    test('differential: rows sum to 1 - lambda; the file holds diff_lambda; strided keys are exactly 0', () => {
      const t = new core.Trainer({ differential: true, attention: 'strided', window: 2, stride: 3, seqLen: 8 });
      try {
        const file = readSafetensors(t.exportWeights());
        const lambda = file['layers.0.diff_lambda'];
        assert.deepEqual(lambda.shape, [4]);
        assert.deepEqual([...lambda.data], [0.5, 0.5, 0.5, 0.5]);
        assert.deepEqual(file['layers.0.qkv_proj.weight'].shape, [5 * 32, 32]);
        const { weights } = t.attention(Int32Array.from([1, 2, 3, 4, 5, 6, 7, 8]));
        for (let h = 0; h < 4; ++h)
          for (let i = 0; i < 8; ++i) {
            const row = weights.subarray((h * 8 + i) * 8, (h * 8 + i + 1) * 8);
            assert.ok(Math.abs(row.reduce((s, v) => s + v, 0) - 0.5) < 1e-5);
            for (let j = 0; j < 8; ++j) {
              const visible = j <= i && (i - j < 2 || j % 3 === 0);
              if (!visible) assert.equal(row[j], 0, `head ${h} (${i}, ${j})`);
            }
          }
        const checks = t.selfTest(null);
        for (const c of checks) assert.equal(c.pass, c.id !== 'pytorch_reference', `${c.id}: ${c.detail}`);
      } finally {
        t.delete();
      }
    });
  });
}
