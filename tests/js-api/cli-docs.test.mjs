// The CLI reference (cpp/cli/README.md) against the binary: its synopsis names every subcommand
// `attn --help` lists and every config flag `attn schema` declares, with an enum's choices in the
// schema's order. The schema is the source; this test keeps the hand-written page from drifting.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { repoRoot, runCli } from './core.mjs';

const readme = readFileSync(`${repoRoot}cpp/cli/README.md`, 'utf8');
const synopsis = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

test('the synopsis lists every subcommand of attn --help', () => {
  const help = runCli(['--help']);
  const commands = [...help.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]);
  assert.ok(commands.length >= 10, `attn --help lists the subcommands (got ${commands.join(', ')})`);
  for (const c of commands) assert.match(synopsis, new RegExp(`^attn ${c}\\b`, 'm'), `cpp/cli/README.md's synopsis has "attn ${c}"`);
});

test('the synopsis names every config flag of attn schema, enums with their choices', () => {
  const schema = JSON.parse(runCli(['schema']));
  assert.ok(schema.length >= 20, 'attn schema lists the keys');
  for (const key of schema) {
    const flag = `--${key.flag}`;
    assert.match(synopsis, new RegExp(`\\[${flag}[ \\]]`), `cpp/cli/README.md's synopsis has ${flag} (${key.name})`);
    if (key.type === 'enum') assert.ok(synopsis.includes(`${flag} ${key.choices.join('|')}`), `${flag} lists ${key.choices.join('|')}`);
  }
});
