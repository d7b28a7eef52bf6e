// The JS API of looking inside: trainer.inspect and core.inductionCorruption. The math
// is tested natively and against PyTorch hooks (tests/cpp/test_inspect*.cpp); here: the binding
// carries every part, with its shapes, the identities that must hold, and its errors' kinds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, throwsKind, variants } from './core.mjs';

const INDUCTION = { task: 'induction', vocabSize: 16, dModel: 16, nHeads: 2, seqLen: 16, batchSize: 8, nLayers: 2, residual: true, seed: 3 };
const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol * (1 + Math.abs(b)), `${what}: ${a} vs ${b}`);

for (const variant of variants) {
  describe(`inspect (${variant})`, async () => {
    const core = await loadCore(variant);

    test('lens, attribution, patching and circuits: shapes, the parts add up, patching ends at 1', () => {
      const t = new core.Trainer({ ...INDUCTION, norm: 'rmsnorm', ffn: 'gelu' });
      try {
        t.step(30);
        const ids = t.sampleSequence(1);
        const T = ids.length, L = 2, H = 2, V = 16;
        const c = core.inductionCorruption(ids, V);
        assert.equal(c.ids.length, T);
        assert.notEqual(c.ids[c.changed], ids[c.changed]);
        const answers = core.taskTargets('induction', ids);
        const r = t.inspect({ ids, answers, corrupted: c.ids, position: c.position, answerClean: c.answerClean, answerCorrupt: c.answerCorrupt });

        assert.ok(r.lens.applies, r.lens.reason);
        assert.deepEqual([r.lens.topToken.rows, r.lens.topToken.cols, r.lens.topProb.rows, r.lens.answerProb.cols], [L + 1, T, L + 1, T]);
        // The lens's last row is the model's own prediction.
        const { logits } = t.attention(ids);
        for (let p = 0; p < T; ++p) {
          const row = logits.subarray(p * V, (p + 1) * V);
          const top = row.indexOf(Math.max(...row));
          assert.equal(r.lens.topToken.data[L * T + p], top, `top token at ${p}`);
        }

        const a = r.attribution;
        assert.ok(a.applies, a.reason);
        assert.deepEqual([a.heads.rows, a.heads.cols, a.ffn.rows, a.embed.length, a.total.length], [L * H, T, L, T, T]);
        for (let p = 0; p < T; ++p) {
          if (answers[p] < 0) continue;
          let sum = a.embed[p] + a.bias[p];
          for (let g = 0; g < L * H; ++g) sum += a.heads.data[g * T + p];
          for (let l = 0; l < L; ++l) sum += a.ffn.data[l * T + p];
          close(sum, a.total[p], 1e-4, `attribution at ${p}`);
        }

        const pt = r.patching;
        assert.equal(pt.position, c.position);
        assert.deepEqual([pt.resid.rows, pt.resid.cols, pt.heads.rows, pt.headsAll.length], [L + 1, T, L * H, L * H]);
        close(pt.resid.data[L * T + pt.position], 1, 1e-4, 'the whole final stream patched');

        assert.equal(r.circuits.length, L * H);
        for (const circuit of r.circuits) {
          assert.deepEqual([circuit.qk.rows, circuit.qk.cols, circuit.ov.rows, circuit.ov.cols], [V, V, V, V]);
          assert.ok(circuit.copying >= 0 && circuit.copying <= 1);
        }
        assert.equal(t.stepsDone(), 30, 'inspecting trains nothing');
      } finally {
        t.delete();
      }
    });

    test('without the residual stream the lens and the attribution say why; no corrupted input, no patching', () => {
      const t = new core.Trainer({ ...INDUCTION, nLayers: 2, residual: false });
      try {
        const r = t.inspect({ ids: t.sampleSequence(1) });
        assert.equal(r.lens.applies, false);
        assert.match(r.lens.reason, /residual/);
        assert.equal(r.attribution.applies, false);
        assert.equal(r.patching, null);
        assert.equal(r.answers.length, 16);
      } finally {
        t.delete();
      }
    });

    test('bad requests: errors of kind input, and the trainer keeps working', () => {
      const t = new core.Trainer(INDUCTION);
      try {
        const ids = t.sampleSequence(1);
        throwsKind(() => t.inspect({ ids, corrupted: ids.subarray(1) }), 'input');
        throwsKind(() => t.inspect({ ids: Int32Array.from(ids, (x, i) => (i === 3 ? 99 : x)) }), 'input');
        throwsKind(() => t.inspect({ ids, corrupted: core.inductionCorruption(ids, 16).ids, position: 99 }), 'input');
        throwsKind(() => t.inspect({ ids, layer: 1 }), 'input');
        throwsKind(() => t.inspect(ids), 'input');
        throwsKind(() => core.inductionCorruption(Int32Array.from([1, 2, 3, 4]), 16), 'input');
        t.step(1);
        assert.equal(t.stepsDone(), 1);
      } finally {
        t.delete();
      }
    });
  });
}
