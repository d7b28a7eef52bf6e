// Every file the playground loads at run time besides its own chunks: the worker, the builds
// of the core (only the one that runs is fetched), and the PyTorch case of the self-test. Each is written as new URL('…',
// import.meta.url) in the built module (Vite's ?url and ?worker&url imports compile to it), which
// is the one pattern bundlers follow to copy a file, and which makes a copy served from a CDN load
// everything from the CDN, never relative to the page.
import workerUrl from '../worker/worker.ts?worker&url';
import referenceWeights from '../../../cpp/attn/teach/selftest_case/short.weights.safetensors?url';
import referenceInput from '../../../cpp/attn/teach/selftest_case/short.input.safetensors?url';
import referenceExpected from '../../../cpp/attn/teach/selftest_case/short.expected.safetensors?url';
import { absolute, CORE_FILES } from '../core/core-files';
import type { CoreFiles } from '../core/load-core.js';
import type { ReferenceFiles } from '../panels/selftest/request';

/** Absolute URLs of everything the worker loads. */
export interface Assets {
  worker: string;
  core: { simd: CoreFiles; scalar: CoreFiles; relaxed: CoreFiles; threads?: CoreFiles };
  reference: ReferenceFiles;
}

/** This build's files. */
export const ASSETS: Assets = {
  worker: absolute(workerUrl),
  core: CORE_FILES,
  reference: { weights: absolute(referenceWeights), input: absolute(referenceInput), expected: absolute(referenceExpected) },
};
