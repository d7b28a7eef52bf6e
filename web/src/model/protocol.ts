// The message protocol between the page (controller) and the worker that owns the wasm core.
// This file is the one place it is written down. Every request carries an `id`; the worker
// answers it with exactly one reply whose `replyTo` is that id and whose `type` is the one the
// request names below, or with an `error` reply. Events (`progress`, `stopped`) carry no
// `replyTo`: the worker sends them on its own while it is playing.
//
//   request            reply              what it does
//   init               ready              load the SIMD or scalar build (feature-detected)
//   configure          configured         new Trainer(config) + attention of the sample, under the
//                                          ablation if given (else the kept one), which must have
//                                          one flag per head (else an `input` error); resets
//                                          (task text: on the corpus given, else the one kept,
//                                          else the core's default)
//   useCorpus          configured         task text: a new Trainer on this corpus (null: the
//                                          default), config and sample as they are, back to step
//                                          0; a bad corpus (`input`) leaves the run untouched
//                                          and playing
//   reset              configured         the same config again, back to step 0
//   step               stepped            run n steps (n <= 1000) and report
//   play               playing            train in ~15 ms chunks; `progress` events follow
//   pause              paused             stop after the current chunk
//   sample             sampled            change the sequence the heatmaps show (ids, or a seed
//                                          of the task's generator)
//   selfAttention      selfAttentionDone  every head, every stage (view 2)
//   transformerBlock   transformerBlockDone  one block of the config's model at its seeded
//                                          init on the sample, every stage (view 3)
//   scalingDemo        scalingDemoDone    view 2's sqrt(dk) panel: one seeded query row at width dk
//   softmaxSteps       softmaxStepsDone   view 2's stability panel: a row's softmax without and
//                                          with the max subtracted, every intermediate
//   exportWeights      exported           the weights as a safetensors file, plus the snapshot
//   importRun          configured         new Trainer(config or the current config), then
//                                          importWeights(weights) if given; all or nothing: on
//                                          an error the current run is untouched (and keeps playing)
//   ablate             ablated            set the interventions (head off/frozen, scaling, mask)
//                                          and measure eval loss/accuracy and head statistics with
//                                          and without them; kept across reset, configure, import
//   timeline           timelineDone       the attention snapshots kept so far (after `since`)
//   rowBackward        rowBackwardDone    one query row of one head, forward and backward
//   selfTest           selfTestDone       the curriculum's invariants on the live model + the
//                                          shipped PyTorch case (fetched from reference)
//   headScores         headScoresDone     per-head previous-token, prefix-matching and
//                                          K-composition scores (the core's headScores())
//   predictions        predictionsDone    the model's top 3 next tokens at each position of the
//                                          sample, and the task's answers
//   lengths            lengthsDone        the live model on its task at other lengths (evaluateAt):
//                                          loss, accuracy and accuracy per position per length
//   comparisonStart    comparisonStarted  a second Trainer, apart from the run (the "compare the
//                                          position methods" preset); replaces the previous one
//   comparisonStep     comparisonStepped  n steps (n <= 1000) of that Trainer
//   comparisonLengths  comparisonLengthsDone  that Trainer at other lengths, as `lengths`
//   comparisonEnd      comparisonEnded    frees that Trainer (done or cancelled)
//   generateStart      generateStarted    task text: a Decoder (KV cache) and a Sampler(seed) on the
//                                          live model, the prompt pushed; replaces the previous one
//   generateNext       generateChunk      the next n (<= 64) characters, each with its distributions
//                                          before and after the strategy and its attention; a
//                                          `state` error once the model trained on since the start
//   generateEnd        generateEnded      frees that generation (done or stopped)
//   textSample         textSampled        one short sample of the live model (the samples strip)
//   cacheSpeed         cacheSpeedDone     the same greedy characters with and without the KV
//                                          cache: tokens/s of each
//   inspect            inspectDone        look inside the live model on the sample (trainer.inspect):
//                                          logit lens, attribution, patching, QK/OV circuits
//
//   event              when
//   progress           while playing, at most every `intervalMs` (default 50 ms)
//   stopped            playing stopped on its own (non-finite loss, or an error in a step)
//
// Typed arrays in replies are transferred, never shared: the page owns what it receives.
import type {
  Ablation as CoreAblation,
  Evaluation,
  LengthEvaluation,
  HeadScores,
  MaskMode,
  RowBackward,
  SelfTestResult,
  Matrix as CoreMatrix,
  ResolvedTrainerConfig,
  SelfAttentionStages as CoreStages,
  TransformerBlockStages,
  ScalingDemo,
  SoftmaxSteps,
  SamplingOptions,
  TextCorpusInfo,
  TextEvaluation,
  CorpusInput,
  Inspection,
} from '../core/attention-core';
import type { CoreFiles } from '../core/load-core.js';

/** Trainer config: every key of the core's JS API the page sets, resolved. */
export type TrainerConfigMsg = Omit<ResolvedTrainerConfig, NotOnThePage>;

/** The core's config keys the page does not set yet (masked language modelling and the
 * attention variants): its Trainers take their defaults. `window` is also the lesson's own
 * setting (view 2's sliding window, settings.ts), a name the page must settle when it takes the
 * core's. */
export type NotOnThePage = 'objective' | 'maskRate' | 'attention' | 'window' | 'stride' | 'differential';

/** Everything the page draws for one moment of training. */
export interface Snapshot {
  /** Steps done since the last configure/reset. */
  step: number;
  /** Loss of the last step; before any step, the loss of the first batch at init. */
  loss: number;
  /** True while `loss` is the loss at init (step 0). */
  lossAtInit: boolean;
  /** The loss at init: the first batch's loss under the initial weights (chart's step 0). */
  initLoss: number;
  /** Training speed over the last second (0 when not playing). */
  stepsPerSec: number;
  /** Loss of every `historyStride`-th step, from step 1. */
  history: Float32Array;
  historyStride: number;
  /** The sample sequence and its attention weights (L,H,T,T), eval mode: global head g = l * H + h. */
  ids: Int32Array;
  weights: Float32Array;
  /** Heads per layer, and layers. */
  H: number;
  L: number;
  T: number;
  /** K/V heads per layer (= H without grouped-query attention). */
  kvHeads: number;
  /** The mask the weights were computed under (heatmaps hatch only what it really masks). */
  mask: MaskMode;
  /** The step of the phase change (the core's phaseChange(), counted as `step` is), -1: none yet. */
  phaseChange: number;
  /** Task text: the corpus and the validation curve; null for the other tasks. */
  text: TextReadout | null;
}

/** The text task's numbers: the corpus (Trainer.corpus()) and the model on the validation split
 * (evaluateText) at the steps it was measured. */
export interface TextReadout {
  corpus: TextCorpusInfo;
  /** Whether the corpus is the core's default one. */
  defaultCorpus: boolean;
  /** Steps at which the validation loss was measured (ascending), and what it was there. */
  valSteps: number[];
  valLoss: number[];
  /** The latest measurement (null before the first). */
  last: (TextEvaluation & { step: number }) | null;
}

export type { CorpusInput, TextCorpusInfo, TextEvaluation };
export type { Evaluation, Inspection, HeadScores, LengthEvaluation, MaskMode, RowBackward, SelfTestResult };

/** A model at one sequence length: the core's evaluation, or why it cannot be evaluated there
 * (a learned position table shorter than the length: kind `config`, key maxSeqLen). */
export interface LengthRow {
  length: number;
  evaluation: LengthEvaluation | null;
  problem: { kind: ErrorKind; message: string; key?: string } | null;
}

/** A model at several lengths (the "Longer than trained" panel). */
export interface LengthsReport {
  /** Steps the model was trained for. */
  step: number;
  config: TrainerConfigMsg;
  /** One row per length asked for, in that order. */
  rows: LengthRow[];
}

/** The "Look inside" panel's numbers: trainer.inspect on the sample (the core's, unchanged). */
export interface InspectReport {
  step: number;
  task: TrainerConfigMsg['task'];
  vocabSize: number;
  nLayers: number;
  nHeads: number;
  /** The sample (clean input), T ids. */
  ids: Int32Array;
  /** The corrupted input patched, or null (no patching: see patchingNote). */
  corrupted: Int32Array | null;
  /** The index of the token the default corruption changed (-1: the learner's own input). */
  changed: number;
  /** Why there is no patching (the induction sample has no repeat), else ''. */
  patchingNote: string;
  inspection: Inspection;
}

/** Every intervention, resolved (one flag per head of every layer, global index l * H + h). */
export type Ablation = Required<CoreAblation>;

/** Per-head statistics over a fixed eval batch (see the core's attentionStats). */
export interface HeadStats {
  entropy: Float32Array;
  maxWeight: Float32Array;
  answerMass: Float32Array;
}

/** What the ablation panel shows: the run measured without and with the interventions. */
export interface AblationReport {
  ablation: Ablation;
  intact: Evaluation;
  ablated: Evaluation;
  intactStats: HeadStats;
  ablatedStats: HeadStats;
  /** The per-head scores (headScores()) without and with the interventions. */
  intactScores: HeadScores;
  ablatedScores: HeadScores;
  /** The step the measurement was taken at. */
  step: number;
  task: TrainerConfigMsg['task'];
}

/** One timeline snapshot: the sample's attention (L,H,T,T) and the head statistics and scores
 * (L*H each, global head index) at a step; the four head arrays are empty at the snapshots that do
 * not measure the heads (model/timeline.ts, HEADS_EVERY). */
export interface TimelineEntry {
  step: number;
  loss: number;
  ids: Int32Array;
  weights: Float32Array;
  H: number;
  L: number;
  T: number;
  mask: MaskMode;
  entropy: Float32Array;
  answerMass: Float32Array;
  /** headScores()'s previous-token and prefix-matching scores. */
  previousToken: Float32Array;
  prefixMatching: Float32Array;
}

/** The timeline: which steps are kept, the new entries, and the policy (model/timeline.ts). */
export interface Timeline {
  /** Every kept step, ascending (entries the page holds for other steps were thinned out). */
  steps: number[];
  /** The kept entries with step > since (all of them when since is -1). */
  entries: TimelineEntry[];
  /** A snapshot is taken every `every` steps; it doubles when the timeline is full. */
  every: number;
  capacity: number;
  /** Bytes the kept entries hold in the worker. */
  bytes: number;
}

/** The core's per-head scores at a step (the composition figure). */
export interface HeadScoresReport {
  scores: HeadScores;
  step: number;
}

/** One query row of one head (the core's rowBackward), with what it was computed for. */
export interface RowBackwardReport {
  ids: Int32Array;
  /** The global head index l * H + h. */
  head: number;
  query: number;
  target: number;
  /** task: the task's answer at this position; next: the next sample token (the task has no
   * answer here); last: the position's own token (last position, no answer); chosen: given. */
  targetSource: 'task' | 'next' | 'last' | 'chosen';
  row: RowBackward;
}

/** The model's k most likely next tokens at each position of the sample (the predictions panel). */
export interface PredictionsReport {
  /** The step the model was at. */
  step: number;
  task: TrainerConfigMsg['task'];
  /** The sample (T ids). */
  ids: Int32Array;
  k: number;
  /** (T, k) row-major: the k most likely tokens at each position, most likely first. */
  top: Int32Array;
  /** (T, k): their probabilities, a softmax of the core's logits (eval mode, the ablation in force). */
  probs: Float64Array;
  /** The task's answer at each position (the core's taskTargets); -100 where it sets none. */
  answers: Int32Array;
  /** The probability the model gives the answer (NaN where there is none). */
  answerProbs: Float64Array;
  /** Task text: the corpus's characters (token id i is the i-th); null for the other tasks. */
  vocab: string | null;
}

/** The self-test's results, and how long the core took (ms). */
export interface SelfTestReport {
  results: SelfTestResult[];
  ms: number;
}
/** Inputs of view 2: the worker derives the embeddings and every head's projections from the
 * seed, then calls the core (addPositions, multiHeadSelfAttention). */
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

/** A (rows, cols) row-major matrix, as the core returns it. */
export type Matrix = CoreMatrix;

/** One head of view 2: its seeded projections and every stage the core computed. */
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

/** Inputs of view 3: the config's model (one layer of it, at its seeded init) run on the sample
 * (ids, or a draw of the task's generator); ropePair and ropeHead pick the RoPE pair drawn. */
export interface BlockRequest {
  config: TrainerConfigMsg;
  sample: SampleSpec;
  ropePair?: number;
  ropeHead?: number;
}

/** Every stage of the block (the core's transformerBlock) and the token ids it ran on. */
export interface BlockStages extends TransformerBlockStages {
  ids: Int32Array;
}

/** View 2's stability panel: the same logits through the textbook and the stable softmax. */
export interface SoftmaxComparison {
  logits: Float32Array;
  naive: SoftmaxSteps;
  stable: SoftmaxSteps;
}

/** The self-test's PyTorch case (tests/reference/data/short.*), as absolute URLs. */
export interface ReferenceFiles {
  weights: string;
  input: string;
  expected: string;
}

/** The sample a request asks for: token ids, or the sequence the run's task generator draws
 * with this seed (the core's taskSample). */
export type SampleSpec = number[] | { seed: number };

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

/** Requests, page -> worker. */
export type Request =
  | { type: 'init'; id: number; core: { simd: CoreFiles; scalar: CoreFiles }; forceScalar?: boolean }
  | { type: 'configure'; id: number; config: TrainerConfigMsg; sample: SampleSpec; ablation?: Ablation; corpus?: CorpusInput | null }
  | { type: 'useCorpus'; id: number; corpus: CorpusInput | null }
  | { type: 'reset'; id: number }
  | { type: 'step'; id: number; n: number }
  | { type: 'play'; id: number; intervalMs?: number }
  | { type: 'pause'; id: number }
  | { type: 'sample'; id: number; sample: SampleSpec }
  | { type: 'selfAttention'; id: number; input: SelfAttentionRequest }
  | { type: 'transformerBlock'; id: number; input: BlockRequest }
  | { type: 'scalingDemo'; id: number; dk: number; keys: number; seed: number }
  | { type: 'softmaxSteps'; id: number; logits: number[] }
  | { type: 'exportWeights'; id: number }
  | { type: 'importRun'; id: number; run: ImportRun }
  | { type: 'ablate'; id: number; ablation: Ablation }
  | { type: 'timeline'; id: number; since: number }
  | { type: 'rowBackward'; id: number; head: number; query: number; target?: number }
  | { type: 'selfTest'; id: number; reference: ReferenceFiles }
  | { type: 'headScores'; id: number }
  | { type: 'predictions'; id: number }
  | { type: 'lengths'; id: number; lengths: number[]; batches: number }
  | { type: 'comparisonStart'; id: number; config: TrainerConfigMsg }
  | { type: 'comparisonStep'; id: number; n: number }
  | { type: 'comparisonLengths'; id: number; lengths: number[]; batches: number }
  | { type: 'comparisonEnd'; id: number }
  | { type: 'generateStart'; id: number; spec: GenerateSpec }
  | { type: 'generateNext'; id: number; n: number }
  | { type: 'generateEnd'; id: number }
  | { type: 'textSample'; id: number; spec: GenerateSpec }
  | { type: 'cacheSpeed'; id: number; prompt: string; tokens: number }
  | { type: 'inspect'; id: number; corrupted?: number[]; change?: number };

/**
 * A run to restore (export/import panel). Without config: the current config (weights must fit
 * it). Without weights: the config's fresh init. `past` (from the exported JSON) continues the
 * step count and loss history: the snapshot's step is past.step + the steps run since.
 */
export interface ImportRun {
  config?: TrainerConfigMsg;
  /** The interventions the run was trained under (from the JSON); else the current ones. */
  ablation?: Ablation;
  sample?: number[];
  weights?: Uint8Array;
  past?: { step: number; history: Float32Array; historyStride: number };
}

/** The reply type each request names. */
export interface ReplyFor {
  init: { type: 'ready'; replyTo: number; simd: boolean };
  configure: { type: 'configured'; replyTo: number; snapshot: Snapshot };
  useCorpus: { type: 'configured'; replyTo: number; snapshot: Snapshot };
  reset: { type: 'configured'; replyTo: number; snapshot: Snapshot };
  step: { type: 'stepped'; replyTo: number; snapshot: Snapshot };
  play: { type: 'playing'; replyTo: number };
  pause: { type: 'paused'; replyTo: number; snapshot: Snapshot };
  sample: { type: 'sampled'; replyTo: number; snapshot: Snapshot };
  selfAttention: { type: 'selfAttentionDone'; replyTo: number; stages: SelfAttentionStages };
  transformerBlock: { type: 'transformerBlockDone'; replyTo: number; stages: BlockStages };
  scalingDemo: { type: 'scalingDemoDone'; replyTo: number; demo: ScalingDemo };
  softmaxSteps: { type: 'softmaxStepsDone'; replyTo: number; comparison: SoftmaxComparison };
  exportWeights: { type: 'exported'; replyTo: number; bytes: Uint8Array; snapshot: Snapshot };
  importRun: { type: 'configured'; replyTo: number; snapshot: Snapshot };
  ablate: { type: 'ablated'; replyTo: number; report: AblationReport; snapshot: Snapshot };
  timeline: { type: 'timelineDone'; replyTo: number; timeline: Timeline };
  rowBackward: { type: 'rowBackwardDone'; replyTo: number; report: RowBackwardReport };
  selfTest: { type: 'selfTestDone'; replyTo: number; report: SelfTestReport };
  headScores: { type: 'headScoresDone'; replyTo: number; report: HeadScoresReport };
  predictions: { type: 'predictionsDone'; replyTo: number; report: PredictionsReport };
  lengths: { type: 'lengthsDone'; replyTo: number; report: LengthsReport };
  comparisonStart: { type: 'comparisonStarted'; replyTo: number };
  comparisonStep: { type: 'comparisonStepped'; replyTo: number; step: number; loss: number };
  comparisonLengths: { type: 'comparisonLengthsDone'; replyTo: number; report: LengthsReport };
  comparisonEnd: { type: 'comparisonEnded'; replyTo: number };
  generateStart: { type: 'generateStarted'; replyTo: number; started: GenerateStarted };
  generateNext: { type: 'generateChunk'; replyTo: number; chunk: GenerateChunk };
  generateEnd: { type: 'generateEnded'; replyTo: number };
  textSample: { type: 'textSampled'; replyTo: number; sample: TextSample };
  cacheSpeed: { type: 'cacheSpeedDone'; replyTo: number; speed: CacheSpeed };
  inspect: { type: 'inspectDone'; replyTo: number; report: InspectReport };
}

/**
 * Why a request failed: the core's error kind (CoreErrorKind) when the core threw, else the
 * request's own. `config`: the core rejected the config (`key` names the key, when one is at
 * fault); `nonFinite`: the loss or a gradient became non-finite and training paused; `input`: a
 * bad argument; `format`: a weights file the core cannot load; `state`: no trainer yet;
 * `internal`: anything else; `worker` (page side only): the training worker could not start.
 */
export type ErrorKind = 'config' | 'nonFinite' | 'input' | 'format' | 'state' | 'internal' | 'worker';

/** Failure reply to any request. */
export interface ErrorReply {
  type: 'error';
  replyTo: number;
  kind: ErrorKind;
  message: string;
  key?: string;
}

/** Events, worker -> page, not answering a request. */
export type WorkerEvent =
  | { type: 'progress'; snapshot: Snapshot }
  | { type: 'stopped'; kind: ErrorKind; message: string; snapshot: Snapshot };

/** Largest file the import accepts (bytes). */
export const MAX_IMPORT_BYTES = 5 * 1024 * 1024;

/** Anything the worker posts. */
export type WorkerMessage = ReplyFor[keyof ReplyFor] | ErrorReply | WorkerEvent;

/** Upper bound on `step` requests, so one request never blocks the worker for long. */
export const MAX_STEPS_PER_REQUEST = 1000;

/** The interventions of an intact model with H heads in all (every layer's). */
export function noAblation(H: number): Ablation {
  return { headsOff: new Array<boolean>(H).fill(false), headsFrozen: new Array<boolean>(H).fill(false), scaleScores: true, mask: 'causal' };
}
