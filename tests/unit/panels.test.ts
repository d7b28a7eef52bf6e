// The panel registry (web/src/panels/) against its folders and its docs: each line of the registry
// is a folder with a view, each folder with a view is a line; every request a panel (or a view of
// web/src/views/) declares (request.ts, defineRequest) has exactly one handler in the worker's
// table and the other way round; and web/README.md's worker-protocol tables list exactly the requests of the code, each
// with the reply, or the panel, input and output types it is declared with (read from the sources
// by TypeScript's parser, so the tables cannot drift from the code).
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import type { RequestDef } from '../../web/src/model/protocol';
import { PANEL_HANDLERS } from '../../web/src/panels/handlers';
import { groupOf, PANELS } from '../../web/src/panels/registry';
import { TASKS } from '../../web/src/settings/tasks';
import { PART_GROUPS } from '../../web/src/ui/parts';
import { fallbackKind } from '../../web/src/worker/handlers';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PANELS_DIR = path.join(ROOT, 'web/src/panels');
/** The views with requests of their own (the lesson, the block): a folder each, as a panel's. */
const VIEWS_DIR = path.join(ROOT, 'web/src/views');
const README = path.join(ROOT, 'web/README.md');

/** The folders of a directory and their files. */
const foldersOf = (dir: string) =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => ({ name: e.name, dir: path.join(dir, e.name), files: fs.readdirSync(path.join(dir, e.name)) }));
/** The folders of web/src/panels and their files. */
const folders = foldersOf(PANELS_DIR);
/** The folders that declare requests: the panels' and the views'. */
const requestFolders = [...folders, ...foldersOf(VIEWS_DIR)];

/** A declared request as the source writes it: its name, its panel folder, its input and output types. */
interface Declared {
  name: string;
  panel: string;
  input: string;
  output: string;
}

/** Every defineRequest<In, Out>('name', kind) call of the panels' and the views' request.ts files. */
function declaredRequests(): Declared[] {
  const out: Declared[] = [];
  for (const { name: panel, dir, files } of requestFolders) {
    if (!files.includes('request.ts')) continue;
    const file = path.join(dir, 'request.ts');
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'defineRequest') {
        const [input, output] = (node.typeArguments ?? []).map((t) => t.getText(source).replace(/\s+/g, ' '));
        const arg = node.arguments[0];
        if (!arg || !ts.isStringLiteral(arg)) throw new Error(`${file}: defineRequest without a literal name`);
        out.push({ name: arg.text, panel, input: input ?? 'void', output: output ?? 'void' });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

/** The request -> reply pairs of protocol.ts's ReplyFor, read from the source. */
function runReplies(): Map<string, string> {
  const file = path.join(ROOT, 'web/src/model/protocol.ts');
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const out = new Map<string, string>();
  source.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node) || node.name.text !== 'ReplyFor') return;
    for (const m of node.members) {
      if (!ts.isPropertySignature(m) || !m.type || !ts.isTypeLiteralNode(m.type)) continue;
      const type = m.type.members.find((t) => ts.isPropertySignature(t) && t.name.getText(source) === 'type') as ts.PropertySignature | undefined;
      out.set(m.name.getText(source), type!.type!.getText(source).replace(/'/g, ''));
    }
  });
  return out;
}

/** The rows of the markdown table under the README heading that starts with `heading`, as cells. */
function tableUnder(heading: string): string[][] {
  const lines = fs.readFileSync(README, 'utf8').split('\n');
  const at = lines.findIndex((l) => l.startsWith(heading));
  expect(at, `web/README.md has a heading "${heading}"`).toBeGreaterThanOrEqual(0);
  const start = lines.findIndex((l, i) => i > at && l.startsWith('|'));
  const rows: string[][] = [];
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); ++i) {
    rows.push(lines[i].slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim()));
  }
  return rows;
}

/** The first word of a cell's code: `configure {config, ...}` -> configure. */
const firstWord = (cell: string): string => /^`(\w+)/.exec(cell)?.[1] ?? cell;

describe('the panel registry', () => {
  test('each line of the registry is a folder with a view.ts, and each folder with a view.ts a line', () => {
    const withView = folders.filter((f) => f.files.includes('view.ts')).map((f) => f.name);
    expect(withView.sort()).toEqual(PANELS.map((p) => p.name).sort());
  });

  test('names and hide groups are unique, and a panel\'s group is a hide group of the element', () => {
    const names = PANELS.map((p) => p.name);
    const groups = PANELS.map(groupOf);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(groups).size).toBe(groups.length);
    for (const g of groups) expect(Object.keys(PART_GROUPS)).toContain(g);
  });

  test('every request a panel declares has one handler in the worker, and every handler a declaration', async () => {
    const declared = declaredRequests();
    expect(new Set(declared.map((d) => d.name)).size, 'each name once').toBe(declared.length);
    expect([...PANEL_HANDLERS.keys()].sort()).toEqual(declared.map((d) => d.name).sort());
    // The handler answers the very declaration its panel exports (not a look-alike).
    const modules = {
      ...import.meta.glob<Record<string, unknown>>('../../web/src/panels/*/request.ts', { eager: true }),
      ...import.meta.glob<Record<string, unknown>>('../../web/src/views/*/request.ts', { eager: true }),
    };
    const defs = Object.values(modules).flatMap((m) => Object.values(m).filter((v): v is RequestDef<unknown, unknown> => typeof v === 'object' && v !== null && 'fallback' in v));
    for (const def of defs) expect(PANEL_HANDLERS.get(def.name)?.request, def.name).toBe(def);
  });
});

describe('web/README.md\'s worker protocol matches the code', () => {
  test('the run\'s requests: each request of protocol.ts with the reply it names', () => {
    const rows = tableUnder('### The run\'s requests').map((r) => [firstWord(r[0]), firstWord(r[1])]);
    expect(new Map(rows as [string, string][])).toEqual(runReplies());
    expect(rows.map((r) => r[0]).sort()).toEqual(Object.keys(fallbackKind).sort());
  });

  test('the panels\' requests: each declared request with its panel, input and output types', () => {
    const rows = tableUnder('### The panels\' requests').map((r) => ({ name: firstWord(r[0]), panel: r[1].replace(/`/g, ''), input: r[2].replace(/^`|`$/g, ''), output: r[3].replace(/^`|`$/g, '') }));
    const byName = (a: Declared, b: Declared) => a.name.localeCompare(b.name);
    const expected = declaredRequests().sort(byName);
    const shown = [...rows].sort(byName);
    // On a mismatch, the rows the code declares (without the "what it does" column).
    const asRows = (ds: Declared[]) => ds.map((d) => `| \`${d.name}\` | \`${d.panel}\` | \`${d.input}\` | \`${d.output}\` |`).join('\n');
    expect(asRows(shown)).toBe(asRows(expected));
  });
});

describe("web/docs/embed.md's attribute table", () => {
  const embed = fs.readFileSync(path.join(ROOT, 'web/docs/embed.md'), 'utf8');
  /** The `code` words of the attribute table's row for one attribute. */
  const rowWords = (attr: string): string[] => {
    const row = embed.split('\n').find((l) => l.startsWith(`| \`${attr}\` |`));
    expect(row, `no row for ${attr}`).toBeDefined();
    const what = row!.split('|')[3];
    return [...what.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  };

  test('the panel row lists every panel of the registry once, in its order, and all', () => {
    expect(rowWords('panel')).toEqual([...PANELS.map((p) => p.name), 'all']);
  });

  test('the task row lists every task the page knows once', () => {
    expect(rowWords('task')).toEqual(Object.keys(TASKS));
  });
});
