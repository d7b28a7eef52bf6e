// The web side's layers, from its import graph: every import in web/src (static, dynamic, type-only
// and re-exports, as TypeScript's own scanner finds them, and the files an import.meta.glob
// matches) goes to the same layer or a lower one, never up, and never across between the worker's
// side and the page's. The order is declared once, below; `ls web/src` shows the same folders.
// A panel's folder (web/src/panels/<name>/) holds files of several layers, each named by its role;
// so does the folder of a view with requests of its own (web/src/views/<name>/).
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
/** The units that run in the worker, and those that run on the page: neither imports the other's
 * code (the page is above the worker in the order, so the order alone would let it). */
const WORKER_SIDE = ['worker'];
const PAGE_SIDE = ['client', 'ui', 'element', 'main.ts'];
/** The files that stay at the top of web/src: the page's entry and what the build needs there. */
const TOP_LEVEL_FILES = ['main.ts', 'style.css', 'vendor.d.ts'];
/** The folder of panels, whose files each belong to the layer of their role. */
const PANELS = 'panels';
/** The folder of the views that have requests of their own (the lesson, the block): a folder each,
 * whose request.ts and handler.ts have the roles of a panel's and whose other files are the view's
 * page code (the ui layer). */
const VIEWS = 'views';
/**
 * The layer of each file of panels/, by its name: the registry (which panels exist) and each
 * panel's request.ts (its requests, declared once) are shared data, its handler.ts (what answers
 * them) runs in the worker, its model.ts (state and lifecycle) and view.ts (DOM) on the page; the
 * two tables built from the folders go with the side they serve.
 */
const PANEL_ROLES: readonly [RegExp, string][] = [
  [/^panels\/registry\.ts$/, 'model'],
  [/^panels\/[a-z0-9-]+\/request\.ts$/, 'model'],
  [/^panels\/(handlers|[a-z0-9-]+\/handler)\.ts$/, 'worker'],
  [/^panels\/(views|[a-z0-9-]+\/(model|view))\.ts$/, 'ui'],
  [/^views\/[a-z0-9-]+\/request\.ts$/, 'model'],
  [/^views\/[a-z0-9-]+\/handler\.ts$/, 'worker'],
  [/^views\/[a-z0-9-]+\/[a-z0-9-]+\.ts$/, 'ui'],
];

/** The unit of a path under web/src: its top folder, the file name at the top, or for a file of
 * panels/ or views/ the layer of its role ('' for a file of no role). */
function unitOf(rel: string): string {
  const top = rel.split('/')[0];
  if (top !== PANELS && top !== VIEWS) return top;
  return PANEL_ROLES.find(([re]) => re.test(rel))?.[1] ?? '';
}
const rankOf = (unit: string): number => LAYERS.findIndex((l) => l.includes(unit));

/** An import that only asks the bundler for a file's URL (Vite's ?url, ?worker&url, ?inline). */
const isAssetUrl = (spec: string): boolean => /\?(?:[a-z]+&)*(?:url|inline)$/.test(spec);

/** Every import specifier of a module's text. */
function importsOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** The patterns of a module's import.meta.glob calls (Vite bundles every file they match). */
function globsOf(text: string): string[] {
  return [...text.matchAll(/import\.meta\.glob(?:<[^>]*>)?\(\s*(['"])(.+?)\1/g)].map((m) => m[2]);
}

/** The files of the tree a glob pattern (relative to the module at rel) matches, as specifiers. */
function globMatches(rel: string, pattern: string, tree: ReadonlyMap<string, string>): string[] {
  const dir = path.posix.dirname(rel);
  const full = path.posix.normalize(path.posix.join(dir, pattern));
  const re = new RegExp(`^${full.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*\//g, '(?:.*/)?').replace(/\*/g, '[^/]*')}$`);
  return [...tree.keys()].filter((f) => re.test(f)).map((f) => `./${path.posix.relative(dir, f)}`);
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
    if (from === '') {
      out.push(`${rel}: a file of ${rel.split('/')[0]}/ in no role (${rel.startsWith(VIEWS) ? '<view>/request.ts, handler.ts or its page files' : 'registry.ts, <panel>/request.ts, handler.ts, model.ts or view.ts'})`);
      continue;
    }
    if (rank < 0) {
      out.push(`${rel}: ${from} is in no layer (add it to LAYERS in tests/unit/layers.test.ts)`);
      continue;
    }
    const specs = [...importsOf(text), ...globsOf(text).flatMap((g) => globMatches(rel, g, files))];
    for (const spec of specs) {
      if (!spec.startsWith('.')) continue; // a package or a virtual module
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec.split('?')[0]));
      if (target.startsWith('../')) continue; // a file outside web/src: the wasm builds, the reference case
      const to = unitOf(/\.[a-z]+$/.test(target) ? target : `${target}.ts`); // an import names a module without its .ts
      if (to === from || to === 'style.css') continue;
      const toRank = rankOf(to);
      if (toRank < 0) out.push(`${rel} -> ${spec}: ${to || target} is in no layer`);
      else if (PAGE_SIDE.includes(from) && WORKER_SIDE.includes(to) && !isAssetUrl(spec)) out.push(`${rel} -> ${spec}: the page (${from}) imports the worker's code (${to})`);
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
    expect(folders).toEqual([...LAYERS.flat().filter((u) => !u.includes('.')), PANELS, VIEWS].sort());
    expect(files).toEqual([...TOP_LEVEL_FILES].sort());
  });

  test('the check finds what breaks the layering (an upward import, a peer import, the page importing the worker, a folder or a panel or view file in no layer)', () => {
    const tree = new Map([
      ['settings/settings.ts', "import { cleanMask } from '../ui/lesson-mask';\nimport type { Snapshot } from '../model/protocol';"],
      ['worker/session.ts', "export { Controller } from '../client/controller';"],
      ['client/assets.ts', "import workerUrl from '../worker/worker.ts?worker&url';\nimport w from '../../../tests/reference/data/a.safetensors?url';"],
      ['model/heads.ts', "const m = await import('../draw/heatmap');"],
      ['ui/app.ts', "import uPlot from 'uplot';\nimport '../style.css';\nimport { Store } from '../settings/store';"],
      ['extras/thing.ts', ''],
      ['ui/train-view.ts', "import { session } from '../worker/session';"],
      ['panels/registry.ts', ''],
      ['panels/views.ts', "const views = import.meta.glob<{ mount: M }>('./*/view.ts', { eager: true });\nconst bad = import.meta.glob('./*/handler.ts');"],
      ['panels/handlers.ts', "const all = import.meta.glob('./*/handler.ts', { eager: true });"],
      ['panels/p/request.ts', "import { defineRequest } from '../../model/protocol';\nimport type { State } from '../../settings/settings';"],
      ['panels/p/handler.ts', "import { handle } from '../../worker/context';\nimport { pRequest } from './request';\nimport { h } from '../../ui/dom';"],
      ['panels/p/model.ts', "import { PanelModel } from '../../ui/panel-model';\nimport { pRequest } from './request';\nimport { answer } from './handler';"],
      ['panels/p/view.ts', "import { PModel } from './model';\nimport type { Controller } from '../../client/controller';"],
      ['panels/p/extra.ts', ''],
      ['views/v/request.ts', "import { defineRequest } from '../../model/protocol';"],
      ['views/v/handler.ts', "import { handle } from '../../worker/context';\nimport { vRequest } from './request';\nimport { fig } from './figures';"],
      ['views/v/view.ts', "import { vRequest } from './request';\nimport { fig } from './figures';\nimport { h } from '../../ui/dom';\nimport { answer } from './handler';"],
      ['views/v/figures.ts', "import { matrixSvg } from '../../draw/matrix-svg';"],
      ['views/loose.ts', ''],
    ]);
    expect(layerViolations(tree)).toEqual([
      'settings/settings.ts -> ../ui/lesson-mask: settings (layer 2) imports from ui, a higher layer (5)',
      'worker/session.ts -> ../client/controller: worker and client are peers that must not import each other',
      'model/heads.ts -> ../draw/heatmap: model (layer 1) imports from draw, a higher layer (3)',
      'extras/thing.ts: extras is in no layer (add it to LAYERS in tests/unit/layers.test.ts)',
      "ui/train-view.ts -> ../worker/session: the page (ui) imports the worker's code (worker)",
      "panels/views.ts -> ./p/handler.ts: the page (ui) imports the worker's code (worker)",
      'panels/p/request.ts -> ../../settings/settings: model (layer 1) imports from settings, a higher layer (2)',
      'panels/p/handler.ts -> ../../ui/dom: worker (layer 4) imports from ui, a higher layer (5)',
      "panels/p/model.ts -> ./handler: the page (ui) imports the worker's code (worker)",
      'panels/p/extra.ts: a file of panels/ in no role (registry.ts, <panel>/request.ts, handler.ts, model.ts or view.ts)',
      'views/v/handler.ts -> ./figures: worker (layer 4) imports from ui, a higher layer (5)',
      "views/v/view.ts -> ./handler: the page (ui) imports the worker's code (worker)",
      'views/loose.ts: a file of views/ in no role (<view>/request.ts, handler.ts or its page files)',
    ]);
  });
});
