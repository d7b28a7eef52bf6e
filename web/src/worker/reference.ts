// The self-test's PyTorch reference case (cpp/attn/teach/selftest_case/short.*, shipped with the page):
// fetched once per session and kept; a failed fetch is tried again on the next run.
import type { ReferenceCase } from '../core/attention-core';
import type { ReferenceFiles } from '../model/protocol';

/** Reads the bytes at url (the worker: fetch; a test: the file system). */
export type FetchBytes = (url: string) => Promise<Uint8Array>;

/** fetch(url) as bytes; an HTTP error status throws, naming the URL. */
export async function fetchBytes(url: string): Promise<Uint8Array> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url} answered ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

/** The reference case's three files, fetched once for a given set of URLs. */
export class ReferenceCache {
  #key = '';
  #loading: Promise<ReferenceCase> | null = null;

  constructor(private readonly fetchBytes: FetchBytes) {}

  /** The case at files (from the cache when the same URLs were loaded before). */
  load(files: ReferenceFiles): Promise<ReferenceCase> {
    const key = JSON.stringify([files.weights, files.input, files.expected]);
    if (!this.#loading || key !== this.#key) {
      this.#key = key;
      const loading = Promise.all([files.weights, files.input, files.expected].map((url) => this.fetchBytes(url))).then(([weights, input, expected]) => ({ weights, input, expected }));
      loading.catch(() => {
        if (this.#loading === loading) this.#loading = null;
      });
      this.#loading = loading;
    }
    return this.#loading;
  }
}
