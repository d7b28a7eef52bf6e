// A Web Worker for node, enough for the threads build's pthread workers: `new Worker(url)` runs the
// script at url in a worker_threads Worker whose global looks like a dedicated worker's (self,
// postMessage, onmessage, importScripts, location, navigator). The script is imported as a module,
// which Emscripten's worker.js (a classic script that only assigns globals) runs unchanged.
// install() puts it (and navigator.hardwareConcurrency, which node 20 lacks) on globalThis.
import os from 'node:os';
import { Worker as NodeWorker } from 'node:worker_threads';

const BOOT = `
const { parentPort, workerData } = require('node:worker_threads');
globalThis.self = globalThis;
globalThis.location = new URL(workerData.url);
globalThis.navigator ??= { hardwareConcurrency: ${os.cpus().length} };
globalThis.importScripts = () => { throw new Error('importScripts is not available in this worker'); };
globalThis.postMessage = (message, transfer) => parentPort.postMessage(message, transfer);
// As in a browser, messages that arrive before the script has run wait for it.
let queue = [];
parentPort.on('message', (data) => (queue ? queue.push(data) : globalThis.onmessage?.({ data })));
import(workerData.url).then(() => {
  for (const data of queue) globalThis.onmessage?.({ data });
  queue = null;
}).catch((e) => { console.error(e); process.exit(1); });
`;

/** The Web Worker interface Emscripten's pthreads use, on node's worker_threads. */
export class WebWorker {
  onmessage = null;
  onerror = null;

  constructor(url) {
    this.worker = new NodeWorker(BOOT, { eval: true, workerData: { url: String(url) } });
    this.worker.on('message', (data) => this.onmessage?.({ data }));
    this.worker.on('error', (e) => this.onerror?.(e));
    this.worker.unref(); // idle pthread workers must not keep the process alive
  }

  postMessage(message, transfer) {
    this.worker.postMessage(message, transfer);
  }

  terminate() {
    return this.worker.terminate();
  }
}

/** Makes `new Worker(url)` and navigator.hardwareConcurrency work in this process. */
export function install() {
  globalThis.Worker ??= WebWorker;
  globalThis.navigator ??= { hardwareConcurrency: os.cpus().length };
}
