// The self-test request: the core's checks on the live model, with the PyTorch case when it could
// be fetched; when it could not, the PyTorch row (found by its id) says why.
import type { ReferenceCase, SelfTestResult, Trainer } from '../core/attention-core';
import type { SelfTestReport } from '../model/protocol';

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
