// The key table's command-line flags are exactly those `attn train --help` prints for the page's
// settings, with the same value names and defaults. Needs the native CLI, build/native/attn (npm
// test builds it first; ATTN_CLI overrides the path): without it this test fails, it never skips.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { SETTING_LIST } from '../../web/src/settings/settings';

const ATTN = process.env.ATTN_CLI ?? fileURLToPath(new URL('../../build/native/attn', import.meta.url));

/** Flags of `attn train` that are about the run, not a setting of the page (--text is the text
 * task's corpus: the page holds it outside the settings, too large for a link). */
const RUN_FLAGS = ['--steps', '--log-every', '--save', '--help', '--text'];

/** Each flag of `attn train --help`: its value name ('' for a switch), its default and its old
 * name (alias), if printed. */
function helpFlags(): Map<string, { value: string; default: string | null; alias: string | null }> {
  expect(existsSync(ATTN), `${ATTN} is missing: build it with cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release && cmake --build build/native --target attn_cli (or run npm test)`).toBe(true);
  const help = execFileSync(ATTN, ['train', '--help'], { encoding: 'utf8' });
  const flags = new Map<string, { value: string; default: string | null; alias: string | null }>();
  for (const line of help.split('\n')) {
    const m = /^ {2}(--[a-z][a-z-]*)(?: ([A-Z]+))?\s{2,}.*?(?: \(default ([^)]*)\))?(?: \(alias (--[a-z-]+)\))?$/.exec(line);
    if (m) flags.set(m[1], { value: m[2] ?? '', default: m[3] ?? null, alias: m[4] ?? null });
  }
  return flags;
}

describe('CLI flags', () => {
  test("the table's flags are exactly attn train's, the run's own flags aside", () => {
    const flags = helpFlags();
    for (const f of RUN_FLAGS) expect(flags.has(f), f).toBe(true);
    const fromHelp = [...flags.keys()].filter((f) => !RUN_FLAGS.includes(f)).sort();
    const fromTable = SETTING_LIST.flatMap((s) => (s.cli ? [s.cli.flag] : [])).sort();
    expect(fromTable).toEqual(fromHelp);
  });

  test('same value names, and the defaults and old names (aliases) the help prints are the table\'s', () => {
    const flags = helpFlags();
    for (const s of SETTING_LIST) {
      if (!s.cli) continue;
      const f = flags.get(s.cli.flag)!;
      expect(f.alias, s.cli.flag).toBe(s.cli.alias ?? null);
      if ('value' in s.cli) {
        expect(f.value, s.cli.flag).toBe(s.cli.value);
        if (f.default !== null) expect(typeof s.default === 'number' ? Number(f.default) : f.default, s.cli.flag).toBe(s.default);
      } else {
        // A switch sets the setting away from its default (--no-scale-scores: scaleScores false).
        expect(f.value, s.cli.flag).toBe('');
        expect(s.cli.sets, s.cli.flag).toBe(!s.default);
      }
    }
  });
});
