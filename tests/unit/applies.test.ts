// Which settings matter under the others: the schema's applies_when (cpp/attn/train/config.h, in
// config-schema.ts), read by settings.ts's applies(), which hides the training view's controls of
// the settings that do not (train-controls.ts). And the presets' Start here data (presets.ts).
import { describe, expect, test } from 'vitest';
import { CONFIG_SCHEMA } from '../../web/src/core/config-schema';
import type { ConfigKeySchema } from '../../web/src/core/attention-core';
import { APPLIES_WHEN, applies, CONFIG_KEYS, DEFAULTS, SETTING_LIST, type State } from '../../web/src/settings/settings';
import { LESSONS, PRESETS, presetState, runsPreset, START_PRESET } from '../../web/src/settings/presets';

const schema = CONFIG_SCHEMA as readonly ConfigKeySchema[];
const at = (changes: Partial<State>): State => ({ ...DEFAULTS, ...changes });

describe('applies(): the schema says when a setting matters', () => {
  test('the schema annotates the window, the stride, the mask rate, the norm position, the FFN width, the learned table\'s init, the built-in text and the markov and lag tasks\' keys', () => {
    expect(Object.fromEntries(schema.filter((k) => k.applies_when).map((k) => [k.js, k.applies_when]))).toEqual({
      normPosition: { key: 'norm', in: ['layernorm', 'rmsnorm'] },
      ffnMult: { key: 'ffn', in: ['relu', 'gelu', 'swiglu'] },
      maskRate: { key: 'objective', in: ['mlm'] },
      window: { key: 'attention', in: ['window', 'strided'] },
      stride: { key: 'attention', in: ['strided'] },
      posInitStd: { key: 'positions', in: ['learned'] },
      builtinText: { key: 'task', in: ['text'] },
      markovOrder: { key: 'task', in: ['markov'] },
      markovSymbols: { key: 'task', in: ['markov'] },
      lag: { key: 'task', in: ['lag'] },
    });
  });

  test('each annotated key follows its condition, in JS names; every other setting always matters', () => {
    for (const k of schema) {
      const when = APPLIES_WHEN[k.js as keyof typeof APPLIES_WHEN];
      if (!k.applies_when) {
        expect(when, k.js).toBeUndefined();
        continue;
      }
      const on = schema.find((r) => r.name === k.applies_when!.key)!;
      expect(when, k.js).toEqual({ key: on.js, in: k.applies_when.in });
      // Off at the defaults, on under each listed value, off under every other choice.
      expect(applies(k.js as keyof State, DEFAULTS), k.js).toBe(false);
      for (const v of on.choices!) expect(applies(k.js as keyof State, at({ [on.js]: v })), `${k.js} with ${on.js} ${v}`).toBe(k.applies_when.in.includes(v));
    }
    const always = SETTING_LIST.filter((s) => !schema.some((k) => k.js === s.key && k.applies_when)).map((s) => s.key);
    for (const key of always) expect(applies(key, DEFAULTS), key).toBe(true);
  });

  test('by hand: the window shows under window and strided attention, the stride only under strided', () => {
    expect([applies('window', at({ attention: 'full' })), applies('stride', at({ attention: 'full' }))]).toEqual([false, false]);
    expect([applies('window', at({ attention: 'window' })), applies('stride', at({ attention: 'window' }))]).toEqual([true, false]);
    expect([applies('window', at({ attention: 'strided' })), applies('stride', at({ attention: 'strided' }))]).toEqual([true, true]);
    expect(applies('maskRate', at({ objective: 'mlm' }))).toBe(true);
    expect(applies('ffnMult', at({ ffn: 'gelu' }))).toBe(true);
    expect(applies('normPosition', at({ norm: 'none', ffn: 'gelu' }))).toBe(false);
  });
});

describe('Start here: the presets by lesson', () => {
  test('every preset belongs to a lesson, every lesson has one, and each has one sentence of its own', () => {
    expect(new Set(PRESETS.map((p) => p.lesson))).toEqual(new Set(LESSONS));
    for (const p of PRESETS) expect(p.sentence, p.id).toMatch(/^[A-Z][^.]*(\.[^ ][^.]*)*\.$/);
    expect(new Set(PRESETS.map((p) => p.sentence)).size).toBe(PRESETS.length);
  });

  test('the page opens on the shift task, everything else at the defaults', () => {
    expect(START_PRESET.id).toBe('shift');
    const s = presetState(START_PRESET);
    expect(CONFIG_KEYS.filter((k) => s[k] !== DEFAULTS[k])).toEqual(['task']);
    expect(s.task).toBe('shift');
  });

  test('runsPreset: the preset whose model (and panel, when it names one) the state runs', () => {
    for (const p of PRESETS) expect(PRESETS.filter((q) => runsPreset(q, presetState(p))).map((q) => q.id), p.id).toContain(p.id);
    expect(PRESETS.filter((p) => runsPreset(p, DEFAULTS))).toEqual([]);
    // The induction preset with Look inside open is also the circuit preset; with Predictions, only the induction one.
    const induction = presetState(PRESETS.find((p) => p.id === 'induction')!);
    expect(PRESETS.filter((p) => runsPreset(p, induction)).map((p) => p.id)).toEqual(['induction']);
    expect(PRESETS.filter((p) => runsPreset(p, { ...induction, panel: 'inspect' })).map((p) => p.id)).toEqual(['induction', 'find-circuit']);
    expect(runsPreset(START_PRESET, at({ task: 'shift', seed: 1 }))).toBe(false);
  });
});
