// Every URL hash the docs show a reader (README.md, the READMEs beside the code, web/docs/*.md) is
// read by the page's own parser (web/src/settings/state.ts) against the settings table: each key
// must be a setting (or, in an embed.html link, one of embed.html's own keys), each value one the
// page keeps as written. A doc example that says it falls back must be corrected, as it says.
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
  embed: boolean;  // the hash of an embed.html link
  fallsBack: boolean;  // the doc says the value is corrected
}

/** Each `#key=value&...` in the docs, with the line it stands on. */
function examples(): Example[] {
  const out: Example[] = [];
  for (const file of docFiles()) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    lines.forEach((text, i) => {
      for (const m of text.matchAll(/(embed\.html)?#([a-z][a-z-]*=[^\s`"'<>)]*)/g)) {
        const around = `${lines[i - 1] ?? ''} ${text} ${lines[i + 1] ?? ''}`;
        out.push({ file, line: i + 1, hash: m[2], embed: m[1] !== undefined, fallsBack: /falls back/.test(around) });
      }
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

  test.each(all.map((e) => [`${e.file}:${e.line}`, e] as const))('%s', (_where, e) => {
    const { unknown } = paramsByKey(hashParams(`#${e.hash}`));
    expect(unknown.filter((k) => !(e.embed && EMBED_KEYS.has(k)))).toEqual([]);
    const { corrections } = stateFromHash(`#${e.hash}`);
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
