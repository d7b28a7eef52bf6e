// The hand-written declarations in web/src/core against real usage (tsc) and the real module.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { detectSimd } from '../../web/src/core/load-core.js';
import { loadCore, repoRoot, variants } from './core.mjs';

// The hand-written declarations and the config's, which scripts/build-wasm writes from the schema.
const dts = readFileSync(`${repoRoot}web/src/core/attention-core.d.ts`, 'utf8') + readFileSync(`${repoRoot}web/src/core/config-schema.ts`, 'utf8');

// The member names of `export interface <name> { ... }` in the .d.ts.
function declaredMembers(name) {
  const body = dts.match(new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`));
  assert.ok(body, `interface ${name} in attention-core.d.ts or config-schema.ts`);
  const withoutComments = body[1].replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  return [...withoutComments.matchAll(/^\s*(?:readonly\s+)?(\w+)\??\s*[:(]/gm)].map((m) => m[1]).sort();
}

test('tsc --noEmit: tests/js-api/usage.ts type-checks against the declarations', () => {
  execFileSync(process.execPath, [`${repoRoot}node_modules/typescript/bin/tsc`, '--noEmit', '-p', `${repoRoot}tests/js-api`], { stdio: 'pipe' });
});

test('detectSimd() matches this engine (Node 20 has SIMD)', () => {
  assert.equal(detectSimd(), true);
});

for (const variant of variants) {
  describe(`declarations match the module (${variant})`, async () => {
    const core = await loadCore(variant);

    test('AttentionCore members exist with the declared kinds', () => {
      for (const name of declaredMembers('AttentionCore')) assert.ok(name in core, `core.${name}`);
      assert.equal(typeof core.simd, 'boolean');
    });

    test('Trainer: the declared methods are exactly the prototype\'s', () => {
      const t = new core.Trainer({});
      const actual = [];
      for (let p = Object.getPrototypeOf(t); p !== Object.prototype; p = Object.getPrototypeOf(p))
        actual.push(...Object.getOwnPropertyNames(p).filter((k) => k !== 'constructor' && typeof t[k] === 'function'));
      // Every Embind object has these beside delete(); the API does not promise them.
      const embindExtras = ['clone', 'deleteLater', 'isAliasOf', 'isDeleted'];
      t.delete();
      const ours = actual.filter((k) => !embindExtras.includes(k)).sort();
      assert.deepEqual(ours, declaredMembers('Trainer'));
    });

    test('SpeculativeDecoder and Draft: the declared methods are exactly the prototypes\'', () => {
      const methods = (obj) => {
        const out = [];
        for (let p = Object.getPrototypeOf(obj); p !== Object.prototype; p = Object.getPrototypeOf(p))
          out.push(...Object.getOwnPropertyNames(p).filter((k) => k !== 'constructor' && typeof obj[k] === 'function'));
        return out.filter((k) => !['clone', 'deleteLater', 'isAliasOf', 'isDeleted'].includes(k)).sort();
      };
      const t = new core.Trainer({ task: 'text', dModel: 8, nHeads: 2, seqLen: 8, batchSize: 1 });
      const d = core.bigramDraft(t);
      const g = new core.SpeculativeDecoder(t, d, { prompt: Int32Array.of(1), tokens: 4 });
      try {
        assert.deepEqual(methods(g), declaredMembers('SpeculativeDecoder'));
        assert.deepEqual(methods(d), declaredMembers('Draft'));
        assert.deepEqual(Object.keys(g.next(1)).sort(), declaredMembers('SpeculativeChunk'));
        assert.deepEqual(Object.keys(g.stats()).sort(), declaredMembers('SpeculativeStats'));
        const r = core.speculativeGenerate(t, d, { prompt: Int32Array.of(1), tokens: 4 });
        assert.deepEqual(Object.keys(r).sort(), declaredMembers('SpeculativeResult'));
        const e = core.speculativeExactness(t, d, { prompt: Int32Array.of(1), samples: 10 });
        assert.deepEqual(Object.keys(e).sort(), declaredMembers('Exactness'));
        assert.deepEqual(Object.keys(e.first).sort(), declaredMembers('ExactnessPosition'));
      } finally {
        g.delete();
        d.delete();
        t.delete();
      }
      const trace = core.tiledAttention({ config: { dModel: 8, nHeads: 2 }, ids: Int32Array.of(1, 2), head: 0, tileSize: 1 });
      assert.deepEqual(Object.keys(trace).sort(), declaredMembers('TiledAttentionTrace'));
    });

    test('AttentionResult, SelfAttentionStages and ResolvedTrainerConfig keys are what the module returns', () => {
      const t = new core.Trainer({ vocabSize: 8, dModel: 4, nHeads: 2, seqLen: 3, batchSize: 1 });
      try {
        assert.deepEqual(Object.keys(t.attention(Int32Array.from([1]))).sort(), declaredMembers('AttentionResult'));
        assert.deepEqual(Object.keys(t.config()).sort(), declaredMembers('TrainerConfig'));
        assert.deepEqual(Object.keys(t.headScores()).sort(), declaredMembers('HeadScores'));
      } finally {
        t.delete();
      }
      const m = { data: new Float32Array(1), rows: 1, cols: 1 };
      const s = core.selfAttention({ X: m, Wq: m, Wk: m, Wv: m });
      assert.deepEqual(Object.keys(s).sort(), declaredMembers('SelfAttentionStages'));
      assert.deepEqual(Object.keys(s.Q).sort(), declaredMembers('Matrix'));
      const b = core.transformerBlock({ config: { vocabSize: 4, dModel: 4, nHeads: 2, seqLen: 2 }, ids: Int32Array.from([1]) });
      assert.deepEqual(Object.keys(b).sort(), declaredMembers('TransformerBlockStages'));
    });
  });
}
