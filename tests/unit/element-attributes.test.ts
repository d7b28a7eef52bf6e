// The element's own attributes under node: the anywidget trait names derived from them (the names
// themselves are tests/unit/public-contract.txt's), and the theme attribute's parsing.
import { describe, expect, test } from 'vitest';
import { TRAITS } from '../../web/src/element/anywidget';
import { ATTRIBUTES, parseTheme } from '../../web/src/element/attributes';

describe('anywidget traits', () => {
  test('one trait per attribute, with _ for -', () => {
    expect(Object.values(TRAITS).sort()).toEqual([...ATTRIBUTES].sort());
    for (const [trait, attribute] of Object.entries(TRAITS)) expect(trait).toBe(attribute.replaceAll('-', '_'));
    for (const trait of Object.keys(TRAITS)) expect(trait).toMatch(/^[a-z][a-z0-9_]*$/);
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
