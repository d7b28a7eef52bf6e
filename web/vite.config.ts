// Vite config for the playground page: relative asset paths so dist/ works from any sub-path,
// module workers, and no external requests (everything is bundled or served from public/).
// Besides index.html it builds embed.html (the iframe page), copies examples/ verbatim (a mock
// course page that uses the built files as a lesson author would), and, in a second build, the
// custom element as ONE ES module, dist/attention-playground.js (its worker goes to assets/).
import fs from 'node:fs';
import path from 'node:path';
import { build, defineConfig, type Plugin } from 'vite';

const root = import.meta.dirname;

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

/** The PyTorch reference case the self-test panel checks (tests/reference/data/short.*), served
 * and emitted as reference/<file>: one copy in the repository, none in web/. */
function referenceCase(): Plugin {
  const dir = path.join(root, '../tests/reference/data');
  const files = ['weights', 'input', 'expected'].map((kind) => `short.${kind}.safetensors`);
  return {
    name: 'attention-playground:reference',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const name = /\/reference\/([^/?#]+)$/.exec(req.url ?? '')?.[1];
        if (!name || !files.includes(name)) return next();
        res.setHeader('content-type', 'application/octet-stream');
        res.end(fs.readFileSync(path.join(dir, name)));
      });
    },
    generateBundle() {
      for (const name of files) this.emitFile({ type: 'asset', fileName: `reference/${name}`, source: fs.readFileSync(path.join(dir, name)) });
    },
  };
}

/** After the pages, builds src/element/index.ts as a library into the same outDir. */
function elementModule(): Plugin {
  let outDir = '';
  return {
    name: 'attention-playground:element',
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
          lib: {
            entry: path.join(root, 'src/element/index.ts'),
            formats: ['es'],
            fileName: () => 'attention-playground.js',
          },
          // The lazily loaded learning panels (and what they share with the entry) go next to the
          // worker, as assets of the one entry module.
          rolldownOptions: { output: { chunkFileNames: 'assets/[name]-[hash].js' } },
        },
        worker: { format: 'es' },
        // The element puts uPlot's CSS into its shadow root (?inline); the page's side-effect import
        // of it would make a library build write a CSS file that nothing loads.
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
    rolldownOptions: {
      input: {
        index: path.join(root, 'index.html'),
        embed: path.join(root, 'embed.html'),
      },
    },
  },
  worker: { format: 'es' },
  plugins: [copyExamples(), referenceCase(), elementModule()],
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
});
