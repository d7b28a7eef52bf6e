// The self-test request: the core's checks on the live model, with the PyTorch case when it could
// be fetched (once per session, kept; a failed fetch is tried again on the next run); when it
// could not, the PyTorch row (found by its id) says why.
import type { ReferenceCase, SelfTestResult, Trainer } from '../../core/attention-core';
import { handle, type FetchBytes, type Held } from '../../worker/context';
import { messageOf } from '../../worker/post';
import { selfTestRequest, type ReferenceFiles, type SelfTestReport } from './request';

/** The id of the check that compares with the PyTorch reference case. */
export const PYTORCH_REFERENCE = 'pytorch_reference';

/** Runs the checks on trainer (now() times them, in ms); loadError: why the reference case is
 * missing (empty when it was loaded). */
export function runSelfTest(trainer: Trainer, reference: ReferenceCase | null, loadError: string, now: () => number): SelfTestReport {
  const t0 = now();
  const results = trainer.selfTest(reference);
  const ms = now() - t0;
  if (loadError) explainMissingReference(results, loadError);
  return { results, ms };
}

/** Puts the reason the reference case could not be loaded on its own row. */
export function explainMissingReference(results: SelfTestResult[], loadError: string): void {
  const row = results.find((r) => r.id === PYTORCH_REFERENCE);
  if (row) row.detail = `The PyTorch reference case could not be loaded: ${loadError}.`;
}

/** The reference case's three files, fetched once for a given set of URLs. */
export class ReferenceCache implements Held {
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

  /** Nothing of the core's to free. */
  free(): void {}
}

/** The checks on the live model, with the reference case when it loads. */
export const handlers = [
  handle(selfTestRequest, async (ctx, files) => {
    ctx.run();
    let cache = ctx.held<ReferenceCache>('reference');
    if (!cache) ctx.hold('reference', (cache = new ReferenceCache(ctx.fetchBytes)));
    let reference = null;
    let loadError = '';
    try {
      reference = await cache.load(files);
    } catch (e) {
      loadError = messageOf(e);
    }
    return runSelfTest(ctx.run().trainer, reference, loadError, ctx.now);
  }),
];
