// Types of the WebAssembly module `attention-core` (cpp/wasm/bindings.cpp): its calls and the
// results shaped by hand; the structs it returns are generated (core-structs.ts).
// The module files are web/wasm/attention-core-{simd,scalar,relaxed}.js (ES modules for the page
// and its worker); their default export is createAttentionCore. load-core.js picks a variant.
//
// Every array crossing the boundary is a copy: nothing returned is a view into the wasm heap.
// Every error, from a bad argument or from the C++ core, is thrown as a plain `Error` whose
// message names the offending key or value, with a `kind` and sometimes a `key` (CoreError);
// the module stays usable afterwards. Decide on `kind`, never on the message text.

/**
 * What a CoreError is about:
 * - `config`: `new Trainer(config)` rejected a config value; `key` names it when one key is at
 *   fault (not for an unknown key, a config that is not an object, or sizes too large together).
 * - `input`: a bad argument to a call: token ids out of range, a wrong length, shape or type, a
 *   bad head or query index, a bad ablation.
 * - `nonFinite`: step() stopped because the loss or a gradient became non-finite; the weights
 *   are those of the last good step.
 * - `format`: importWeights() (or a selfTest() reference case) got a malformed safetensors file,
 *   or one that does not fit this model.
 * - `state`: a call made before what it needs.
 * - `internal`: anything else, i.e. a bug.
 */
export type CoreErrorKind = 'config' | 'input' | 'nonFinite' | 'format' | 'state' | 'internal';

/** Every error the module's calls throw. Embind's own errors (a deleted Trainer, a wrong number
 * of arguments) and wasm traps are other Errors without `kind`. */
export interface CoreError extends Error {
  kind: CoreErrorKind;
  /** The TrainerConfig key at fault; only on some `config` errors. */
  key?: keyof TrainerConfig;
}

// The config's types come from the core's schema (cpp/attn/train/config.h): config-schema.ts is
// written by scripts/build-wasm from configSchema().
import type { AttentionKind, FfnKind, NormKind, NormPosition, ObjectiveKind, PositionKind, TaskName, TrainerConfig } from './config-schema';
export type { AttentionKind, FfnKind, NormKind, NormPosition, ObjectiveKind, PositionKind, TaskName, TrainerConfig };

// The structs the calls return, with their doc comments, come from their field tables
// (cpp/wasm/structs.h): core-structs.ts is written by scripts/build-wasm (scripts/core-structs.mjs).
import type {
  AttentionStats, Corruption, Evaluation, Exactness, FillResult, Inspection, LengthEvaluation, LessonInputs,
  ComputeSplit, ModelReport, MultiHeadStages, OpTime, PositionedInput, PowerLawFit, ProductTime, RowBackward, ScalingDemo, SelfAttentionStages, SerialDepth,
  SelfTestResult, SoftmaxSteps, SpeculativeResult, SpeculativeStats, TextCorpusInfo, TextEvaluation,
  TiledAttentionTrace, TransformerBlockStages,
} from './core-structs';
export type * from './core-structs';

/** One preset of the core's table (cpp/attn/train/presets.h). */
export interface CorePreset {
  /** Its name: `attn train --preset NAME` and the page's preset id. */
  name: string;
  /** One line: the page's link text. */
  title: string;
  /** The keys it sets; every other key takes its default. */
  config: TrainerConfig;
}

/** One key of the config schema (configSchema(), `attn schema`): its names (snake_case `name`,
 * kebab-case `flag`: the `attn` flag, URL hash key and element attribute; `js`: the TrainerConfig
 * key), type and default, bounds (numbers; `max_key`: another key bounds it too, `divides`: it must
 * divide that key, `zero_means`: 0 stands for that key's value) or choices (enums, of the type
 * `choices_type`), one-line help, the value's name in usage text, its group, and whether a
 * weights file keeps it. */
export interface ConfigKeySchema {
  name: string;
  flag: string;
  js: string;
  type: 'int' | 'uint64' | 'float' | 'bool' | 'enum';
  default: number | boolean | string;
  min?: number;
  max?: number;
  min_exclusive?: boolean;
  max_exclusive?: boolean;
  max_key?: string;
  divides?: string;
  zero_means?: string;
  choices?: readonly string[];
  choices_type?: string;
  /** The key matters only while the key named `key` holds one of the values `in` (window: while
   * attention is window or strided); absent: it always does. */
  applies_when?: { key: string; in: readonly string[] };
  help: string;
  symbol: string;
  group: 'model' | 'block' | 'training' | 'task';
  in_weights: boolean;
  /** The model families (values of the key family) the key applies to. */
  families: readonly string[];
}

/** fill()'s options. */
export interface FillOptions {
  /** The character that marks a blank: one character that is not in the model's vocabulary;
   * default "_". */
  blank?: string;
  /** How many guesses to return per blank, integer in [1, vocabulary size]; default 1. */
  top?: number;
}



/** How the attention scores are masked: the causal mask, none, or the classic bug that fills
 * -1e4 at the wrong cells (the past) and leaves the future visible. */
export type MaskMode = 'causal' | 'none' | 'inverted';

/** Teaching interventions on the attention layers; they apply to training and every readout.
 * Heads are numbered globally across layers, layer-major: head h of layer l is g = l * nHeads + h;
 * scaleScores and mask apply to every layer. */
export interface Ablation {
  /** One per head (nLayers * nHeads, global index): true switches the head's output off (its
   * weights are still computed). */
  headsOff?: boolean[];
  /** One per head (nLayers * nHeads, global index): true stops the head's rows of its layer's
   * qkv_proj and its columns of that layer's out_proj from updating. */
  headsFrozen?: boolean[];
  /** Divide the scores by sqrt(dk) (default true). */
  scaleScores?: boolean;
  /** Default 'causal'. */
  mask?: MaskMode;
}





/** A text corpus: a string, or the bytes of a file (UTF-8, at most 2 MB). */
export type CorpusInput = string | Uint8Array;


/** headScores(): per head g = l * nHeads + h. */
export interface HeadScores {
  /** Mean attention from position i to i - 1 (nLayers * nHeads). */
  previousToken: Float32Array;
  /** In the second occurrence of the repeated segment, the mean attention to the position just
   * after the current id's first occurrence (nLayers * nHeads; NaN when seqLen < 4 or vocabSize
   * is too small for induction rows). */
  prefixMatching: Float32Array;
  /** K-composition ||W_QK W_OV^T||_F / (||W_QK||_F ||W_OV||_F) from head h1 of layer l to head h2
   * of layer l + 1, at (l * nHeads + h1) * nHeads + h2 ((nLayers - 1) * nHeads^2 entries). */
  composition: Float32Array;
  /** The mean K-composition of random heads of the same shapes; NaN with one layer (no pair of
   * layers to compare). */
  compositionBaseline: number;
  nLayers: number;
  nHeads: number;
}


/** The k most likely next tokens at each of the T positions of a sequence, in eval mode under the
 * ablation. */
export interface Predictions {
  /** min(k, vocabSize). */
  k: number;
  /** (T, k) row-major: most likely first; ties: the smaller id first. */
  top: Int32Array;
  /** (T, k): their probabilities. */
  probs: Float32Array;
  /** (T): the task's answer at each position (taskTargets); -100 where it sets none. */
  answers: Int32Array;
  /** (T): the probability of the answer; NaN where there is none. */
  answerProbs: Float32Array;
}


/** The three safetensors files of a PyTorch reference case. */
export interface ReferenceCase {
  weights: Uint8Array;
  input: Uint8Array;
  expected: Uint8Array;
}

/** A config with every key present, as config() and defaultConfig() return it. */
export type ResolvedTrainerConfig = Required<TrainerConfig>;

/** One sequence through the model in eval mode (no dropout). */
export interface AttentionResult {
  /** (nLayers, nHeads, seqLen, seqLen) row-major, layer-major:
   * weights[((l * nHeads + h) * seqLen + i) * seqLen + j]. */
  weights: Float32Array;
  /** (seqLen, vocabSize) row-major. */
  logits: Float32Array;
  nHeads: number;
  nLayers: number;
  /** T of this call: the length of the ids passed in. */
  seqLen: number;
  /** The model's ids: the config's vocabSize, plus [MASK] (the last id) for objective "mlm". */
  vocabSize: number;
}

/** Trains TinyAttentionLM on a task. Call delete() when done: the wasm heap is not GC'd. */
export interface Trainer {
  /** Runs n >= 0 training steps and returns the last loss (NaN before any step). Throws (kind
   * `nonFinite`) if the loss turns non-finite; the weights stay those of the last good step. */
  step(n: number): number;
  /** The loss the next step(1) will return, computed without changing anything: the next
   * batch under the current weights. At step 0 this is the loss at initialisation. */
  peekLoss(): number;
  /** Token accuracy of the last step's batch, before its update; NaN before any step. */
  lastAccuracy(): number;
  /** Token accuracy in eval mode on n in [1, 1000] fresh batches (the same ones every call). */
  evalAccuracy(n: number): number;
  /** The loss of every step, thinned to every historyStride()-th step after 16384 steps. */
  lossHistory(): Float32Array;
  /** ids: 1..seqLen token ids, each in [0, vocabSize) (objective "mlm": [0, vocabSize], the
   * last being [MASK]). */
  attention(ids: Int32Array): AttentionResult;
  /** The weights as a safetensors file (PyTorch state-dict names). */
  exportWeights(): Uint8Array;
  /** Loads a safetensors file with exactly this model's tensors; all or nothing (a bad file
   * throws kind `format`). The step count, the loss history and Adam's moments are kept:
   * training continues from the loaded weights. */
  importWeights(bytes: Uint8Array): void;
  /** For task text, vocabSize is the corpus's vocabulary size. */
  config(): ResolvedTrainerConfig;
  /** Task text: the model on n in [1, 1000] fixed validation batches (changes nothing). Other
   * tasks: a `state` error. */
  evaluateText(n: number): TextEvaluation;
  /** The text task's corpus; null for the other tasks. */
  corpus(): TextCorpusInfo | null;
  /** Task text: the first seqLen characters of the validation split (the seed is unused), the page's
   * default sample. */
  sampleSequence(seed: number): Int32Array;
  /** Training steps run so far. */
  stepsDone(): number;
  /** Loss and accuracy in eval mode over n in [1, 1000] fixed batches, under the ablation. */
  evaluate(n: number): Evaluation;
  /** The live model (weights and ablation) on its task at length seqLen in [1, 4096], over
   * batches in [1, 1000] batches of batchSize sequences from the same seed as evaluate(), so
   * evaluateAt(seqLen, n) measures what evaluate(n) does; from seqLen 256 on, the attention runs tile
   * by tile (no seqLen x seqLen matrix is held). Longer than maxSeqLen with learned
   * positions: a `config` error with key maxSeqLen (there is no row of the table to add); a task
   * that cannot fit seqLen: key task. Changes nothing. */
  evaluateAt(seqLen: number, batches: number): LengthEvaluation;
  /** Look inside the live model on one sequence: logit lens, direct attribution,
   * activation patching and QK/OV circuits, all from the core. */
  inspect(request: InspectRequest): Inspection;
  /** Sets every intervention at once (missing keys: the defaults). Throws naming a bad key. */
  setAblation(ablation: Ablation): void;
  ablation(): Required<Ablation>;
  attentionStats(): AttentionStats;
  /** Circuit scores per head (global index l * nHeads + h), measured in eval mode under the
   * ablation on a fixed set of induction rows, whatever the training task. */
  headScores(): HeadScores;
  /** The step of the phase change in the loss history (a smoothed loss that sat on a plateau
   * while high falls to half of it within 400 steps), or -1 while there is none. */
  phaseChange(): number;
  /** ids as for attention(); head in [0, nLayers * nHeads) (the global index l * nHeads + h),
   * query in [0, ids.length), target in [0, V). */
  rowBackward(ids: Int32Array, head: number, query: number, target: number): RowBackward;
  /** The model's k >= 1 most likely next tokens at each position of ids (as for attention()),
   * with their probabilities (the sampler's softmax at temperature 1), and the task's answers. */
  predictions(ids: Int32Array, k: number): Predictions;
  /** Runs the curriculum's invariants on this model (unchanged) and, given, a PyTorch case. */
  selfTest(reference: ReferenceCase | null): SelfTestResult[];
  /** A masked language model of text (objective "mlm", task "text"): fills every blank of text
   * (at most seqLen characters of the vocabulary) with one forward pass in eval mode. A causal
   * model is a `config` error with key objective (it cannot see the right side of a blank);
   * another task a `state` error; a blank that is in the vocabulary, a text with no blank or
   * only blanks, a character outside the vocabulary: `input`. */
  fill(text: string, options?: FillOptions): FillResult;
  /** The receptive field measured: (T, T), row i column j the norm of the gradient of the output
   * at i (along a fixed random direction of the logits) with respect to the input at j (the
   * first layer's input), in eval mode; exactly 0 where i cannot depend on j (with L layers of
   * a window of W keys: beyond L (W - 1)). ids as for attention(). Overwrites the gradients. */
  receptiveField(ids: Int32Array): Matrix;
  /** The keys each query may see under the model's own attention pattern (objective, attention,
   * window, stride), for T positions, T an integer in [1, the model's max context length]: T*T
   * cells row-major, 1 where query i may see key j, 0 where the pattern hides it. */
  attentionMask(T: number): Uint8Array;
  /** lossHistory()[i] is the loss of step i * historyStride() + 1. */
  historyStride(): number;
  /** Frees the C++ object. Using the Trainer afterwards throws. */
  delete(): void;
}

/** Incremental decoding of a Trainer's live model, with or without the KV cache. */
export interface Decoder {
  /** Empties the context and the caches (needed after any training step or ablation change). */
  reset(): void;
  /** Appends token (in [0, V), else kind `input`); returns the logits (V) of the next token. */
  push(token: number): Float32Array;
  /** The last pushed position's attention over its context: rows L*H (row l*H + h), cols
   * contextLength(); kind `state` before the first push. */
  attention(): Matrix;
  /** The window's tokens, oldest first. */
  context(): Int32Array;
  contextLength(): number;
  /** Whether pushes use the KV cache. */
  cached(): boolean;
  /** The most tokens attended over: the context slides past it. */
  window(): number;
  /** Frees the C++ object; call it before deleting the Trainer. */
  delete(): void;
}

export interface DecoderConstructor {
  /** useCache default true; window in [1, C], default (0) the model's max context length. */
  new (trainer: Trainer, options: { useCache?: boolean; window?: number }): Decoder;
}

/** The draw of generation: the seeded generator of the core (attn::Rng) and the inverse CDF. */
export interface Sampler {
  /** A token drawn from probs (V, a nextTokenDistribution); never one of probability 0. */
  draw(probs: Float32Array): number;
  delete(): void;
}

export interface SamplerConstructor {
  /** seed: an integer in [0, 2^32 - 1]; the same seed draws the same tokens as attn sample. */
  new (seed: number): Sampler;
}

/** What proposes tokens in speculative decoding: another Trainer's live model (modelDraft) or a
 * bigram table counted from a text (bigramDraft). Call delete() after the generations that use
 * it and before the Trainer it reads. */
export interface Draft {
  kind(): DraftKind;
  vocabSize(): number;
  delete(): void;
}
export type DraftKind = 'model' | 'bigram';

/** A speculative generation's settings. p (the draft's) and q (the target's) are the
 * distributions after options (nextTokenDistribution), so the output has exactly the target's
 * distribution under them; temperature 0 gives the target's own greedy tokens for any draft. */
export interface SpeculativeOptions {
  /** Token ids, 1 to 10000, each in [0, V). */
  prompt: Int32Array;
  /** Tokens to generate, in [0, 10000]. */
  tokens: number;
  /** N, the tokens the draft proposes per target pass, in [1, 16]; default 4. Fewer where the rows
   * would cross the target's window. */
  draftTokens?: number;
  /** For p and q alike; default {} (temperature 1). */
  options?: SamplingOptions;
  /** One generator draws the proposals, the acceptances and the residual or bonus tokens; default 0. */
  seed?: number;
  /** The target's window as for a Decoder; default 0 (its max context length). */
  window?: number;
}

/** How each generated token came about: 0 a draft token the target accepted, 1 drawn from the
 * residual norm(max(0, q - p)) at a rejection, 2 the bonus drawn from q after all N were
 * accepted. */
export type TokenFate = 0 | 1 | 2;


/** A speculative generation's new tokens (SpeculativeDecoder.next). */
export interface SpeculativeChunk {
  tokens: Int32Array;
  /** One TokenFate per token. */
  fates: Uint8Array;
  done: boolean;
}

/** Speculative generation of a Trainer's live model, a round at a time (the prompt goes in at
 * construction). Delete it before its draft and its Trainer; after either trains, start a new
 * one (its caches would be stale). A draft serves one generation at a time: once another
 * generation (a SpeculativeDecoder, speculativeGenerate, speculativeExactness) has used the same
 * draft, next() fails with kind `state`. */
export interface SpeculativeDecoder {
  /** Runs up to rounds in [1, 10000] rounds (each: the draft's proposals, one verification, the
   * rollbacks) and returns their tokens, at most the tokens asked for in all. */
  next(rounds: number): SpeculativeChunk;
  stats(): SpeculativeStats;
  done(): boolean;
  delete(): void;
}

export interface SpeculativeDecoderConstructor {
  /** Kind `input` for a bad option, a prompt token out of range, or a draft of another
   * vocabulary size ("the draft's vocabulary has 40 tokens but the target's has 35"). */
  new (trainer: Trainer, draft: Draft, options: SpeculativeOptions): SpeculativeDecoder;
}




/** Input of tiledAttention: transformerBlock's block and input, one head and the key tile size. */
export interface TiledAttentionInput {
  config?: TrainerConfig;
  ids?: Int32Array;
  x?: Matrix;
  /** Query head in [0, nHeads). */
  head: number;
  /** Keys per tile, in [1, T]. */
  tileSize: number;
}


export interface TrainerConstructor {
  /** Throws a CoreError of kind `config` for a bad config. With task text, corpus (default: the
   * core's defaultCorpus()) is checked as textCorpus() checks it (kind `input`); other tasks
   * ignore it. */
  new (config: TrainerConfig, corpus?: CorpusInput | null): Trainer;
}

/** A row-major float matrix: data.length === rows * cols. */
export interface Matrix {
  data: Float32Array;
  rows: number;
  cols: number;
}

/** What the lesson's inputs are made from (lessonInputs). */
export interface LessonInputsArgs {
  /** 1 to 64 words; equal strings share an embedding row (lower-case them first). */
  tokens: string[];
  /** d_model, dk, dv in [1, 64]. */
  dModel: number;
  dk: number;
  dv: number;
  /** 1 to 8 (default 1). */
  heads?: number;
  seed: number;
}


/** Input of the single-head lesson. X (T,D) with T <= 1024, Wq and Wk (D,dk), Wv (D,dv). */
export interface SelfAttentionInput {
  X: Matrix;
  Wq: Matrix;
  Wk: Matrix;
  Wv: Matrix;
  /** Mask j > i with -Infinity before the softmax; default false. */
  causal?: boolean;
}


/** Input of the multi-head lesson: H heads, each with its own projections, then Wo. */
export interface MultiHeadInput {
  /** (T,D), T <= 1024. */
  X: Matrix;
  /** One matrix per head (1 to 64 heads): Wq[h], Wk[h] (D,dk) and Wv[h] (D,dv), the same dk and
   * dv for every head. */
  Wq: Matrix[];
  Wk: Matrix[];
  Wv: Matrix[];
  /** The output projection, no bias: (H*dv, D_out). */
  Wo: Matrix;
  /** A drawn mask: T*T cells, row-major, nonzero = query i may not read key j. A row with every
   * cell masked gets weights 0 and output 0. */
  mask?: Uint8Array;
  /** The causal mask (j > i); only without `mask`. Default false. */
  causal?: boolean;
}



/** Input of transformerBlock: one block of the config's model (nLayers taken as 1, residual as
 * true; the other keys as for a Trainer), run in eval mode on ids (token ids, embedded as the
 * model does, with its sinusoidal or learned table) or on x (T, dModel) as it is; one of the two.
 * ropePair in [0, dHead/2) and ropeHead in [0, nHeads) pick the RoPE pair drawn (default 0). */
export interface TransformerBlockInput {
  config?: TrainerConfig;
  ids?: Int32Array;
  x?: Matrix;
  ropePair?: number;
  ropeHead?: number;
}


/** Decoding strategies for nextTokenDistribution, applied in this order; each optional. */
export interface SamplingOptions {
  /** Divides the logits before the softmax, in [0, 100]; 0 means greedy. Default 1. */
  temperature?: number;
  /** Keeps the k largest logits (ties: the lower id), in [0, V]; 0 keeps all. Default 0. */
  topK?: number;
  /** Nucleus: keeps tokens in descending order until their mass reaches p, in (0, 1]. Default 1. */
  topP?: number;
  /** Keeps tokens with at least minP times the largest probability, in [0, 1]. Default 0. */
  minP?: number;
}



/** Look inside (cpp/attn/interp/inspect.h has the math): the request. Answers hold -100 where
 * a position has none; without answers, the clean run's top tokens. Without corrupted, no
 * patching. position / answerClean / answerCorrupt: -1 (default) picks them as the core says. */
export interface InspectRequest {
  ids: Int32Array;
  answers?: Int32Array;
  corrupted?: Int32Array;
  position?: number;
  answerClean?: number;
  answerCorrupt?: number;
}
export interface IntMatrix {
  data: Int32Array;
  rows: number;
  cols: number;
}



/** The module createAttentionCore resolves to. */
export interface AttentionCore {
  Trainer: TrainerConstructor;
  Decoder: DecoderConstructor;
  Sampler: SamplerConstructor;
  SpeculativeDecoder: SpeculativeDecoderConstructor;
  /** A draft from another Trainer's live model (a small one trained on the same text, say:
   * draftConfig). */
  modelDraft(trainer: Trainer): Draft;
  /** A draft that needs no training: the bigram of text's training split (default: the
   * Trainer's own corpus) in the Trainer's characters, counts + 1 (add-one smoothing). The
   * Trainer must be a text model (kind `input` otherwise, and for a character it lacks). */
  bigramDraft(trainer: Trainer, text?: CorpusInput | null): Draft;
  /** Speculative generation in one call, timed against plain decoding (comparePlain, default
   * true). */
  speculativeGenerate(trainer: Trainer, draft: Draft, options: SpeculativeOptions & { comparePlain?: boolean }): SpeculativeResult;
  /** The exactness check: samples in [1, 1000000] speculative continuations of two tokens after
   * prompt, counted against the target's own distributions, with a chi-square test each. */
  speculativeExactness(trainer: Trainer, draft: Draft, options: Omit<SpeculativeOptions, 'tokens'> & { samples: number }): Exactness;
  /** The acceptance rate to expect on a text, without sampling: ids (2 to 10000 tokens) through
   * both models, and the mean over its positions of sum_x min(p(x), q(x)) under options (default
   * temperature 1). Deterministic: alpha against temperature or draft size as a smooth curve.
   * Takes the draft from any generation using it. */
  expectedAcceptance(trainer: Trainer, draft: Draft, input: { ids: Int32Array; options?: SamplingOptions; window?: number }): number;
  /** (1 - alpha^(N+1)) / (1 - alpha): the tokens per verification when each draft token is
   * accepted with probability alpha in [0, 1] (N + 1 at 1). */
  expectedTokensPerRound(alpha: number, draftTokens: number): number;
  /** The suggested draft for a target config: 1 pre-norm block (LayerNorm, GELU FFN of width
   * 2 dModel), dModel 32 (or less), 2 heads, lr 0.005; the task, text windows, positions and seed
   * kept.
   * Train it for draftSteps steps on the same text. */
  draftConfig(config: TrainerConfig): ResolvedTrainerConfig;
  /** Training steps for the suggested draft (300). */
  readonly draftSteps: number;
  /** The block view's tiled step: one head of transformerBlock's block, tile by tile. */
  tiledAttention(input: TiledAttentionInput): TiledAttentionTrace;
  selfAttention(input: SelfAttentionInput): SelfAttentionStages;
  /** The lesson's multi-head attention with a drawn or causal mask. */
  multiHeadSelfAttention(input: MultiHeadInput): MultiHeadStages;
  /** One transformer block of the config's model taken apart, stage by stage. */
  transformerBlock(input: TransformerBlockInput): TransformerBlockStages;
  /** E (T,D), D even -> E plus the sinusoidal position encoding. */
  addPositions(E: Matrix): PositionedInput;
  /** The lesson's embeddings and weights for a sentence and a seed, from the core's generator. */
  lessonInputs(args: LessonInputsArgs): LessonInputs;
  /** The targets the task's rule gives ids (-100 where it gives none), for the task's settings
   * (lag's k, markov's order; a run's config will do; their defaults without). */
  taskTargets(task: TaskName, ids: Int32Array, params?: { lag?: number; markovOrder?: number }): Int32Array;
  /** The sqrt(dk) lesson: dk in [1, 64], keys in [2, 16], seed in [0, 2^32 - 1]. */
  scalingDemo(dk: number, keys: number, seed: number): ScalingDemo;
  /** The Chinchilla loss A / N^alpha + B / D^beta + E in nats (Hoffmann et al.'s constants as the
   * course gives them: 406.4, 410.7, 0.34, 0.28, 1.69); N and D > 0. */
  chinchillaLoss(N: number, D: number): number;
  /** The course's compute-optimal split of C FLOPs (C >= 6e11): 200 log-uniform N in [1e5, 1e13],
   * D = C / (6 N) >= 1e6, the least loss. */
  computeOptimal(C: number): ComputeSplit;
  /** The same optimum in closed form: N = G (C/6)^(beta/(alpha+beta)). */
  computeOptimalClosedForm(C: number): ComputeSplit;
  /** L(N) = A N^-alpha + E by least squares over at least 3 points (N > 0, 2 distinct). */
  fitScaling(N: Float64Array, L: Float64Array): PowerLawFit;
  /** The exact entropy rate in bits per symbol of the markov task's chain for this order (1-3),
   * symbols (2-32) and run seed: the floor of a markov run's loss. */
  markovEntropyRate(markovOrder: number, markovSymbols: number, seed: number): number;
  /** The course's depth(n) (n >= 1) with layers >= 1 attention layers. */
  serialDepth(n: number, layers: number): SerialDepth;
  /** Prefix sums, one addition after another. */
  serialScan(xs: Float64Array): Float64Array;
  /** The Hillis-Steele scan: every round's values, [0] the input, the last the prefix sums
   * (ceil(log2 n) rounds; round r adds the value 2^r back). */
  parallelScan(xs: Float64Array): Float64Array[];
  /** One row's softmax step by step: logits 1 to 64 finite values; subtractMax false is the
   * textbook exp(x) / sum(exp(x)) that overflows, true the stable recipe. */
  softmaxSteps(logits: Float32Array, subtractMax: boolean): SoftmaxSteps;
  /** The distribution the next token is drawn from (the GPT lesson's decoding): temperature
   * divides the logits (0: greedy), then top-k keeps the k largest, top-p the most likely tokens up
   * to and including the one where the cumulative probability reaches p, and min-p every token with
   * at least minP times the largest probability; each stage renormalises. A probability for every
   * token, 0 for the excluded ones. logits: 1 to 65536 finite values; options: {} for the defaults. */
  nextTokenDistribution(logits: Float32Array, options: SamplingOptions): Float32Array;
  /** One sequence of seqLen ids from the task's generator: row 0 of a training batch drawn with
   * this seed (an integer in [0, 2^31 - 1]). The page's default sample; seed + 1 gives another. */
  taskSample(task: TaskName, vocabSize: number, seqLen: number, seed: number): Int32Array;
  /** The induction task's default corrupted input for ids (an Error of kind input without a repeat). */
  inductionCorruption(ids: Int32Array, vocabSize: number): Corruption;
  /** Checks a corpus as a Trainer with this seqLen would take it, without training: throws kind
   * `input` with one sentence for an empty text, one too short for two windows of seqLen + 1
   * characters, a binary file, invalid UTF-8, more than 2 MB or more than 256 distinct characters. */
  textCorpus(text: CorpusInput, seqLen: number): TextCorpusInfo;
  /** The project's own default corpus (simple English sentences, ~48 KB). */
  defaultCorpus(): string;
  /** The core's presets (`attn train --preset NAME`), in the page's order. */
  presets(): CorePreset[];
  /** text as token ids of vocab (a corpus's vocab string); a character outside it: kind `input`. */
  encodeText(vocab: string, text: string): Int32Array;
  /** ids (each in [0, vocab length)) as text. */
  decodeText(vocab: string, ids: Int32Array): string;
  /** The DemoConfig: every key with its default. */
  defaultConfig(): ResolvedTrainerConfig;
  /** The config schema: one object per TrainerConfig key, in the core's order (`attn schema`
   * prints the same). */
  configSchema(): ConfigKeySchema[];
  /** Bytes currently allocated on the wasm heap (for leak checks). */
  heapBytesInUse(): number;
  /** Benchmarks: reps products C = A B of (n,n) matrices with the training kernel; returns a
   * checksum. FLOPs = reps * 2 n^3. n in [1, 4096], reps >= 1. */
  gemmProbe(n: number, reps: number): number;
  /** What a model of config reports for a batch of its batchSize sequences of seqLen (its
   * family's report, nn/report.h): the state dict, the parameter count, the activations, a
   * training step's FLOPs and the FFN's hidden width. A bad config: an error of kind `config`. */
  modelReport(config: TrainerConfig): ModelReport;
  /** Benchmarks: the matrix products of a training step of config (products of one layout and
   * shape merged), each timed in place: the median over `steps` steps (1..1000) of the seconds
   * its calls took in one step. */
  productProfile(config: TrainerConfig, steps: number): ProductTime[];
  /** Benchmarks: the non-product ops of a training step of config in the order the step runs
   * them, then "products" and "rest", each timed in place: the median over `steps` steps
   * (1..1000). */
  opProfile(config: TrainerConfig, steps: number): OpTime[];
  /** Benchmarks: reps products of one layout, C (m,n), inner dimension k; returns a checksum.
   * FLOPs = reps * 2 m n k. */
  productProbe(layout: 'nn' | 'nt' | 'tn', m: number, n: number, k: number, reps: number): number;
  /** Whether this build uses WebAssembly SIMD. */
  readonly simd: boolean;
  /** Whether this is the relaxed-SIMD build (its products' multiply-adds fused: f32x4.relaxed_madd). */
  readonly relaxedSimd: boolean;
  /** Whether this is the threads build (pthreads; loaded only on a cross-origin-isolated page). */
  readonly threaded: boolean;
  /** The threads the core's loops run on (1 unless setThreads raised it). */
  threads(): number;
  /** Sets the thread count, n in [1, threadCapacity()]; the threads build can start at most its
   * threadPoolSize + 1. Not while a call into the core runs. An error of kind `input` otherwise. */
  setThreads(n: number): void;
  /** The most threads setThreads accepts (1 without threads). */
  threadCapacity(): number;
}

/** Options of the Emscripten factory that matter here. */
export interface AttentionCoreOptions {
  /** Maps the .wasm file name to its URL (default: next to the .js file). */
  locateFile?: (path: string, scriptDirectory: string) => string;
  /** The .wasm bytes, when they are already loaded. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** The threads build: how many pthread workers to start with the module (threads - 1). */
  threadPoolSize?: number;
}

export type CreateAttentionCore = (options?: AttentionCoreOptions) => Promise<AttentionCore>;

/** The default export of attention-core-{simd,scalar,threads,relaxed}.js. */
declare const createAttentionCore: CreateAttentionCore;
export default createAttentionCore;
