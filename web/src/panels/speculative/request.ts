// The "Speculative decoding" panel's requests (task text): a draft for the live model (a small
// model trained in the worker on the run's text, or the bigram of that text), a speculative
// generation timed against plain decoding, the acceptance to expect against temperature and draft
// size, and the exactness check.
import type { DraftKind, Exactness, SamplingOptions, SpeculativeStats, TokenFate } from '../../core/attention-core';
import { defineRequest } from '../../model/protocol';

/** Which draft to make: the core's draftConfig trained for `steps` steps, or the bigram. */
export interface DraftSpec {
  kind: DraftKind;
  /** Training steps of a model draft (the core's draftSteps by default); unused by the bigram. */
  steps?: number;
}

/** The draft the worker holds. */
export interface DraftReport {
  kind: DraftKind;
  /** A model draft's layers, d_model and heads (0 for the bigram). */
  nLayers: number;
  dModel: number;
  nHeads: number;
  /** Training steps done (0 for the bigram) and the last step's loss (NaN for the bigram). */
  steps: number;
  loss: number;
  /** The run's training step when the draft was made. */
  targetStep: number;
}

/** A speculative generation's settings (prompt as characters of the run's text). */
export interface SpeculativeSpec {
  prompt: string;
  tokens: number;
  /** N, draft tokens per target pass, 1 to 8. */
  draftTokens: number;
  options: SamplingOptions;
  seed: number;
}

/** A speculative generation and plain decoding of as many tokens with the same settings. */
export interface SpeculativeReport {
  /** The run's step it read. */
  step: number;
  draft: DraftReport;
  /** The generated characters, one string per token, and each token's fate. */
  chars: string[];
  fates: TokenFate[];
  /** Plain decoding's characters (the target alone, one pass per token). */
  plainText: string;
  stats: SpeculativeStats;
  wallMs: number;
  plainMs: number;
  /** (1 - alpha^(N+1)) / (1 - alpha) at the mean sum min(p, q) (NaN before any judged token). */
  expectedFromOverlap: number;
}

/** The acceptance to expect (the core's expectedAcceptance: the mean sum min(p, q) over the
 * positions of a text) for each draft at each temperature. */
export interface AcceptanceTable {
  step: number;
  temperatures: number[];
  /** The text it was measured on (the validation split's first characters). */
  text: string;
  rows: { draft: string; kind: DraftKind | 'target'; dModel: number; nLayers: number; alpha: number[] }[];
}

/** The exactness check's result, with the vocabulary to label its tokens. */
export interface ExactnessReport extends Exactness {
  step: number;
  vocab: string;
  prompt: string;
}

/** Makes the draft (replacing the one held): a model draft trained on the run's text, or the
 * bigram of that text; held until the run changes. */
export const draftMakeRequest = defineRequest<DraftSpec, DraftReport>('draftMake', 'input');
/** A speculative generation with the held draft, and plain decoding timed after it. */
export const speculativeGenerateRequest = defineRequest<SpeculativeSpec, SpeculativeReport>('speculativeGenerate', 'input');
/** The acceptance to expect for the bigram, the held draft and the target itself at a few temperatures. */
export const acceptanceRequest = defineRequest<{ temperatures: number[] }, AcceptanceTable>('acceptance', 'input');
/** samples speculative continuations of the prompt: the first two tokens against the target's q. */
export const exactnessRequest = defineRequest<Omit<SpeculativeSpec, 'tokens'> & { samples: number }, ExactnessReport>('speculativeExactness', 'input');
