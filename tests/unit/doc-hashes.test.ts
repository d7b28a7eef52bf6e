// Every URL hash the docs show a reader (README.md, the READMEs beside the code, web/docs/*.md) is
// read by the page's own parser (web/src/settings/state.ts) against the settings table: each key
// must be a setting (or, in an embed.html link, one of embed.html's own keys), each value one the
// page keeps as written. A doc example that says it falls back must be corrected, as it says.
// Two forms: a hash (`#key=value&...`, any spelling the parser reads, d_model as d-model), and,
// in the page's docs (README.md, web/), an inline `key=value&...` in backticks, whose value may
// be a placeholder: empty or `...` (the key alone is checked), one letter (`lesson-window=k`),
// a range `1..4` (both ends checked) or alternatives `a|b` (each checked).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ELEMENT_ATTRIBUTES } from '../../web/src/element/attributes';
import { DEFAULTS } from '../../web/src/settings/settings';
import { hashParams, paramsByKey, stateFromHash, stateToHash } from '../../web/src/settings/state';

const root = join(__dirname, '..', '..');

/** The markdown files a reader follows: the top README, every README under cpp/, web/, tests/,
 * scripts/ and bench/, and web/docs. */
function docFiles(): string[] {
  const out = ['README.md'];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const rel = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== 'dist' && e.name !== 'artifacts') walk(rel);
      } else if (e.name.endsWith('.md')) out.push(rel);
    }
  };
  for (const dir of ['cpp', 'web', 'tests', 'scripts', 'bench']) walk(dir);
  return out;
}

interface Example {
  file: string;
  line: number;
  hash: string;
  embed: boolean;  // the hash of an embed.html link, or an inline example in embed.md
  fallsBack: boolean;  // the doc says the value is corrected
}

const KEY = '[a-z][a-z0-9_-]*';
const HASH = new RegExp(`(embed\\.html)?#(${KEY}=[^\\s\`"'<>)]*)`, 'g');
const INLINE = new RegExp(`\`(${KEY}=[^\\s\`"']*(?:&${KEY}=[^\\s\`"']*)*)\``, 'g');

/** Whether a doc's inline `key=value` examples are the page's (its URL keys), not the CLI's or
 * the core's. */
function pageDoc(file: string): boolean {
  return file === 'README.md' || file.startsWith('web/');
}

/** The hashes an inline `key=value&...` stands for: its placeholders expanded into the values
 * they name (none for an empty or `...` value: the key is checked alone, with no value). */
function expandInline(fragment: string): string[] {
  let hashes = [''];
  for (const pair of fragment.split('&')) {
    const [key, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
    let values: (string | null)[];
    const range = /^(\d+)\.\.(\d+)$/.exec(value);
    if (value === '' || value === '...' || /^[a-zA-Z]$/.test(value)) values = [null];
    else if (range) values = [range[1], range[2]];
    else if (value.includes('|')) values = value.split('|');
    else values = [value];
    hashes = hashes.flatMap((h) =>
      values.map((v) => `${h}${h ? '&' : ''}${v === null ? key : `${key}=${encodeURIComponent(v)}`}`));
  }
  return hashes;
}

/** Each hash example in the docs, with the line it stands on. */
function examples(): Example[] {
  const out: Example[] = [];
  for (const file of docFiles()) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    lines.forEach((text, i) => {
      const around = `${lines[i - 1] ?? ''} ${text} ${lines[i + 1] ?? ''}`;
      const fallsBack = /falls back/.test(around);
      for (const m of text.matchAll(HASH)) out.push({ file, line: i + 1, hash: m[2], embed: m[1] !== undefined, fallsBack });
      if (!pageDoc(file)) return;
      for (const m of text.matchAll(INLINE))
        for (const hash of expandInline(m[1])) out.push({ file, line: i + 1, hash, embed: file === 'web/docs/embed.md', fallsBack });
    });
  }
  return out;
}

const EMBED_KEYS = new Set<string>([...ELEMENT_ATTRIBUTES, 'origin']);

describe('hash examples in the docs', () => {
  const all = examples();

  test('the docs show hash examples (the extraction finds them)', () => {
    expect(all.length).toBeGreaterThanOrEqual(8);
    expect(all.some((e) => e.embed)).toBe(true);
    expect(all.some((e) => e.fallsBack)).toBe(true);
  });

  test('every form is found: a snake_case key, an inline example, a placeholder expanded', () => {
    expect(all.some((e) => e.hash.startsWith('d_model='))).toBe(true);
    expect(all.some((e) => e.hash === 'lesson-window')).toBe(true);
    expect(expandInline('mask=causal|none&lesson-heads=1..4&second-sentence=...')).toEqual([
      'mask=causal&lesson-heads=1&second-sentence', 'mask=causal&lesson-heads=4&second-sentence',
      'mask=none&lesson-heads=1&second-sentence', 'mask=none&lesson-heads=4&second-sentence',
    ]);
  });

  test.each(all.map((e) => [`${e.file}:${e.line} ${e.hash.slice(0, 60)}`, e] as const))('%s', (_where, e) => {
    const { unknown } = paramsByKey(hashParams(`#${e.hash}`));
    expect(unknown.filter((k) => !(e.embed && EMBED_KEYS.has(k)))).toEqual([]);
    // A key without '=' (a placeholder's) has no value to check: only its name above.
    const valued = e.hash.split('&').filter((pair) => pair.includes('=')).join('&');
    const { corrections } = stateFromHash(`#${valued}`);
    const own = corrections.filter((c) => !(c.key === null && e.embed));
    if (e.fallsBack) expect(own.length).toBeGreaterThan(0);
    else expect(own.map((c) => c.message)).toEqual([]);
  });

  test("web/README.md's canonical hash is the defaults in the canonical order", () => {
    const text = readFileSync(join(root, 'web/README.md'), 'utf8');
    const canonical = all.filter((e) => e.file === 'web/README.md' && e.hash.length > 500);
    expect(canonical).toHaveLength(1);
    expect(text).toContain('(the defaults, in the canonical order)');
    expect(canonical[0].hash).toBe(stateToHash(DEFAULTS));
  });
});
