// The Generate panel's requests (task text): a generation on the live model (started with its
// prompt, streamed a few characters at a time, ended), one short sample for the strip of samples
// over training, and the KV cache's speed-up.
import type { SamplingOptions } from '../../core/attention-core';
import { defineRequest, type Matrix } from '../../model/protocol';

/** What the Generate panel asks for (task text): the prompt, how many characters, the strategy
 * (the core's nextTokenDistribution options) and the seed of the draw. */
export interface GenerateSpec {
  prompt: string;
  tokens: number;
  options: SamplingOptions;
  seed: number;
}

/** A generation once its prompt is pushed. */
export interface GenerateStarted {
  /** The corpus's characters: token id = index. */
  vocab: string;
  /** The training step of the model it reads. */
  step: number;
  promptTokens: number;
  /** The decoder's window (the context slides past it) and whether it uses the KV cache. */
  window: number;
  cached: boolean;
  nLayers: number;
  nHeads: number;
}

/** One generated character and why it was picked. */
export interface GeneratedStep {
  token: number;
  /** The core's nextTokenDistribution of the logits with the defaults (softmax at temperature 1). */
  before: Float32Array;
  /** The same with the strategy: what the token was drawn from. */
  after: Float32Array;
  /** (L*H, context) the attention of the position that predicted it (row l*H + h). */
  attention: Matrix;
  /** The context's ids, oldest first (attention's columns). */
  context: Int32Array;
}

export interface GenerateChunk {
  steps: GeneratedStep[];
  /** The characters of steps. */
  text: string;
  /** No characters left (the generation is freed). */
  done: boolean;
}

/** One sample of the strip of samples over training. */
export interface TextSample {
  step: number;
  text: string;
}

/** The KV cache's speed-up: the same greedy characters from the same prompt, twice. */
export interface CacheSpeed {
  step: number;
  tokens: number;
  cached: { ms: number; tokensPerSec: number };
  uncached: { ms: number; tokensPerSec: number };
  /** cached tokens/s over uncached tokens/s. */
  ratio: number;
  /** Whether both produced the same characters (they should: the same logits within 1e-5). */
  same: boolean;
  /** The decoders' window, and the prompt's length in tokens. */
  window: number;
  promptTokens: number;
}

/** A Decoder (KV cache) and a Sampler(seed) on the live model, the prompt pushed; replaces the
 * previous generation. A character outside the vocabulary: the core's `input` error naming it. */
export const generateStartRequest = defineRequest<GenerateSpec, GenerateStarted>('generateStart', 'input');
/** The next n (<= 64) characters, each with its distributions before and after the strategy and
 * its attention; a `state` error once the model trained on since the start. */
export const generateNextRequest = defineRequest<{ n: number }, GenerateChunk>('generateNext', 'input');
/** Frees the generation (done or stopped). */
export const generateEndRequest = defineRequest<void, void>('generateEnd', 'internal');
/** One short sample of the live model (the strip of samples over training). */
export const textSampleRequest = defineRequest<GenerateSpec, TextSample>('textSample', 'input');
/** The same greedy characters with and without the KV cache: tokens/s of each. */
export const cacheSpeedRequest = defineRequest<{ prompt: string; tokens: number }, CacheSpeed>('cacheSpeed', 'input');
