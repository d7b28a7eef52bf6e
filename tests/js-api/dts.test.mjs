// The declarations in web/src/core (attention-core.d.ts, hand-written, and the generated
// config-schema.ts and core-structs.ts) against real usage (tsc) and the real module: every
// method of each class exactly, and every result the calls return checked both ways and all the
// way down against the type TypeScript resolves for it (each declared key present unless
// optional, each returned key declared, each value of its declared kind). Every interface a call
// can return must have been checked against a real value.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import ts from 'typescript';

import { detectSimd } from '../../web/src/core/load-core.js';
import { loadCore, repoRoot, variants } from './core.mjs';

const program = ts.createProgram([`${repoRoot}web/src/core/attention-core.d.ts`], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, types: [] });
const checker = program.getTypeChecker();
const exported = new Map();
for (const s of checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(`${repoRoot}web/src/core/attention-core.d.ts`)))) {
  exported.set(s.name, s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
}

/** The declared type of an exported name. */
function declared(name) {
  assert.ok(exported.has(name), `${name} is exported by attention-core.d.ts`);
  return checker.getDeclaredTypeOfSymbol(exported.get(name));
}

/** The names of a type's members. */
const memberNames = (type) => checker.getPropertiesOfType(type).map((p) => p.name).sort();

/** The return type of method `name` of the exported interface `owner` (its last overload). */
function returnType(owner, name) {
  const prop = checker.getPropertyOfType(declared(owner), name);
  assert.ok(prop, `${owner}.${name} is declared`);
  const signatures = checker.getTypeOfSymbol(prop).getCallSignatures();
  return checker.getReturnTypeOfSignature(signatures.at(-1));
}

// The Embind classes: handles, not plain objects; their methods are checked one by one below.
const HANDLES = new Set(['Trainer', 'Decoder', 'Sampler', 'Draft', 'SpeculativeDecoder']);
const TYPED_ARRAYS = new Set(['Float32Array', 'Float64Array', 'Int32Array', 'Uint8Array']);

/** The names of the object types a value of type t can hold, all the way down (into `into`). */
function reachable(t, into, visited = new Set()) {
  if (visited.has(t)) return;
  visited.add(t);
  if (t.isUnion()) for (const m of t.types) reachable(m, into, visited);
  else if (checker.isArrayType(t)) reachable(checker.getTypeArguments(t)[0], into, visited);
  else if (t.flags & ts.TypeFlags.Object) {
    const name = t.aliasSymbol?.name ?? t.symbol?.name;
    if (TYPED_ARRAYS.has(name) || HANDLES.has(name)) return;
    into.add(name);
    for (const p of checker.getPropertiesOfType(t)) reachable(checker.getTypeOfSymbol(p), into, visited);
  }
}

/** Checks value against type t both ways; records each named object type it checked in seen. */
function check(value, t, path, seen) {
  const str = () => checker.typeToString(t);
  if (t.isUnion()) {
    if (value === null || value === undefined) {
      assert.ok(t.types.some((m) => m.flags & (value === null ? ts.TypeFlags.Null : ts.TypeFlags.Undefined)), `${path} is ${value}, declared ${str()}`);
      return;
    }
    const rest = t.types.filter((m) => !(m.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)));
    if (rest.every((m) => m.flags & ts.TypeFlags.BooleanLiteral)) return assert.equal(typeof value, 'boolean', `${path}: ${str()}`);
    if (rest.every((m) => m.flags & (ts.TypeFlags.StringLiteral | ts.TypeFlags.NumberLiteral))) {
      assert.ok(rest.some((m) => m.value === value), `${path} is ${JSON.stringify(value)}, declared ${str()}`);
      return;
    }
    const errors = [];
    for (const m of rest) {
      try {
        return check(value, m, path, seen);
      } catch (e) {
        errors.push(e.message);
      }
    }
    assert.fail(`${path} fits no member of ${str()}: ${errors.join('; ')}`);
  }
  if (t.flags & ts.TypeFlags.NumberLike) return assert.equal(typeof value, 'number', `${path}: ${str()}`);
  if (t.flags & ts.TypeFlags.BooleanLike) return assert.equal(typeof value, 'boolean', `${path}: ${str()}`);
  if (t.flags & ts.TypeFlags.StringLiteral) return assert.equal(value, t.value, `${path}: ${str()}`);
  if (t.flags & ts.TypeFlags.StringLike) return assert.equal(typeof value, 'string', `${path}: ${str()}`);
  if (checker.isArrayType(t)) {
    assert.ok(Array.isArray(value), `${path} is ${typeof value}, declared ${str()}`);
    value.forEach((v, i) => check(v, checker.getTypeArguments(t)[0], `${path}[${i}]`, seen));
    return;
  }
  const name = t.aliasSymbol?.name ?? t.symbol?.name;
  if (TYPED_ARRAYS.has(name)) return assert.equal(value?.constructor?.name, name, `${path}: ${str()}`);
  assert.ok(t.flags & ts.TypeFlags.Object, `${path}: ${str()} is not a type this check knows`);
  assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), `${path} is ${JSON.stringify(value)}, declared ${str()}`);
  seen.add(name);
  const props = checker.getPropertiesOfType(t);
  const names = new Set(props.map((p) => p.name));
  for (const k of Object.keys(value)) assert.ok(names.has(k), `${path}.${k} is returned but ${str()} does not declare it`);
  for (const p of props) {
    if (!(p.name in value)) {
      assert.ok(p.flags & ts.SymbolFlags.Optional, `${path}.${p.name} is declared by ${str()} but not returned`);
      continue;
    }
    check(value[p.name], checker.getTypeOfSymbol(p), `${path}.${p.name}`, seen);
  }
}

test('tsc --noEmit: tests/js-api/usage.ts type-checks against the declarations', () => {
  execFileSync(process.execPath, [`${repoRoot}node_modules/typescript/bin/tsc`, '--noEmit', '-p', `${repoRoot}tests/js-api`], { stdio: 'pipe' });
});

test('detectSimd() matches this engine (Node 20 has SIMD)', () => {
  assert.equal(detectSimd(), true);
});

/** An object's own methods, without the ones every Embind object has (the API does not promise them). */
function methods(obj) {
  const out = [];
  for (let p = Object.getPrototypeOf(obj); p !== Object.prototype; p = Object.getPrototypeOf(p))
    out.push(...Object.getOwnPropertyNames(p).filter((k) => k !== 'constructor' && typeof obj[k] === 'function'));
  return out.filter((k) => !['clone', 'deleteLater', 'isAliasOf', 'isDeleted'].includes(k)).sort();
}

for (const variant of variants) {
  describe(`declarations match the module (${variant})`, async () => {
    const core = await loadCore(variant);

    test('AttentionCore members exist with the declared kinds', () => {
      for (const name of memberNames(declared('AttentionCore'))) assert.ok(name in core, `core.${name}`);
      assert.equal(typeof core.simd, 'boolean');
      assert.equal(typeof core.relaxedSimd, 'boolean');
    });

    test('Trainer, Decoder, Sampler, SpeculativeDecoder and Draft: the declared methods are exactly the prototypes\'', () => {
      const t = new core.Trainer({ task: 'text', dModel: 8, nHeads: 2, seqLen: 8, batchSize: 1 });
      const d = core.bigramDraft(t);
      const g = new core.SpeculativeDecoder(t, d, { prompt: Int32Array.of(1), tokens: 4 });
      const dec = new core.Decoder(t, {});
      const s = new core.Sampler(1);
      try {
        assert.deepEqual(methods(t), memberNames(declared('Trainer')));
        assert.deepEqual(methods(g), memberNames(declared('SpeculativeDecoder')));
        assert.deepEqual(methods(d), memberNames(declared('Draft')));
        assert.deepEqual(methods(dec), memberNames(declared('Decoder')));
        assert.deepEqual(methods(s), memberNames(declared('Sampler')));
      } finally {
        for (const x of [s, dec, g, d, t]) x.delete();
      }
    });

    test('every result, both ways and all the way down, against its declared type; every result type checked', () => {
      const seen = new Set();
      const expect = (owner, method, value, label = method) => check(value, returnType(owner, method), `${owner}.${label}`, seen);
      const m = (rows, cols) => ({ data: Float32Array.from({ length: rows * cols }, (_, i) => Math.sin(i + 1)), rows, cols });

      // The module's own calls.
      const cfg = { vocabSize: 8, dModel: 8, nHeads: 2, seqLen: 6, batchSize: 2 };
      expect('AttentionCore', 'defaultConfig', core.defaultConfig());
      expect('AttentionCore', 'draftConfig', core.draftConfig(cfg));
      expect('AttentionCore', 'configSchema', core.configSchema());
      expect('AttentionCore', 'presets', core.presets());
      expect('AttentionCore', 'textCorpus', core.textCorpus(core.defaultCorpus(), 8));
      expect('AttentionCore', 'selfAttention', core.selfAttention({ X: m(3, 4), Wq: m(4, 2), Wk: m(4, 2), Wv: m(4, 3), causal: true }));
      expect('AttentionCore', 'multiHeadSelfAttention', core.multiHeadSelfAttention({ X: m(3, 4), Wq: [m(4, 2), m(4, 2)], Wk: [m(4, 2), m(4, 2)], Wv: [m(4, 2), m(4, 2)], Wo: m(4, 4), mask: new Uint8Array(9) }));
      expect('AttentionCore', 'addPositions', core.addPositions(m(3, 4)));
      expect('AttentionCore', 'lessonInputs', core.lessonInputs({ tokens: ['the', 'cat'], dModel: 4, dk: 2, dv: 2, heads: 2, seed: 1 }));
      const ids = Int32Array.of(1, 2, 3, 1);
      for (const config of [
        { ...cfg },
        { ...cfg, norm: 'rmsnorm', ffn: 'swiglu', positions: 'rope', kvHeads: 1 },
        { ...cfg, norm: 'layernorm', normPosition: 'post', ffn: 'gelu', positions: 'alibi' },
      ]) {
        expect('AttentionCore', 'transformerBlock', core.transformerBlock({ config, ids }), `transformerBlock(${JSON.stringify(config)})`);
        expect('AttentionCore', 'tiledAttention', core.tiledAttention({ config, ids, head: 1, tileSize: 2 }));
      }
      expect('AttentionCore', 'transformerBlock', core.transformerBlock({ config: cfg, x: m(3, 8) }), 'transformerBlock(x)');
      expect('AttentionCore', 'scalingDemo', core.scalingDemo(4, 3, 1));
      expect('AttentionCore', 'chinchillaLoss', core.chinchillaLoss(70e9, 1.4e12));
      expect('AttentionCore', 'computeOptimal', core.computeOptimal(1e20));
      expect('AttentionCore', 'computeOptimalClosedForm', core.computeOptimalClosedForm(1e20));
      expect('AttentionCore', 'fitScaling', core.fitScaling(Float64Array.of(1e3, 1e4, 1e5), Float64Array.of(3, 2.5, 2.3)));
      expect('AttentionCore', 'markovEntropyRate', core.markovEntropyRate(2, 8, 42));
      expect('AttentionCore', 'serialDepth', core.serialDepth(64, 1));
      expect('AttentionCore', 'serialScan', core.serialScan(Float64Array.of(1, 2, 3)));
      expect('AttentionCore', 'parallelScan', core.parallelScan(Float64Array.of(1, 2, 3)));
      expect('AttentionCore', 'softmaxSteps', core.softmaxSteps(Float32Array.of(1, 2, 3), true));
      expect('AttentionCore', 'nextTokenDistribution', core.nextTokenDistribution(Float32Array.of(1, 2, 3), {}));
      expect('AttentionCore', 'taskTargets', core.taskTargets('copy', ids));
      expect('AttentionCore', 'taskSample', core.taskSample('copy', 8, 6, 1));
      expect('AttentionCore', 'modelReport', core.modelReport(cfg));
      expect('AttentionCore', 'modelReport', core.modelReport({ ...cfg, nLayers: 2, residual: true, norm: 'rmsnorm', ffn: 'swiglu', ffnMult: 2 }), 'modelReport(block)');
      expect('AttentionCore', 'productProfile', core.productProfile(cfg, 1));
      expect('AttentionCore', 'opProfile', core.opProfile(cfg, 1));
      const induction = core.taskSample('induction', 16, 12, 3);
      expect('AttentionCore', 'inductionCorruption', core.inductionCorruption(induction, 16));

      // A Trainer's calls: plain (the inspect tools do not apply), with the residual stream and a
      // corrupted input (all of them do), and text models (causal and masked).
      const plain = new core.Trainer(cfg);
      const deep = new core.Trainer({ vocabSize: 16, dModel: 8, nHeads: 2, seqLen: 12, batchSize: 2, task: 'induction', residual: true, nLayers: 2, norm: 'layernorm', ffn: 'gelu' });
      const text = new core.Trainer({ task: 'text', dModel: 8, nHeads: 2, seqLen: 8, batchSize: 1 });
      const mlm = new core.Trainer({ task: 'text', objective: 'mlm', dModel: 8, nHeads: 2, seqLen: 8, batchSize: 1 });
      const draft = core.modelDraft(text);
      const g = new core.SpeculativeDecoder(text, draft, { prompt: Int32Array.of(1, 2), tokens: 6 });
      const dec = new core.Decoder(plain, {});
      try {
        plain.step(1);
        expect('Trainer', 'config', plain.config());
        expect('Trainer', 'attention', plain.attention(ids));
        expect('Trainer', 'evaluate', plain.evaluate(1));
        expect('Trainer', 'evaluateAt', plain.evaluateAt(5, 1));
        expect('Trainer', 'ablation', plain.ablation());
        expect('Trainer', 'attentionStats', plain.attentionStats());
        expect('Trainer', 'headScores', deep.headScores());
        expect('Trainer', 'rowBackward', plain.rowBackward(ids, 1, 2, 3));
        expect('Trainer', 'predictions', plain.predictions(ids, 2));
        expect('Trainer', 'selfTest', plain.selfTest(null));
        expect('Trainer', 'receptiveField', plain.receptiveField(ids));
        expect('Trainer', 'attentionMask', plain.attentionMask(4));
        expect('Trainer', 'lossHistory', plain.lossHistory());
        expect('Trainer', 'corpus', plain.corpus(), 'corpus() without text');
        expect('Trainer', 'inspect', plain.inspect({ ids }), 'inspect (tools that do not apply)');
        const corrupted = core.inductionCorruption(induction, 16).ids;
        expect('Trainer', 'inspect', deep.inspect({ ids: induction, corrupted }), 'inspect (patched)');
        expect('Trainer', 'corpus', text.corpus());
        expect('Trainer', 'evaluateText', text.evaluateText(1));
        expect('Trainer', 'sampleSequence', text.sampleSequence(1));
        expect('Trainer', 'fill', mlm.fill('Th_ c_t', { top: 2 }));
        expect('Trainer', 'exportWeights', plain.exportWeights());
        expect('Decoder', 'push', dec.push(1));
        expect('Decoder', 'attention', dec.attention());
        expect('Decoder', 'context', dec.context());
        expect('SpeculativeDecoder', 'next', g.next(2));
        expect('SpeculativeDecoder', 'stats', g.stats());
        g.delete();
        expect('AttentionCore', 'speculativeGenerate', core.speculativeGenerate(text, draft, { prompt: Int32Array.of(1, 2), tokens: 4 }));
        expect('AttentionCore', 'speculativeExactness', core.speculativeExactness(text, draft, { prompt: Int32Array.of(1), samples: 20 }));
      } finally {
        for (const x of [dec, draft, mlm, text, deep, plain]) x.delete();
      }

      // Every interface a call can return was checked against a real value.
      const owners = ['AttentionCore', 'Trainer', 'Decoder', 'Sampler', 'Draft', 'SpeculativeDecoder'];
      const results = new Set();
      for (const owner of owners)
        for (const p of checker.getPropertiesOfType(declared(owner)))
          for (const sig of checker.getTypeOfSymbol(p).getCallSignatures()) reachable(checker.getReturnTypeOfSignature(sig), results);
      const unchecked = [...results].filter((n) => !seen.has(n));
      assert.deepEqual(unchecked, [], `result types never checked against the module: ${unchecked.join(', ')}`);
      assert.ok(seen.has('TransformerBlockStages') && seen.has('Patching') && seen.has('RopeStage'));
    });
  });
}
