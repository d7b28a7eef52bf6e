// Entry of dist/attention-playground.js: one ES module that defines <attention-playground>.
// The worker and the wasm folder are found next to this module (relative URLs), so the folder can
// be copied to any sub-path of a static site: <script type="module" src=".../attention-playground.js">.
import { defineAttentionPlayground } from './element';

/** The wasm folder, next to this module; a variable so that Vite leaves the URL to the browser. */
const WASM_DIR = 'wasm/';

/** A module worker from this module's folder; from a cross-origin copy, through a same-origin blob. */
function makeWorker(): Worker {
  const url = new URL('../worker.ts', import.meta.url);
  try {
    return new Worker(url, { type: 'module', name: 'attention-trainer' });
  } catch (e) {
    // A page may load the module from another origin (a CDN), where new Worker(url) is refused.
    if (!(e instanceof DOMException && e.name === 'SecurityError')) throw e;
    const blob = new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' });
    return new Worker(URL.createObjectURL(blob), { type: 'module', name: 'attention-trainer' });
  }
}

defineAttentionPlayground({ makeWorker, wasmBase: () => new URL(WASM_DIR, import.meta.url).href });

export { AttentionPlaygroundElement } from './element';
export type { ErrorDetail, ReadyDetail, StepDetail } from './element';
export { HIDE_GROUPS } from './attributes';
