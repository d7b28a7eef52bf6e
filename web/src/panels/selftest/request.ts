// The self-test panel's request: the curriculum's checks on the live model, with the shipped
// PyTorch case.
import type { SelfTestResult } from '../../core/attention-core';
import { defineRequest } from '../../model/protocol';

/** The self-test's PyTorch case (cpp/attn/teach/selftest_case/short.*), as absolute URLs. */
export interface ReferenceFiles {
  weights: string;
  input: string;
  expected: string;
}

/** The self-test's results, and how long the core took (ms). */
export interface SelfTestReport {
  results: SelfTestResult[];
  ms: number;
}

/** The core's checks on the live model and the reference case at these URLs; when the case cannot
 * be fetched, its row (found by id) says why. */
export const selfTestRequest = defineRequest<ReferenceFiles, SelfTestReport>('selfTest', 'internal');
