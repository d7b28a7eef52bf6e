// Depth through the JS API: the config keys nLayers and residual, attention() weights
// (L,H,T,T) layer-major, the ablation over L*H global heads (g = l * nHeads + h), the statistics
// and the one-row backward per global head, export/import of deeper models, and the self-test on
// every layer against the committed PyTorch case of 2 layers with the residual stream. The math
// is tested natively (tests/cpp); here the bindings carry it and agree with the rest of the API.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { loadCore, repoRoot, variants } from './core.mjs';
import { readSafetensors } from './safetensors.mjs';

const DEEP = { vocabSize: 16, dModel: 8, nHeads: 2, seqLen: 6, batchSize: 4, nLayers: 2, residual: true };

const referenceCase = (name) => {
  const file = (kind) => new Uint8Array(readFileSync(`${repoRoot}tests/reference/data/${name}.${kind}.safetensors`));
  return { weights: file('weights'), input: file('input'), expected: file('expected') };
};

/** The JSON header of a safetensors file (with __metadata__). */
function header(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
}

function caught(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  assert.fail('no error');
}

/** Runs body with a new Trainer of config, deleting it afterwards. */
function withTrainer(core, config, body) {
  const t = new core.Trainer(config);
  try {
    return body(t);
  } finally {
    t.delete();
  }
}

for (const variant of variants) {
  describe(`depth (${variant})`, async () => {
    const core = await loadCore(variant);

    test('config: nLayers and residual default to the curriculum\'s model and round-trip', () => {
      const d = core.defaultConfig();
      assert.equal(d.nLayers, 1);
      assert.equal(d.residual, false);
      withTrainer(core, DEEP, (t) => {
        const c = t.config();
        assert.equal(c.nLayers, 2);
        assert.equal(c.residual, true);
        // The resolved config builds the same model: same weights, byte for byte.
        withTrainer(core, c, (u) => assert.deepEqual(u.exportWeights(), t.exportWeights()));
      });
      // nLayers 1 is the default model, whatever else is set.
      withTrainer(core, { ...DEEP, nLayers: 1, residual: false }, (a) => {
        const { nLayers, residual, ...rest } = DEEP;
        withTrainer(core, rest, (b) => assert.deepEqual(a.exportWeights(), b.exportWeights()));
      });
    });

    test('config: a bad nLayers or residual is kind config with its key', () => {
      for (const [value, re] of [
        [0, /^nLayers \(0\) must be in \[1, 4\]/],
        [5, /^nLayers \(5\) must be in \[1, 4\]/],
        [2.5, /^nLayers \(2.5\) must be an integer/],
        ['2', /^nLayers must be a number, got string/],
      ]) {
        const e = caught(() => new core.Trainer({ ...DEEP, nLayers: value }));
        assert.match(e.message, re);
        assert.equal(e.kind, 'config');
        assert.equal(e.key, 'nLayers');
      }
      for (const value of ['yes', 1, null]) {
        const e = caught(() => new core.Trainer({ ...DEEP, residual: value }));
        assert.match(e.message, /^residual must be a boolean/);
        assert.equal(e.kind, 'config');
        assert.equal(e.key, 'residual');
      }
    });

    test('attention(): weights are (L,H,T,T) layer-major, causal, rows summing to 1', () => {
      for (const nLayers of [1, 2, 3]) {
        withTrainer(core, { ...DEEP, nLayers }, (t) => {
          t.step(5);
          const ids = Int32Array.from([3, 1, 4, 1, 5]);
          const T = ids.length, H = DEEP.nHeads;
          const r = t.attention(ids);
          assert.equal(r.nLayers, nLayers);
          assert.equal(r.nHeads, H);
          assert.equal(r.weights.length, nLayers * H * T * T);
          for (let row = 0; row < nLayers * H * T; ++row) {
            const i = row % T;
            let sum = 0;
            for (let j = 0; j < T; ++j) {
              sum += r.weights[row * T + j];
              if (j > i) assert.equal(r.weights[row * T + j], 0, `row ${row} key ${j}`);
            }
            assert.ok(Math.abs(sum - 1) < 1e-5, `row ${row} sums to ${sum}`);
          }
        });
      }
      // One layer: the same result, key for key, as a config without the new keys.
      const ids = Int32Array.from([7, 2, 9]);
      const { nLayers, residual, ...plain } = DEEP;
      const a = withTrainer(core, plain, (t) => t.attention(ids));
      const b = withTrainer(core, { ...plain, nLayers: 1, residual: false }, (t) => t.attention(ids));
      assert.deepEqual(a, b);
      assert.equal(a.nLayers, 1);
    });

    test('setAblation: L*H heads, global index; a head of layer 1 off leaves layer 0 alone', () => {
      withTrainer(core, DEEP, (t) => {
        t.step(30);
        const ids = Int32Array.from([1, 2, 3, 4, 5, 6]);
        const T = 6, H = 2, block = H * T * T;
        const base = t.attention(ids);
        assert.deepEqual(t.ablation().headsOff, [false, false, false, false]);
        t.setAblation({ headsOff: [false, false, false, true] });  // layer 1, head 1
        assert.deepEqual(t.ablation().headsOff, [false, false, false, true]);
        const off = t.attention(ids);
        // Its weights are still computed, and nothing before its output changes.
        assert.deepEqual(off.weights, base.weights);
        assert.notDeepEqual(off.logits, base.logits);
        t.setAblation({ headsOff: [false, true, false, false] });  // layer 0, head 1
        const off0 = t.attention(ids);
        assert.deepEqual(off0.weights.subarray(0, block), base.weights.subarray(0, block));
        assert.notDeepEqual(off0.weights.subarray(block), base.weights.subarray(block));
        for (const [bad, re] of [
          [{ headsOff: [true, false] }, /^headsOff has 2 entries, expected one per head \(2 layers x 2 heads = 4, index layer \* 2 \+ head\)/],
          [{ headsFrozen: [true, false, false, false, false] }, /^headsFrozen has 5 entries/],
        ]) {
          const e = caught(() => t.setAblation(bad));
          assert.match(e.message, re);
          assert.equal(e.kind, 'input');
        }
        t.setAblation({ mask: 'none' });  // every layer
        const none = t.attention(ids);
        assert.ok(none.weights[block + 1] > 0, 'layer 1: query 0 sees key 1 without a mask');
        assert.ok(none.weights[1] > 0, 'layer 0: query 0 sees key 1 without a mask');
      });
    });

    test('setAblation: a frozen head of layer 1 keeps its slices through training', () => {
      withTrainer(core, DEEP, (t) => {
        t.setAblation({ headsFrozen: [false, false, true, false] });  // layer 1, head 0
        const before = readSafetensors(t.exportWeights());
        t.step(10);
        const after = readSafetensors(t.exportWeights());
        const D = DEEP.dModel, Dh = D / DEEP.nHeads;
        const qkv0 = before['layers.1.qkv_proj.weight'].data, qkv1 = after['layers.1.qkv_proj.weight'].data;
        for (let part = 0; part < 3; ++part)
          for (let r = part * D; r < part * D + Dh; ++r)
            for (let c = 0; c < D; ++c) assert.equal(qkv1[r * D + c], qkv0[r * D + c], `qkv row ${r}`);
        assert.notDeepEqual(after['layers.0.qkv_proj.weight'].data, before['layers.0.qkv_proj.weight'].data);
      });
    });

    test('attentionStats has L*H entries; rowBackward takes the global head', () => {
      withTrainer(core, { ...DEEP, nLayers: 3, residual: false }, (t) => {
        t.step(10);
        const s = t.attentionStats();
        for (const key of ['entropy', 'maxWeight', 'answerMass']) assert.equal(s[key].length, 6, key);
        const ids = Int32Array.from([3, 14, 15, 9, 2]);
        const T = ids.length, H = 2, query = 3;
        const { weights, logits, vocabSize: V } = t.attention(ids);
        const row = logits.subarray(query * V, (query + 1) * V);
        const max = Math.max(...row);
        const lse = Math.log(row.reduce((acc, x) => acc + Math.exp(x - max), 0)) + max;
        for (let g = 0; g < 3 * H; ++g) {
          const r = t.rowBackward(ids, g, query, 9);
          assert.ok(Math.abs(r.loss - (lse - row[9])) < 1e-4);
          const want = weights.subarray((g * T + query) * T, (g * T + query + 1) * T);
          for (let j = 0; j < T; ++j) assert.ok(Math.abs(r.weights[j] - want[j]) < 1e-6, `head ${g} key ${j}`);
        }
        const e = caught(() => t.rowBackward(ids, 6, 0, 1));
        assert.match(e.message, /^head \(6\) must be in \[0, 5\]/);
        assert.equal(e.kind, 'input');
      });
    });

    test('exportWeights: layers.<l>.* names and the depth in __metadata__; import checks it', () => {
      withTrainer(core, DEEP, (t) => {
        t.step(3);
        const bytes = t.exportWeights();
        const h = header(bytes);
        assert.equal(h.__metadata__.n_layers, '2');
        assert.equal(h.__metadata__.residual, 'true');
        const names = Object.keys(h).filter((k) => k !== '__metadata__').sort();
        assert.deepEqual(names, [
          'layers.0.out_proj.bias', 'layers.0.out_proj.weight', 'layers.0.qkv_proj.bias', 'layers.0.qkv_proj.weight',
          'layers.1.out_proj.bias', 'layers.1.out_proj.weight', 'layers.1.qkv_proj.bias', 'layers.1.qkv_proj.weight',
          'lm_head.bias', 'lm_head.weight', 'token_emb.embedding.weight',
        ]);
        // Into a Trainer of the same depth: the same model.
        withTrainer(core, DEEP, (u) => {
          u.importWeights(bytes);
          assert.deepEqual(u.exportWeights(), bytes);
          const ids = Int32Array.from([1, 2, 3]);
          assert.deepEqual(u.attention(ids), t.attention(ids));
        });
        // Into another depth or residual: kind format naming both values; nothing changes.
        for (const [config, re] of [
          [{ ...DEEP, nLayers: 1 }, /the file has n_layers 2 but the model has n_layers 1/],
          [{ ...DEEP, nLayers: 3 }, /the file has n_layers 2 but the model has n_layers 3/],
          [{ ...DEEP, residual: false }, /the file has residual true but the model has residual false/],
        ]) {
          withTrainer(core, config, (u) => {
            const own = u.exportWeights();
            const e = caught(() => u.importWeights(bytes));
            assert.match(e.message, re);
            assert.equal(e.kind, 'format');
            assert.deepEqual(u.exportWeights(), own);
          });
        }
        // A 1-layer file (no n_layers in it) into the 2-layer Trainer.
        const { nLayers, residual, ...plain } = DEEP;
        const one = withTrainer(core, plain, (u) => u.exportWeights());
        assert.equal(header(one).__metadata__.n_layers, undefined);
        const e = caught(() => t.importWeights(one));
        assert.match(e.message, /the file has n_layers 1 \(absent from __metadata__, which means 1\) but the model has n_layers 2/);
        assert.equal(e.kind, 'format');
      });
    });

    test('selfTest: every check passes on a deep model, with the 2-layer PyTorch case', () => {
      withTrainer(core, { nLayers: 2, residual: true }, (t) => {
        t.step(20);
        const results = t.selfTest(referenceCase('layers2_residual'));
        for (const r of results) assert.equal(r.pass, true, `${r.id}: ${r.detail}`);
        const byId = Object.fromEntries(results.map((r) => [r.id, r]));
        assert.match(byId.rows_and_mask.detail, /all 2 layers/);
        assert.match(byId.fused_qkv.detail, /layer 1: /);
        assert.match(byId.gradcheck.detail, / L=2 with residual/);
        assert.match(byId.pytorch_reference.detail, /L=2 with residual/);
        // The 3-layer PyTorch case too (the reference case builds its own model).
        assert.equal(t.selfTest(referenceCase('layers3')).at(-1).pass, true);
      });
    });
  });
}
