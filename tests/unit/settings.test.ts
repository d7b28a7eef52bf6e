// The key table (web/src/settings/settings.ts) under node: every row complete, every public name
// unique, the config's rows built from the core's schema with the page's own labels and bounds (and
// a key the page knows nothing of still a full row); checkField's bounds, clamping and messages;
// the training view's controls. The public names and defaults are tests/unit/public-contract.txt's
// (contract.test.ts).
import { describe, expect, test } from 'vitest';
import { CONFIG_SCHEMA } from '../../web/src/core/config-schema';
import { ELEMENT_ATTRIBUTES, keyOfAttribute, stateFromAttributes, stateFromPatch } from '../../web/src/element/attributes';
import { ABLATION_KEYS, CONFIG_KEYS, DEFAULTS, SETTING_LIST, SETTINGS, appliesTo, checkField, checkValue, configRow, settingByHash, settingOf, type Setting, type State } from '../../web/src/settings/settings';
import { CONTROLS, controlsFor } from '../../web/src/ui/train-controls';

const FIELDS: (keyof Setting)[] = ['key', 'group', 'core', 'hash', 'attribute', 'label', 'type', 'default', 'range', 'exclusiveMin', 'exclusiveMax', 'values', 'step', 'clean'];

describe('the key table', () => {
  test('every setting has every field, of the right kind for its type', () => {
    for (const s of SETTING_LIST) {
      for (const f of FIELDS) expect(s, `${s.key}.${f}`).toHaveProperty(f);
      expect(s.label, s.key).toMatch(/\S/);
      expect(s.hash, s.key).toMatch(/^[a-z]+(-[a-z][a-z0-9]*)*$/);
      if (s.attribute !== null) expect(s.attribute, s.key).toMatch(/^[a-z]+(-[a-z][a-z0-9]*)*$/);
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

  test('each default passes its own validation unchanged', () => {
    for (const s of SETTING_LIST) {
      const raw = typeof s.default === 'boolean' ? (s.default ? '1' : '0') : String(s.default);
      expect(checkField(s.key, raw), s.key).toEqual({ value: s.default });
    }
  });

  test('names are unique: hash keys, attributes (with the element\'s own), JS and core names', () => {
    const unique = (names: string[]) => expect(new Set(names).size, names.join(' ')).toBe(names.length);
    unique(SETTING_LIST.map((s) => s.hash));
    unique([...SETTING_LIST.flatMap((s) => (s.attribute === null ? [] : [s.attribute])), ...ELEMENT_ATTRIBUTES]);
    unique(SETTING_LIST.map((s) => s.key));
    unique(SETTING_LIST.flatMap((s) => (s.core === null ? [] : [s.core])));
  });

  test('the config keys are the core\'s schema, in its order, each with its default and choices; the ablation keys the core\'s Ablation', () => {
    expect(CONFIG_KEYS).toEqual(CONFIG_SCHEMA.map((k) => k.js));
    for (const k of CONFIG_SCHEMA) {
      const s = SETTINGS[k.js as keyof State];
      expect(s.core, k.name).toBe(k.js);
      expect(s.default, k.name).toBe(k.default);
      if (k.type === 'enum') expect(s.values, k.name).toEqual(k.choices);
    }
    expect(ABLATION_KEYS.map((k) => SETTINGS[k].core).sort()).toEqual(['headsFrozen', 'headsOff', 'mask', 'scaleScores']);
    expect(settingByHash('heads-off')?.key).toBe('headsOff');
    expect(settingByHash('off')).toBeUndefined();
    expect(keyOfAttribute('vocab-size')).toBe('vocabSize');
    expect(keyOfAttribute('hide')).toBeUndefined();
  });

  test('a config key the page knows nothing of is a full row: its flag as hash key and attribute, its name as label, the core\'s bounds', () => {
    const key = 'dropRate' as keyof State;
    const row = { key, ...configRow({ name: 'drop_rate', flag: 'drop-rate', js: key, type: 'float', default: 0.15, min: 0, max: 1, min_exclusive: false, max_exclusive: true, help: 'share of dropped tokens', symbol: 'P', group: 'training', in_weights: false, families: ['lm'] }) } as Setting;
    expect(row).toMatchObject({ group: 'config', core: key, hash: 'drop-rate', attribute: 'drop-rate', label: 'drop_rate', type: 'float', default: 0.15, range: [0, 1], exclusiveMin: false, exclusiveMax: true, step: 'any' });
    expect(checkValue(row, '0.5')).toEqual({ value: 0.5 });
    expect(checkValue(row, '1')).toEqual({ value: 0.15, correction: { key, message: 'drop_rate: 1 is not in [0, 1); using 0.15' } });
    const choice = configRow({ name: 'pooling', flag: 'pooling', js: 'pooling', type: 'enum', default: 'mean', choices: ['mean', 'max'], choices_type: 'Pooling', help: 'the pooling', symbol: 'KIND', group: 'training', in_weights: true, families: ['lm'] });
    expect(choice).toMatchObject({ hash: 'pooling', type: 'enum', values: ['mean', 'max'], default: 'mean' });
    const count = configRow({ name: 'span', flag: 'span-size', js: 'spanSize', type: 'int', default: 0, min: 0, max: 4096, min_exclusive: false, max_exclusive: false, help: 'window', symbol: 'W', group: 'block', in_weights: true, families: ['lm'] });
    expect(count).toMatchObject({ hash: 'span-size', attribute: 'span-size', type: 'int', range: [0, 4096], step: '1' });
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
  test('a control shows for the model families its key applies to (the schema\'s families)', () => {
    for (const c of CONTROLS) expect(c.families).toEqual(CONFIG_SCHEMA.find((k) => k.js === c.key)!.families);
    expect(controlsFor('lm')).toEqual(CONTROLS); // every key applies to lm, the one family
    // A row of a test-only family, through the same functions.
    const gated = configRow({ name: 'patch_size', flag: 'patch-size', js: 'patchSize', type: 'int', default: 4, min: 1, max: 16, min_exclusive: false, max_exclusive: false, help: 'patch width', symbol: 'P', group: 'model', in_weights: true, families: ['test_family'] });
    expect(appliesTo(gated, 'test_family')).toBe(true);
    expect(appliesTo(gated, 'lm')).toBe(false);
    expect(appliesTo(settingOf('view'), 'test_family')).toBe(true); // a page setting: every family
    // The family control offers the schema's families, lm first (a new family: no edit here).
    expect(settingOf('family').values).toEqual(CONFIG_SCHEMA.find((k) => k.name === 'family')!.choices);
    expect(settingOf('family').values![0]).toBe('lm');
  });
  test('the training view\'s controls: one per config setting, in order, with the page\'s labels, bounds and steps', () => {
    expect(CONTROLS.map((c) => c.key)).toEqual(CONFIG_KEYS);
    const row = (key: string) => {
      const c = CONTROLS.find((x) => x.key === key)!;
      return [c.label, c.coreKey, c.min ?? null, c.max ?? null, c.step ?? null, c.options ?? null, c.bool ?? false];
    };
    // The page's own bounds (a tighter vocab, d_model in steps of 2, dropout up to 0.9) ...
    expect(row('vocabSize')).toEqual(['vocab', 'vocabSize', 2, 512, '1', null, false]);
    expect(row('dModel')).toEqual(['d_model', 'dModel', 2, 256, '2', null, false]);
    expect(row('attnDropout')).toEqual(['attention dropout', 'attnDropout', 0, 0.9, '0.05', null, false]);
    expect(row('seed')).toEqual(['seed', 'seed', 0, 2 ** 32 - 1, '1', null, false]);
    // ... and the core's, where the page has none.
    expect(row('lr')).toEqual(['learning rate', 'lr', 0, 10, 'any', null, false]);
    expect(row('nLayers')).toEqual(['layers', 'nLayers', 1, 4, '1', null, false]);
    expect(row('ffnMult')).toEqual(['FFN width (× d_model)', 'ffnMult', 1, 8, 'any', null, false]);
    expect(row('residual')).toEqual(['residual stream', 'residual', null, null, null, null, true]);
    expect(row('positions')).toEqual(['positions', 'positions', null, null, null, ['sinusoidal', 'learned', 'rope', 'alibi', 'none'], false]);
  });
});
