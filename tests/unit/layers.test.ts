// The web side's layers, from its import graph: every import in web/src (static, dynamic, type-only
// and re-exports, as TypeScript's own scanner finds them) goes to the same layer or a lower one,
// never up. The order is declared once, below; `ls web/src` shows the same folders.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../web/src');

/**
 * The layers, lowest first. A module may import from its own layer or from a lower one. Folders
 * that share a layer are peers that must not import each other: the worker and the client are the
 * two ends of the message protocol (model/protocol.ts), and the client only names the worker's
 * file by URL (`?worker&url`), which is not an import of its code.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['core', 'vendor.d.ts'], // the wasm core: its loader, its types, its files; the declarations of untyped imports
  ['model'], // pure data and logic shared by the worker and the page: the protocol, heads, layers, timeline, formats
  ['settings'], // the key table, the State, the Store, the text parsers, tasks, presets
  ['draw'], // drawing only: canvases, charts, tables
  ['worker', 'client'], // the worker's session; the page's worker client and controller
  ['ui'], // the views and panels
  ['element'], // the custom element, the embed page, the anywidget module
  ['main.ts'], // the page's entry
];
/** The files that stay at the top of web/src: the page's entry and what the build needs there. */
const TOP_LEVEL_FILES = ['main.ts', 'style.css', 'vendor.d.ts'];

/** The unit of a path under web/src: its top folder, or the file name at the top. */
const unitOf = (rel: string): string => rel.split('/')[0];
const rankOf = (unit: string): number => LAYERS.findIndex((l) => l.includes(unit));

/** An import that only asks the bundler for a file's URL (Vite's ?url, ?worker&url, ?inline). */
const isAssetUrl = (spec: string): boolean => /\?(?:[a-z]+&)*(?:url|inline)$/.test(spec);

/** Every import specifier of a module's text. */
function importsOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/**
 * The imports that break the layering, as "<importer> -> <specifier>: why", for a tree of sources
 * given as paths relative to web/src with their text.
 */
export function layerViolations(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [rel, text] of files) {
    const from = unitOf(rel);
    const rank = rankOf(from);
    if (rank < 0) {
      out.push(`${rel}: ${from} is in no layer (add it to LAYERS in tests/unit/layers.test.ts)`);
      continue;
    }
    for (const spec of importsOf(text)) {
      if (!spec.startsWith('.')) continue; // a package or a virtual module
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec.split('?')[0]));
      if (target.startsWith('../')) continue; // a file outside web/src: the wasm builds, the reference case
      const to = unitOf(target);
      if (to === from || to === 'style.css') continue;
      const toRank = rankOf(to);
      if (toRank < 0) out.push(`${rel} -> ${spec}: ${to} is in no layer`);
      else if (toRank > rank) out.push(`${rel} -> ${spec}: ${from} (layer ${rank}) imports from ${to}, a higher layer (${toRank})`);
      else if (toRank === rank && !isAssetUrl(spec)) out.push(`${rel} -> ${spec}: ${from} and ${to} are peers that must not import each other`);
    }
  }
  return out;
}

/** Every source module under dir, relative to it. */
function readTree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.(ts|js|mjs)$/.test(entry.name)) continue;
    const abs = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, abs).split(path.sep).join('/'), fs.readFileSync(abs, 'utf8'));
  }
  return files;
}

describe('the layers of web/src', () => {
  test('no module imports from a higher layer, nor from a peer', () => {
    const tree = readTree(SRC);
    expect(tree.size, `modules found in ${SRC}`).toBeGreaterThan(80);
    expect(layerViolations(tree)).toEqual([]);
  });

  test('ls web/src shows the layers: every folder is a layer, and only the entry and what the build needs stay at the top', () => {
    const entries = fs.readdirSync(SRC, { withFileTypes: true });
    const folders = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
    const files = entries.filter((e) => e.isFile()).map((e) => e.name).sort();
    expect(folders).toEqual(LAYERS.flat().filter((u) => !u.includes('.')).sort());
    expect(files).toEqual([...TOP_LEVEL_FILES].sort());
  });

  test('the check finds what breaks the layering (an upward import, a peer import, a folder in no layer)', () => {
    const tree = new Map([
      ['settings/settings.ts', "import { cleanMask } from '../ui/lesson-mask';\nimport type { Snapshot } from '../model/protocol';"],
      ['worker/session.ts', "export { Controller } from '../client/controller';"],
      ['client/assets.ts', "import workerUrl from '../worker/worker.ts?worker&url';\nimport w from '../../../tests/reference/data/a.safetensors?url';"],
      ['model/heads.ts', "const m = await import('../draw/heatmap');"],
      ['ui/app.ts', "import uPlot from 'uplot';\nimport '../style.css';\nimport { Store } from '../settings/store';"],
      ['extras/thing.ts', ''],
    ]);
    expect(layerViolations(tree)).toEqual([
      'settings/settings.ts -> ../ui/lesson-mask: settings (layer 2) imports from ui, a higher layer (5)',
      'worker/session.ts -> ../client/controller: worker and client are peers that must not import each other',
      'model/heads.ts -> ../draw/heatmap: model (layer 1) imports from draw, a higher layer (3)',
      'extras/thing.ts: extras is in no layer (add it to LAYERS in tests/unit/layers.test.ts)',
    ]);
  });
});
