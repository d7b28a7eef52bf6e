// Vite config for the playground page: relative asset paths so dist/ works from any sub-path,
// module workers, and no external requests (everything is bundled, or emitted from the
// new URL('…', import.meta.url) references of src/client/assets.ts). Besides index.html it builds
// embed.html (the iframe page), copies examples/ verbatim (a mock course page that uses the built
// files as a lesson author would), and, in a second build, the npm package's modules:
// dist/attention-playground.js (the custom element) and dist/core.js.
import fs from 'node:fs';
import path from 'node:path';
import { build, defineConfig, type Plugin } from 'vite';
import { viridisLut } from './viridis-lut.mjs';

const root = import.meta.dirname;

/** The headers that make the page cross-origin isolated (so it may share memory with workers and
 * run the threads build), and that let other isolated pages load its files (CORP): those of
 * public/_headers, which static hosts that read that file send with dist/ (web/README.md). */
const ISOLATION_HEADERS: Record<string, string> = Object.fromEntries(
  fs.readFileSync(path.join(root, 'public/_headers'), 'utf8').split('\n').slice(1).filter((l) => l.trim()).map((l) => l.trim().split(/:\s*/) as [string, string]),
);

/** Copies web/examples/* to <outDir>/examples/ unchanged. */
function copyExamples(): Plugin {
  return {
    name: 'attention-playground:examples',
    apply: 'build',
    generateBundle() {
      const dir = path.join(root, 'examples');
      for (const name of fs.readdirSync(dir)) {
        this.emitFile({ type: 'asset', fileName: `examples/${name}`, source: fs.readFileSync(path.join(dir, name)) });
      }
    },
  };
}

/** Where emitted files go: the core's builds under wasm/ and the PyTorch case under reference/, with
 * their own names (stable URLs for a CDN and for lesson pages that load the core directly); other
 * assets hashed under assets/. */
function assetFileNames(asset: { names?: string[] }): string {
  const name = asset.names?.[0] ?? '';
  if (/^attention-core-(simd|scalar|threads|relaxed)\.(js|wasm)$|^attention-core-threads\.worker\.js$/.test(name)) return 'wasm/[name][extname]';
  if (/\.safetensors$/.test(name)) return 'reference/[name][extname]';
  return 'assets/[name]-[hash][extname]';
}

/**
 * After the pages, builds the npm package's modules into the same outDir: attention-playground.js
 * (src/element/index.ts: the custom element and the anywidget module) and core.js (src/core/index.ts:
 * the wasm core alone). Not a library build: that would inline the wasm as base64. A plain build
 * keeps every file it loads as new URL('…', import.meta.url), the pattern bundlers copy.
 */
function packageModules(): Plugin {
  let outDir = '';
  return {
    name: 'attention-playground:package',
    apply: 'build',
    configResolved(c) {
      outDir = c.build.outDir;
    },
    async closeBundle() {
      await build({
        configFile: false,
        root,
        base: './',
        publicDir: false,
        logLevel: 'warn',
        build: {
          outDir,
          emptyOutDir: false,
          target: 'es2022',
          copyPublicDir: false,
          assetsInlineLimit: 0,
          // No preload helper: its paths are relative to this build's layout, which a bundler that
          // installs the package rearranges (its dynamic imports it follows itself).
          modulePreload: false,
          rolldownOptions: {
            input: {
              'attention-playground': path.join(root, 'src/element/index.ts'),
              core: path.join(root, 'src/core/index.ts'),
            },
            preserveEntrySignatures: 'exports-only',
            // The lazily loaded learning panels (and what they share with the entry) go next to the worker.
            output: { entryFileNames: '[name].js', chunkFileNames: 'assets/[name]-[hash].js', assetFileNames },
          },
        },
        worker: { format: 'es', rolldownOptions: { output: { assetFileNames } } },
        plugins: [viridisLut()],
        // The element puts uPlot's CSS into its shadow root (?inline); the page's side-effect import
        // of it would make this build write a CSS file that nothing loads.
        resolve: { alias: [{ find: /^uplot\/dist\/uPlot\.min\.css$/, replacement: path.join(root, 'src/element/empty.ts') }] },
      });
    },
  };
}

export default defineConfig({
  root,
  base: './',
  publicDir: 'public',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    rolldownOptions: {
      input: {
        index: path.join(root, 'index.html'),
        embed: path.join(root, 'embed.html'),
      },
      output: { assetFileNames },
    },
  },
  worker: { format: 'es', rolldownOptions: { output: { assetFileNames } } },
  plugins: [viridisLut(), copyExamples(), packageModules()],
  // Cross-origin isolation (web/README.md, "Threads"): the page may then load the threads build.
  server: { host: '127.0.0.1', headers: ISOLATION_HEADERS },
  preview: { host: '127.0.0.1', headers: ISOLATION_HEADERS },
});
