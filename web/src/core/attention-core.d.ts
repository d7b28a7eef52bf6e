// Types of the WebAssembly module `attention-core` (cpp/wasm/bindings.cpp), hand-written.
// The module files are web/public/wasm/attention-core-{simd,scalar}.js (ES modules for the page
// and its worker); their default export is createAttentionCore. load-core.js picks a variant.
//
// Every array crossing the boundary is a copy: nothing returned is a view into the wasm heap.
// Every error, from a bad argument or from the C++ core, is thrown as a plain `Error` whose
// message names the offending key or value; the module stays usable afterwards.

/** The Trainer's settings. Every key is optional: a missing key takes its DemoConfig default. */
export interface TrainerConfig {
  /** V, integer in [1, 65536]; default 64. */
  vocabSize?: number;
  /** D, even integer in [2, 4096], divisible by nHeads; default 32. */
  dModel?: number;
  /** H, integer in [1, dModel]; default 4. */
  nHeads?: number;
  /** T, also the max context length; integer in [1, 4096]; default 12. */
  seqLen?: number;
  /** B, integer in [1, 4096]; default 16. */
  batchSize?: number;
  /** Adam learning rate in (0, 10]; default 0.005. */
  lr?: number;
  /** Integer in [0, 2^53 - 1]; the same seed gives bit-identical weights natively and in wasm. */
  seed?: number;
  /** Dropout on the attention weights, in [0, 1); default 0. */
  attnDropout?: number;
  /** Dropout on the attention output, in [0, 1); default 0. */
  outDropout?: number;
  /** The training task (default "repeat"): repeat, shift (target = previous token), copy (the
   * second half repeats the first), reverse (the second half reverses it) or sort (the second
   * half sorts it; needs vocabSize >= (seqLen + 1) / 2). Unpredictable targets are left out of
   * the loss and the accuracy. */
  task?: 'repeat' | 'shift' | 'copy' | 'reverse' | 'sort';
}

/** A config with every key present, as config() and defaultConfig() return it. */
export type ResolvedTrainerConfig = Required<TrainerConfig>;

/** One sequence through the model in eval mode (no dropout). */
export interface AttentionResult {
  /** (nHeads, seqLen, seqLen) row-major: weights[(h * seqLen + i) * seqLen + j]. */
  weights: Float32Array;
  /** (seqLen, vocabSize) row-major. */
  logits: Float32Array;
  nHeads: number;
  /** T of this call: the length of the ids passed in. */
  seqLen: number;
  vocabSize: number;
}

/** Trains TinyAttentionLM on a task. Call delete() when done: the wasm heap is not GC'd. */
export interface Trainer {
  /** Runs n >= 0 training steps and returns the last loss (NaN before any step). Throws if the
   * loss turns non-finite; the weights stay those of the last good step. */
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
  /** ids: 1..seqLen token ids, each in [0, vocabSize). */
  attention(ids: Int32Array): AttentionResult;
  /** The weights as a safetensors file (PyTorch state-dict names). */
  exportWeights(): Uint8Array;
  /** Loads a safetensors file with exactly this model's tensors; all or nothing. The step count,
   * the loss history and Adam's moments are kept: training continues from the loaded weights. */
  importWeights(bytes: Uint8Array): void;
  config(): ResolvedTrainerConfig;
  /** Training steps run so far. */
  stepsDone(): number;
  /** lossHistory()[i] is the loss of step i * historyStride() + 1. */
  historyStride(): number;
  /** Frees the C++ object. Using the Trainer afterwards throws. */
  delete(): void;
}

export interface TrainerConstructor {
  new (config: TrainerConfig): Trainer;
}

/** A row-major float matrix: data.length === rows * cols. */
export interface Matrix {
  data: Float32Array;
  rows: number;
  cols: number;
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

/** Every stage of one head. */
export interface SelfAttentionStages {
  /** X Wq (T,dk). */
  Q: Matrix;
  /** X Wk (T,dk). */
  K: Matrix;
  /** X Wv (T,dv). */
  V: Matrix;
  /** Q K^T (T,T). */
  scores: Matrix;
  /** scores / sqrt(dk). */
  scaledScores: Matrix;
  /** scaledScores with -Infinity above the diagonal when causal, else equal to it. */
  maskedScores: Matrix;
  /** softmax of each row of maskedScores (T,T); masked cells are exactly 0. */
  weights: Matrix;
  /** weights V (T,dv). */
  output: Matrix;
}

/** The module createAttentionCore resolves to. */
export interface AttentionCore {
  Trainer: TrainerConstructor;
  selfAttention(input: SelfAttentionInput): SelfAttentionStages;
  /** The DemoConfig: every key with its default. */
  defaultConfig(): ResolvedTrainerConfig;
  /** Bytes currently allocated on the wasm heap (for leak checks). */
  heapBytesInUse(): number;
  /** Benchmarks: reps products C = A B of (n,n) matrices with the training kernel; returns a
   * checksum. FLOPs = reps * 2 n^3. n in [1, 4096], reps >= 1. */
  gemmProbe(n: number, reps: number): number;
  /** Whether this build uses WebAssembly SIMD. */
  readonly simd: boolean;
}

/** Options of the Emscripten factory that matter here. */
export interface AttentionCoreOptions {
  /** Maps the .wasm file name to its URL (default: next to the .js file). */
  locateFile?: (path: string, scriptDirectory: string) => string;
  /** The .wasm bytes, when they are already loaded. */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

export type CreateAttentionCore = (options?: AttentionCoreOptions) => Promise<AttentionCore>;

/** The default export of attention-core-{simd,scalar}.js. */
declare const createAttentionCore: CreateAttentionCore;
export default createAttentionCore;
