// The text task on the web side, under node: the text preset's link, the character labels of the
// figures, the validation curve's placement on the loss chart's steps, and the sentences the
// corpus box shows.
import { describe, expect, test } from 'vitest';
import { stateFromAttributes } from '../../web/src/element/attributes';
import { alignPoints, charLabel, charName, MAX_CORPUS_BYTES, tokenLabels, tooLargeMessage } from '../../web/src/model/text';
import { presetAttributes, presetHash, presetState, PRESETS, TEXT_PRESET } from '../../web/src/settings/presets';
import { DEFAULTS } from '../../web/src/settings/settings';
import { stateFromHash } from '../../web/src/settings/state';
import { asSentence } from '../../web/src/ui/corpus-box';

describe('the preset "Train a GPT on text"', () => {
  test('its link opens exactly its settings, with nothing to correct, the rest the defaults', () => {
    expect(PRESETS).toContain(TEXT_PRESET);
    expect(presetHash(TEXT_PRESET)).toBe(
      'view=train&d-model=64&heads=4&seq-len=64&batch=16&lr=0.003&seed=0&task=text&layers=2&residual=1&positions=rope&norm=layernorm&norm-position=pre&ffn=gelu',
    );
    const { state, corrections } = stateFromHash(`#${presetHash(TEXT_PRESET)}`);
    expect(corrections).toEqual([]);
    expect(state).toEqual({ ...DEFAULTS, ...TEXT_PRESET.settings });
    expect(presetState(TEXT_PRESET)).toEqual(state);
  });

  test('its attributes give the element the same state', () => {
    const attrs = presetAttributes(TEXT_PRESET);
    const { state, problems } = stateFromAttributes(DEFAULTS, (name) => attrs[name] ?? null);
    expect(problems).toEqual([]);
    expect(state).toEqual(presetState(TEXT_PRESET));
  });
});

describe('character labels', () => {
  test('space, newline, tab and control characters get a visible sign; others are themselves', () => {
    expect(charLabel(' ')).toBe('␣');
    expect(charLabel('\n')).toBe('⏎');
    expect(charLabel('\t')).toBe('⇥');
    expect(charLabel('\u0001')).toBe('U+0001');
    expect(charLabel('a')).toBe('a');
    expect(charLabel('😀')).toBe('😀');
  });

  test('a list names whitespace in words beside its sign', () => {
    expect([' ', '\n', '\t', 'a', '\u0001'].map(charName)).toEqual(['␣ (space)', '⏎ (new line)', '⇥ (tab)', 'a', 'U+0001']);
  });

  test('ids map to the vocab by code point; without a vocab (or out of it) they stay numbers', () => {
    const vocab = '\n ab😀é';
    expect(tokenLabels([0, 1, 2, 4, 5, 6], vocab)).toEqual(['⏎', '␣', 'a', '😀', 'é', '6']);
    expect(tokenLabels(Int32Array.from([3, 12]), null)).toEqual(['3', '12']);
  });
});

describe('the validation curve on the loss chart', () => {
  test('each point goes to the first step at or after it, gaps elsewhere', () => {
    expect(alignPoints([0, 1, 2, 3, 4], [0, 2, 4], [3, 2, 1])).toEqual([3, null, 2, null, 1]);
    // A thinned history (stride 4): the point at step 6 goes to x = 9.
    expect(alignPoints([0, 1, 5, 9], [6], [1.5])).toEqual([null, null, null, 1.5]);
    expect(alignPoints([0, 1], [7], [1])).toEqual([null, null]);
  });
});

describe('the corpus box sentences', () => {
  test("a core message becomes one sentence", () => {
    expect(asSentence('the text is empty')).toBe('The text is empty.');
    expect(asSentence('Already a sentence.')).toBe('Already a sentence.');
  });

  test('a file over the limit is named with its size', () => {
    expect(tooLargeMessage('big.txt', MAX_CORPUS_BYTES + 1)).toBe('big.txt is 2.0 MB (2097153 bytes), more than the 2 MB a text may have.');
  });
});
