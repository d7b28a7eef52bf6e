// The requests of view 2 ("Self-attention from scratch"), whose page code is view.ts and panels.ts
// here: every stage of H heads from the core's inputs, the sqrt(dk) panel's demo and
// the stability panel's two softmaxes. None needs a Trainer.
import type { SelfAttentionStages as CoreStages, ScalingDemo, SoftmaxSteps } from '../../core/attention-core';
import { defineRequest, type Matrix } from '../../model/protocol';

/** Inputs of view 2: the core makes the embeddings and every head's projections from the seed
 * (lessonInputs), then computes every stage (addPositions, multiHeadSelfAttention). */
export interface SelfAttentionRequest {
  /** The sequence: the first sentence's tokens, then the second's (if any). */
  tokens: string[];
  /** Tokens of the first sentence (= tokens.length with one sentence). Default: all. */
  split?: number;
  dModel: number;
  dk: number;
  dv: number;
  /** Heads, 1 to 4 (default 1). */
  heads?: number;
  seed: number;
  /** X = token embedding + sinusoidal position encoding (default false). */
  positions?: boolean;
  /** T*T cells, 1 = masked (see settings/lesson-mask.ts); default: none masked. */
  mask?: Uint8Array;
}

/** One head of view 2: its projections (the core's lessonInputs) and every stage the core computed. */
export interface LessonHead extends CoreStages {
  Wq: Matrix;
  Wk: Matrix;
  Wv: Matrix;
}

/** One sentence run alone through the same weights (two sentences side by side). */
export interface SentenceAlone {
  tokens: string[];
  /** Each head's weights (T,T) and the output concat Wo (T,D). */
  weights: Matrix[];
  output: Matrix;
}

/** Inputs and every stage the core computed for view 2. */
export interface SelfAttentionStages {
  tokens: string[];
  split: number;
  positions: boolean;
  /** The cells the core masked (T*T, 1 = masked). */
  mask: Uint8Array;
  /** Token embeddings E (T,D); the position table P (T,D), null without positions; X = E (+ P). */
  E: Matrix;
  P: Matrix | null;
  X: Matrix;
  heads: LessonHead[];
  /** (T, H*dv), the output projection (H*dv, D) without bias, and concat Wo (T,D). */
  concat: Matrix;
  Wo: Matrix;
  projected: Matrix;
  /** With two sentences: each sentence alone (its own positions from 0, its diagonal block of
   * the mask); else empty. */
  apart: SentenceAlone[];
}

export type { ScalingDemo, SoftmaxSteps };

/** View 2's stability panel: the same logits through the textbook and the stable softmax. */
export interface SoftmaxComparison {
  logits: Float32Array;
  naive: SoftmaxSteps;
  stable: SoftmaxSteps;
}

/** Every stage of 1-4 heads, concat and W_o, a cell mask, positions (multiHeadSelfAttention,
 * addPositions). */
export const selfAttentionRequest = defineRequest<SelfAttentionRequest, SelfAttentionStages>('selfAttention', 'input');
/** The sqrt(dk) panel: one seeded query row at width dk against `keys` keys (scalingDemo). */
export const scalingDemoRequest = defineRequest<{ dk: number; keys: number; seed: number }, ScalingDemo>('scalingDemo', 'input');
/** The stability panel: the logits' softmax (float32) without and with the max subtracted, every
 * intermediate (softmaxSteps). */
export const softmaxStepsRequest = defineRequest<{ logits: number[] }, SoftmaxComparison>('softmaxSteps', 'input');
