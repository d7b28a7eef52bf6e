// The public contract, held against one committed file (public-contract.txt): every config key with
// its JS name, `attn` flag, URL hash key, element attribute, anywidget trait and default, as the
// core's schema and the page's key table derive them; the page's own settings; the element's own
// attributes and its events; and every flag of every `attn` command. Public names must not change:
// a difference fails here. A new key or flag is a deliberate change of the contract: rewrite the
// file with UPDATE_CONTRACT=1 and review its diff. Needs the native CLI, build/native/attn (npm test
// builds it first; ATTN_CLI overrides the path): without it this test fails, it never skips.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { CONFIG_SCHEMA } from '../../web/src/core/config-schema';
import { TRAITS } from '../../web/src/element/anywidget';
import { ELEMENT_ATTRIBUTES } from '../../web/src/element/attributes';
import { EVENT_TYPES } from '../../web/src/element/messages';
import { SETTING_LIST, settingOf, type State } from '../../web/src/settings/settings';

const FILE = fileURLToPath(new URL('./public-contract.txt', import.meta.url));
const ATTN = process.env.ATTN_CLI ?? fileURLToPath(new URL('../../build/native/attn', import.meta.url));

function attn(args: string[]): string {
  expect(existsSync(ATTN), `${ATTN} is missing: build it with cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release && cmake --build build/native --target attn_cli (or run npm test)`).toBe(true);
  return execFileSync(ATTN, args, { encoding: 'utf8' });
}

/** The trait of an attribute ('-' for none). */
const traitOf = (attribute: string | null) => Object.entries(TRAITS).find(([, a]) => a === attribute)?.[0] ?? '-';

/** The contract as the code derives it, in the file's format. */
function contract(): string {
  const lines = [
    '# The public names of Attention Playground, as the code derives them (tests/unit/contract.test.ts).',
    '# Names must not change; a new one is added here on purpose: UPDATE_CONTRACT=1 npx vitest run',
    '# --config tests/unit/vitest.config.ts contract, then review the diff.',
    '',
    '# config keys: core name, JS name, attn flag, URL hash key, element attribute, anywidget trait, default',
  ];
  for (const k of CONFIG_SCHEMA) {
    const s = settingOf(k.js as keyof State);
    lines.push(['config', k.name, k.js, `--${k.flag}`, s.hash, s.attribute ?? '-', traitOf(s.attribute), JSON.stringify(k.default)].join(' '));
  }
  lines.push('', "# the page's own settings: JS name (the element's state key), core name, URL hash key, element attribute, anywidget trait, default");
  for (const s of SETTING_LIST) {
    if (s.group === 'config') continue;
    lines.push(['setting', s.key, s.core ?? '-', s.hash, s.attribute ?? '-', traitOf(s.attribute), JSON.stringify(s.default)].join(' '));
  }
  lines.push('', "# the element's own attributes and their anywidget traits; its events");
  for (const a of ELEMENT_ATTRIBUTES) lines.push(`attribute ${a} ${traitOf(a)}`);
  for (const e of EVENT_TYPES) lines.push(`event ${e}`);
  lines.push('', "# attn commands and their flags (with the value's name); \"config\": every config key's flag, at its place");
  const configFlags = CONFIG_SCHEMA.map((k) => `--${k.flag}`);
  const commands = [...attn(['--help']).matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1]);
  for (const c of commands) {
    lines.push(`command ${c}`);
    const sub = c === 'demo' ? [['demo'], ['demo', 'self-attention']] : [[c]];
    for (const args of sub) {
      const flags = [...attn([...args, '--help']).matchAll(/^ {2}(--[a-z][a-z0-9-]*)(?: ([A-Z][A-Z0-9]*))?/gm)].map((m) => [m[1], m[2]]);
      const names = flags.map(([f]) => f);
      const at = names.indexOf(configFlags[0]);
      const all = at >= 0 && configFlags.every((f, i) => names[at + i] === f);
      flags.forEach(([f, value], i) => {
        if (all && i === at) lines.push(`flag ${args.join(' ')} config`);
        if (!all || i < at || i >= at + configFlags.length) lines.push(`flag ${args.join(' ')} ${f}${value ? ` ${value}` : ''}`);
      });
    }
  }
  return `${lines.join('\n')}\n`;
}

test('the public names are those of public-contract.txt', () => {
  const derived = contract();
  if (process.env.UPDATE_CONTRACT === '1') writeFileSync(FILE, derived);
  expect(derived).toBe(readFileSync(FILE, 'utf8'));
});

test("every config key's names follow from its flag; the anywidget traits are the attributes with _", () => {
  for (const k of CONFIG_SCHEMA) {
    const s = settingOf(k.js as keyof State);
    expect(s.hash, k.name).toBe(k.flag);
    if (s.attribute !== null) expect(s.attribute, k.name).toBe(k.flag);
  }
  for (const [trait, attribute] of Object.entries(TRAITS)) expect(trait).toBe(attribute.replaceAll('-', '_'));
});
