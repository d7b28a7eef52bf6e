// The key table (web/src/settings/settings.ts) under node: every row complete, every public name unique,
// old names resolved; checkField's bounds, clamping and messages; the element's attribute map and
// the training view's controls derived from it. What is derived is checked against the contract
// written out here (the defaults a link falls back to, the attributes, the controls), never
// against another list built from the same table.
import { describe, expect, test } from 'vitest';
import { ATTRIBUTES, CONFIG_ATTRIBUTES, ELEMENT_ATTRIBUTES, OBSERVED_ATTRIBUTES, attributeMap, keyOfAttribute, stateFromAttributes, stateFromPatch } from '../../web/src/element/attributes';
import { ABLATION_KEYS, CONFIG_KEYS, DEFAULTS, SETTING_LIST, SETTINGS, checkField, settingByHash, type Setting } from '../../web/src/settings/settings';
import { CONTROLS } from '../../web/src/ui/train-controls';
import { withAliases } from './aliases';

const FIELDS: (keyof Setting)[] = ['key', 'group', 'core', 'cpp', 'hash', 'attribute', 'cli', 'label', 'type', 'default', 'range', 'exclusiveMin', 'values', 'step', 'clean', 'aliases'];

describe('the key table', () => {
  test('every setting has every field, of the right kind for its type', () => {
    for (const s of SETTING_LIST) {
      for (const f of FIELDS) expect(s, `${s.key}.${f}`).toHaveProperty(f);
      expect(s.label, s.key).toMatch(/\S/);
      expect(s.hash, s.key).toMatch(/^[a-z]+(-[a-z]+)*$/);
      if (s.attribute !== null) expect(s.attribute, s.key).toMatch(/^[a-z]+(-[a-z]+)*$/);
      if (s.cli !== null) expect(s.cli.flag, s.key).toMatch(/^--[a-z]+(-[a-z]+)*$/);
      expect(Array.isArray(s.aliases.hash) && Array.isArray(s.aliases.attribute), s.key).toBe(true);
      switch (s.type) {
        case 'int':
        case 'float':
          expect(s.range, s.key).not.toBeNull();
          expect(s.range![0], s.key).toBeLessThan(s.range![1]);
          expect(s.step, s.key).not.toBeNull();
          expect(typeof s.default, s.key).toBe('number');
          break;
        case 'enum':
          expect(s.values, s.key).not.toBeNull();
          expect(s.values, s.key).toContain(s.default);
          break;
        case 'bool':
          expect(typeof s.default, s.key).toBe('boolean');
          break;
        case 'text':
          expect(s.clean, s.key).not.toBeNull();
          expect(typeof s.default, s.key).toBe('string');
          break;
      }
    }
  });

  test('the defaults of today, exactly (a link or a page that leaves a setting out gets these)', () => {
    expect(DEFAULTS).toEqual({
      view: 'train', vocabSize: 64, dModel: 32, nHeads: 4, seqLen: 12, batchSize: 16, lr: 0.005, seed: 42, attnDropout: 0, outDropout: 0,
      task: 'repeat', nLayers: 1, residual: false,
      kvHeads: 0, positions: 'sinusoidal', maxSeqLen: 0, norm: 'none', normPosition: 'pre', ffn: 'none', ffnMult: 4, embInitStd: 0.02,
      sample: '', sampleSeed: 1, logY: true, smooth: false, epochMeans: false, panel: 'predictions',
      sentence: 'The cat sat on the mat', dk: 4, dv: 4, lessonMask: 'none', window: 2, lessonHeads: 1, lessonPositions: false, secondSentence: '', stage: 0,
      scaleDk: 16, logits: '100 200 300', blendRow: 0, mask: 'causal', scaleScores: true, headsOff: '', headsFrozen: '',
    });
  });

  test('each default passes its own validation unchanged', () => {
    for (const s of SETTING_LIST) {
      const raw = typeof s.default === 'boolean' ? (s.default ? '1' : '0') : String(s.default);
      expect(checkField(s.key, raw), s.key).toEqual({ value: s.default });
    }
  });

  test('names are unique: hash keys (with old ones), attributes (with old ones and the element\'s own), JS, core and C++ names, CLI flags', () => {
    const unique = (names: string[]) => expect(new Set(names).size, names.join(' ')).toBe(names.length);
    unique(SETTING_LIST.flatMap((s) => [s.hash, ...s.aliases.hash]));
    unique([...SETTING_LIST.flatMap((s) => (s.attribute === null ? [] : [s.attribute, ...s.aliases.attribute])), ...ELEMENT_ATTRIBUTES]);
    unique(SETTING_LIST.map((s) => s.key));
    unique(SETTING_LIST.flatMap((s) => (s.core === null ? [] : [s.core])));
    unique(SETTING_LIST.flatMap((s) => (s.cpp === null ? [] : [s.cpp])));
    unique(SETTING_LIST.flatMap((s) => (s.cli === null ? [] : [s.cli.flag])));
    // With the test's old names too.
    unique(withAliases().flatMap((s) => [s.hash, ...s.aliases.hash]));
  });

  test('the public names of today, exactly (contracts: old links and pages use them)', () => {
    const names = Object.fromEntries(SETTING_LIST.map((s) => [s.key, [s.hash, s.attribute, s.cli?.flag ?? null, s.core, s.cpp]]));
    expect(names).toEqual({
      view: ['view', 'view', null, null, null],
      vocabSize: ['vocab-size', 'vocab-size', '--vocab-size', 'vocabSize', 'vocab_size'],
      dModel: ['d-model', 'd-model', '--d-model', 'dModel', 'd_model'],
      nHeads: ['heads', 'heads', '--heads', 'nHeads', 'n_heads'],
      seqLen: ['seq-len', 'seq-len', '--seq-len', 'seqLen', 'seq_len'],
      batchSize: ['batch', 'batch', '--batch', 'batchSize', 'batch_size'],
      lr: ['lr', 'lr', '--lr', 'lr', 'lr'],
      seed: ['seed', 'seed', '--seed', 'seed', 'seed'],
      attnDropout: ['attn-dropout', null, '--attn-dropout', 'attnDropout', 'attn_dropout'],
      outDropout: ['out-dropout', null, '--out-dropout', 'outDropout', 'out_dropout'],
      task: ['task', 'task', '--task', 'task', 'task'],
      nLayers: ['layers', 'layers', '--layers', 'nLayers', 'n_layers'],
      residual: ['residual', 'residual', '--residual', 'residual', 'residual'],
      kvHeads: ['kv-heads', 'kv-heads', '--kv-heads', 'kvHeads', 'kv_heads'],
      positions: ['positions', 'positions', '--positions', 'positions', 'positions'],
      maxSeqLen: ['max-seq-len', 'max-seq-len', '--max-seq-len', 'maxSeqLen', 'max_seq_len'],
      norm: ['norm', 'norm', '--norm', 'norm', 'norm'],
      normPosition: ['norm-position', 'norm-position', '--norm-position', 'normPosition', 'norm_position'],
      ffn: ['ffn', 'ffn', '--ffn', 'ffn', 'ffn'],
      ffnMult: ['ffn-mult', 'ffn-mult', '--ffn-mult', 'ffnMult', 'ffn_mult'],
      embInitStd: ['emb-init-std', 'emb-init-std', '--emb-init-std', 'embInitStd', 'emb_init_std'],
      sample: ['sample', 'sample', null, null, null],
      sampleSeed: ['sample-seed', null, null, null, null],
      logY: ['logy', null, null, null, null],
      smooth: ['smooth', null, null, null, null],
      epochMeans: ['epochs', null, null, null, null],
      panel: ['panel', 'panel', null, null, null],
      sentence: ['sentence', null, null, null, null],
      dk: ['dk', null, null, null, null],
      dv: ['dv', null, null, null, null],
      lessonMask: ['lesson-mask', null, null, null, null],
      window: ['window', null, null, null, null],
      lessonHeads: ['lesson-heads', null, null, null, null],
      lessonPositions: ['lesson-positions', null, null, null, null],
      secondSentence: ['second-sentence', null, null, null, null],
      stage: ['stage', null, null, null, null],
      scaleDk: ['scale-dk', null, null, null, null],
      logits: ['logits', null, null, null, null],
      blendRow: ['blend-row', null, null, null, null],
      mask: ['mask', null, '--mask', 'mask', 'mask'],
      scaleScores: ['scale-scores', null, '--no-scale-scores', 'scaleScores', 'scale_scores'],
      headsOff: ['heads-off', null, '--heads-off', 'headsOff', 'heads_off'],
      headsFrozen: ['heads-frozen', null, '--heads-frozen', 'headsFrozen', 'heads_frozen'],
    });
  });

  test('one name per concept: the hash key, attribute and flag are the kebab-case of the JS name', () => {
    const kebab = (js: string) => js.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const snake = (js: string) => js.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    // The names kept as they were: short hash keys of the page's own settings, and the core's
    // nHeads/batchSize (hash, attribute and flag heads, batch), logY and epochMeans; nLayers
    // (layers, as heads) and residual, a switch that turns the stream on (--residual).
    const kept = ['view', 'nHeads', 'batchSize', 'logY', 'epochMeans', 'nLayers', 'residual'];
    for (const s of SETTING_LIST) {
      if (kept.includes(s.key)) continue;
      expect(s.hash, s.key).toBe(kebab(s.key));
      if (s.attribute !== null) expect(s.attribute, s.key).toBe(s.hash);
      if (s.core !== null) expect(s.core, s.key).toBe(s.key);
      if (s.cpp !== null) expect(s.cpp, s.key).toBe(snake(s.key));
      if (s.cli !== null && 'value' in s.cli) expect(s.cli.flag, s.key).toBe(`--${s.hash}`);
      if (s.cli !== null && 'sets' in s.cli) expect(s.cli.flag, s.key).toBe(`--no-${s.hash}`);
    }
  });

  test('the old names, exactly: hash keys and attn flags that still work', () => {
    const old = Object.fromEntries(SETTING_LIST.filter((s) => s.aliases.hash.length || s.aliases.attribute.length || s.cli?.alias).map((s) => [s.key, [s.aliases.hash, s.aliases.attribute, s.cli?.alias ?? null]]));
    expect(old).toEqual({
      vocabSize: [['vocab'], [], '--vocab'],
      dModel: [['dmodel'], [], null],
      seqLen: [['seqlen'], [], null],
      attnDropout: [['attndrop'], [], null],
      outDropout: [['outdrop'], [], null],
      scaleScores: [['scale'], [], '--no-scale'],
      headsOff: [['off'], [], null],
      headsFrozen: [['frozen'], [], '--freeze'],
      lessonMask: [['causal'], [], null],
    });
  });

  test('the config keys are the core\'s JS config keys; the ablation keys the core\'s Ablation', () => {
    expect(CONFIG_KEYS).toEqual(['vocabSize', 'dModel', 'nHeads', 'seqLen', 'batchSize', 'lr', 'seed', 'attnDropout', 'outDropout', 'task', 'nLayers', 'residual',
      'kvHeads', 'positions', 'maxSeqLen', 'norm', 'normPosition', 'ffn', 'ffnMult', 'embInitStd',
    ]);
    for (const k of CONFIG_KEYS) expect(SETTINGS[k].core).toBe(k);
    expect(ABLATION_KEYS.map((k) => SETTINGS[k].core).sort()).toEqual(['headsFrozen', 'headsOff', 'mask', 'scaleScores']);
  });

  test('old names resolve to their setting: hash keys, attributes', () => {
    const table = withAliases();
    expect(settingByHash('off')?.key).toBe('headsOff');
    expect(settingByHash('nope')).toBeUndefined();
    expect(attributeMap(table, true)['n-heads']).toBe('nHeads');
    expect(attributeMap(table, false)['n-heads']).toBeUndefined();
    const { state, problems } = stateFromAttributes(DEFAULTS, (a) => (a === 'n-heads' ? '2' : null), table);
    expect(problems).toEqual([]);
    expect(state.nHeads).toBe(2);
    // The attribute itself wins over its old name.
    expect(stateFromAttributes(DEFAULTS, (a) => (a === 'n-heads' ? '2' : a === 'heads' ? '8' : null), table).state.nHeads).toBe(8);
  });
});

describe('validation', () => {
  test('numbers: bounds, clamping, whole numbers, each with its message', () => {
    expect(checkField('vocabSize', '99999')).toEqual({ value: 512, correction: { key: 'vocabSize', message: 'vocab: 99999 is above the maximum 512; using 512' } });
    expect(checkField('batchSize', '0')).toEqual({ value: 1, correction: { key: 'batchSize', message: 'batch: 0 is below the minimum 1; using 1' } });
    expect(checkField('seqLen', 'abc')).toEqual({ value: 12, correction: { key: 'seqLen', message: 'seq_len: "abc" is not a number; using 12' } });
    expect(checkField('seqLen', '')).toMatchObject({ value: 12, correction: { message: 'seq_len: "" is not a number; using 12' } });
    expect(checkField('seed', '7.6')).toEqual({ value: 8, correction: { key: 'seed', message: 'seed: 7.6 is not a whole number; using 8' } });
    expect(checkField('nHeads', '16.7')).toEqual({ value: 16, correction: { key: 'nHeads', message: 'heads: 16.7 is above the maximum 16; using 16' } });
    expect(checkField('attnDropout', '2')).toEqual({ value: 0.9, correction: { key: 'attnDropout', message: 'attention dropout: 2 is above the maximum 0.9; using 0.9' } });
    expect(checkField('dk', '1e9')).toMatchObject({ value: 16, correction: { message: 'dk: 1000000000 is above the maximum 16; using 16' } });
    expect(checkField('seed', String(2 ** 32 - 1))).toEqual({ value: 2 ** 32 - 1 });
    expect(checkField('dModel', ' 16 ')).toEqual({ value: 16 });
  });

  test('lr: (0, 10], the lower bound excluded', () => {
    expect(checkField('lr', '0.01')).toEqual({ value: 0.01 });
    expect(checkField('lr', '10')).toEqual({ value: 10 });
    expect(checkField('lr', '-1')).toEqual({ value: 0.005, correction: { key: 'lr', message: 'learning rate: -1 is not in (0, 10]; using 0.005' } });
    expect(checkField('lr', '0')).toMatchObject({ value: 0.005, correction: { message: 'learning rate: 0 is not in (0, 10]; using 0.005' } });
    expect(checkField('lr', '11')).toMatchObject({ value: 10, correction: { message: 'learning rate: 11 is above the maximum 10; using 10' } });
  });

  test('booleans and choices', () => {
    expect(checkField('logY', 'true')).toEqual({ value: true });
    expect(checkField('logY', '0')).toEqual({ value: false });
    expect(checkField('logY', 'maybe')).toEqual({ value: true, correction: { key: 'logY', message: 'log scale: "maybe" is not 0 or 1; using 1' } });
    expect(checkField('view', 'evil')).toEqual({ value: 'train', correction: { key: 'view', message: 'view: "evil" is not one of train, lesson, block; using train' } });
    expect(checkField('task', 'sort')).toEqual({ value: 'sort' });
    expect(checkField('mask', 'inverted')).toEqual({ value: 'inverted' });
    expect(checkField('view', '<img src=x onerror=alert(1)>').correction!.message).toBe('view: "<img src=x onerror=alert…" is not one of train, lesson, block; using train');
  });

  test('text: sentence, sample, head lists', () => {
    expect(checkField('sentence', 'a '.repeat(20)).correction!.message).toBe('sentence: more than 16 tokens; keeping the first 16');
    expect(checkField('sentence', '   ')).toEqual({ value: 'The cat sat on the mat', correction: { key: 'sentence', message: 'sentence: empty; using "The cat sat on the mat"' } });
    expect(checkField('sentence', 'a\u0000b')).toEqual({ value: 'a b', correction: { key: 'sentence', message: 'sentence: shortened or cleaned' } });
    expect(checkField('sample', '1'.repeat(2000))).toMatchObject({ value: '1'.repeat(1024), correction: { message: 'sample sequence: longer than 1024 characters; cut' } });
    expect(checkField('headsOff', '3, 1 ,3')).toEqual({ value: '1,3' });
    // Head numbers are global over up to 4 layers of 16 heads; the run's own count is checked later.
    expect(checkField('headsFrozen', '2,99,x')).toEqual({ value: '2', correction: { key: 'headsFrozen', message: 'frozen heads: "99" is not a head number in [1, 64]; "x" is not a head number in [1, 64]' } });
  });

  test('the element\'s attributes and `state` are checked by the same rules, named their way', () => {
    const { state, problems } = stateFromAttributes(DEFAULTS, (a) => ({ 'd-model': '33', heads: 'abc', 'seq-len': '999' })[a] ?? null);
    expect([state.dModel, state.nHeads, state.seqLen]).toEqual([34, 2, 128]);
    expect(problems.map((p) => p.message).sort()).toEqual([
      'd-model: 33 must be even (sinusoidal positions); using 34',
      'heads: "abc" is not a number; using 4',
      'heads: 4 does not divide d_model 34; using 2',
      'seq-len: 999 is above the maximum 128; using 128',
    ]);
    expect(problems.map((p) => p.attribute).sort()).toEqual(['d-model', 'heads', 'heads', 'seq-len']);
    const patched = stateFromPatch(DEFAULTS, { seed: 'x', headsOff: '2', nope: 1 });
    expect(patched.state.seed).toBe(42);
    expect(patched.state.headsOff).toBe('2');
    expect(patched.problems.map((p) => p.message)).toEqual(['state: "nope" is not a setting with a string, number or boolean value; ignored', 'state.seed: "x" is not a number; using 42']);
  });
});

describe('derived from the table', () => {
  test('the element\'s attributes: the settings\' own, then the element-only ones', () => {
    expect(CONFIG_ATTRIBUTES).toEqual({
      view: 'view', panel: 'panel', 'vocab-size': 'vocabSize', 'd-model': 'dModel', heads: 'nHeads', 'seq-len': 'seqLen', batch: 'batchSize', lr: 'lr', seed: 'seed', task: 'task',
      layers: 'nLayers', residual: 'residual',
      'kv-heads': 'kvHeads', positions: 'positions', 'max-seq-len': 'maxSeqLen', norm: 'norm', 'norm-position': 'normPosition', ffn: 'ffn', 'ffn-mult': 'ffnMult', 'emb-init-std': 'embInitStd',
      sample: 'sample',
    });
    expect([...ATTRIBUTES].sort()).toEqual([
      'autoplay', 'batch', 'd-model', 'emb-init-std', 'ffn', 'ffn-mult', 'heads', 'height', 'hide', 'kv-heads', 'layers', 'lr', 'max-seq-len', 'norm', 'norm-position', 'panel', 'positions',
      'residual', 'sample', 'seed', 'seq-len', 'solved-at', 'task', 'theme', 'view', 'vocab-size',
    ]);
    // The shipped table has no old attribute names, so the element watches exactly these.
    expect([...OBSERVED_ATTRIBUTES].sort()).toEqual([
      'autoplay', 'batch', 'd-model', 'emb-init-std', 'ffn', 'ffn-mult', 'heads', 'height', 'hide', 'kv-heads', 'layers', 'lr', 'max-seq-len', 'norm', 'norm-position', 'panel', 'positions',
      'residual', 'sample', 'seed', 'seq-len', 'solved-at', 'task', 'theme', 'view', 'vocab-size',
    ]);
    expect(keyOfAttribute('vocab-size')).toBe('vocabSize');
    expect(keyOfAttribute('hide')).toBeUndefined();
  });

  test('the training view\'s controls: one per config setting, in order, with its label, core name, bounds and step', () => {
    const row = (c: (typeof CONTROLS)[number]) => [c.label, c.coreKey, c.min ?? null, c.max ?? null, c.step ?? null, c.options ?? null, c.bool ?? false];
    expect(Object.fromEntries(CONTROLS.map((c) => [c.key, row(c)]))).toEqual({
      vocabSize: ['vocab', 'vocabSize', 2, 512, '1', null, false],
      dModel: ['d_model', 'dModel', 2, 256, '2', null, false],
      nHeads: ['heads', 'nHeads', 1, 16, '1', null, false],
      seqLen: ['seq_len', 'seqLen', 1, 128, '1', null, false],
      batchSize: ['batch', 'batchSize', 1, 64, '1', null, false],
      lr: ['learning rate', 'lr', 0, 10, 'any', null, false],
      seed: ['seed', 'seed', 0, 2 ** 32 - 1, '1', null, false],
      attnDropout: ['attention dropout', 'attnDropout', 0, 0.9, '0.05', null, false],
      outDropout: ['output dropout', 'outDropout', 0, 0.9, '0.05', null, false],
      task: ['task', 'task', null, null, null, ['repeat', 'shift', 'copy', 'reverse', 'sort', 'future', 'induction', 'text'], false],
      nLayers: ['layers', 'nLayers', 1, 4, '1', null, false],
      residual: ['residual stream', 'residual', null, null, null, null, true],
      kvHeads: ['K/V heads (0 = heads)', 'kvHeads', 0, 16, '1', null, false],
      positions: ['positions', 'positions', null, null, null, ['sinusoidal', 'learned', 'rope', 'alibi', 'none'], false],
      maxSeqLen: ['max_seq_len (0 = seq_len)', 'maxSeqLen', 0, 512, '1', null, false],
      norm: ['norm', 'norm', null, null, null, ['none', 'layernorm', 'rmsnorm'], false],
      normPosition: ['norm position', 'normPosition', null, null, null, ['pre', 'post'], false],
      ffn: ['FFN', 'ffn', null, null, null, ['none', 'relu', 'gelu', 'swiglu'], false],
      ffnMult: ['FFN width (× d_model)', 'ffnMult', 1, 8, '1', null, false],
      embInitStd: ['embedding init std', 'embInitStd', 0, 10, 'any', null, false],
    });
    expect(CONTROLS.map((c) => c.key)).toEqual(['vocabSize', 'dModel', 'nHeads', 'seqLen', 'batchSize', 'lr', 'seed', 'attnDropout', 'outDropout', 'task', 'nLayers', 'residual', 'kvHeads', 'positions', 'maxSeqLen', 'norm', 'normPosition', 'ffn', 'ffnMult', 'embInitStd']);
  });
});
