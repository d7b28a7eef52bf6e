// The element's own attributes under node: the anywidget trait names derived from them, and the
// theme attribute's parsing.
import { describe, expect, test } from 'vitest';
import { TRAITS } from '../../web/src/element/anywidget';
import { ATTRIBUTES, parseTheme } from '../../web/src/element/attributes';

describe('anywidget traits', () => {
  test('one trait per attribute, with _ for -', () => {
    expect(Object.values(TRAITS).sort()).toEqual([...ATTRIBUTES].sort());
    expect(TRAITS.vocab_size).toBe('vocab-size');
    expect(TRAITS.solved_at).toBe('solved-at');
    expect(TRAITS.theme).toBe('theme');
    // The block's settings, as Python spells them.
    expect([TRAITS.kv_heads, TRAITS.positions, TRAITS.max_seq_len, TRAITS.norm, TRAITS.norm_position, TRAITS.ffn, TRAITS.ffn_mult]).toEqual([
      'kv-heads', 'positions', 'max-seq-len', 'norm', 'norm-position', 'ffn', 'ffn-mult',
    ]);
    for (const trait of Object.keys(TRAITS)) expect(trait).toMatch(/^[a-z_]+$/);
  });
});

describe('theme', () => {
  test('auto, light and dark, in any case; absent or empty is auto', () => {
    expect(parseTheme(null)).toEqual({ value: 'auto' });
    expect(parseTheme('  ')).toEqual({ value: 'auto' });
    expect(parseTheme('Dark')).toEqual({ value: 'dark' });
    expect(parseTheme('light')).toEqual({ value: 'light' });
    expect(parseTheme('auto')).toEqual({ value: 'auto' });
  });
  test('anything else is auto, with one message naming the attribute', () => {
    expect(parseTheme('sepia')).toEqual({ value: 'auto', problem: { attribute: 'theme', message: 'theme: "sepia" is not auto, light or dark; using auto' } });
  });
});
