// The message protocol between the page (controller) and the worker that owns the wasm core.
// This file is the one place it is written down. Every request carries an `id`; the worker
// answers it with exactly one reply whose `replyTo` is that id and whose `type` is the one the
// request names below, or with an `error` reply. Events (`progress`, `stopped`) carry no
// `replyTo`: the worker sends them on its own while it is playing.
//
// The run's own requests (they make, train or show the run):
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
//   importRun          configured         new Trainer(config or the current config), then
//                                          importWeights(weights) if given; all or nothing: on
//                                          an error the current run is untouched (and keeps playing)
//   call               answer             a panel's request, by name (RequestDef below): each is
//                                          declared once in web/src/panels/<name>/request.ts and
//                                          answered by that panel's handler.ts; web/README.md lists them
//
//   event              when
//   progress           while playing, at most every `intervalMs` (default 50 ms)
//   stopped            playing stopped on its own (non-finite loss, or an error in a step)
//
// Typed arrays in replies are transferred, never shared: the page owns what it receives.
import type {
  Ablation as CoreAblation,
  MaskMode,
  Matrix as CoreMatrix,
  ResolvedTrainerConfig,
  TextCorpusInfo,
  TextEvaluation,
  CorpusInput,
} from '../core/attention-core';
import type { CoreFiles } from '../core/load-core.js';

/** Trainer config: every key of the core's JS API, resolved. */
export type TrainerConfigMsg = ResolvedTrainerConfig;

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
  /** (T,T) row-major: 1 where query i may see key j under the layers' own attention pattern (the
   * core's attentionMask: causal, both ways under mlm, a window, a strided pattern), which mask
   * `causal` applies. */
  visible: Uint8Array;
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

export type { CorpusInput, MaskMode, TextCorpusInfo, TextEvaluation };

/** Every intervention, resolved (one flag per head of every layer, global index l * H + h). */
export type Ablation = Required<CoreAblation>;

/** A (rows, cols) row-major matrix, as the core returns it. */
export type Matrix = CoreMatrix;

/** The sample a request asks for: token ids, the sequence a task's generator draws with this seed
 * (the core's taskSample; the run's task, unless one is named), or, for a text run, characters
 * (the core's encodeText on the run's vocabulary). */
export type SampleSpec = number[] | { seed: number; task?: TrainerConfigMsg['task'] } | { text: string };

/**
 * A panel's request, declared once (web/src/panels/<name>/request.ts): its name, the error kind it
 * reports when what failed carries no kind of its own, and, as types only, its input and its
 * output. The worker answers it with the handler its panel registers (handler.ts); the page sends
 * it with Controller.call(request, input), as a `call` message whose `answer` carries the output.
 */
export interface RequestDef<In, Out> {
  readonly name: string;
  readonly fallback: ErrorKind;
  /** The input and output types; never set. */
  readonly types?: { input: In; output: Out };
}

/** Declares a request (see RequestDef). */
export function defineRequest<In = void, Out = void>(name: string, fallback: ErrorKind): RequestDef<In, Out> {
  return { name, fallback };
}

/** Requests, page -> worker. */
export type Request =
  | { type: 'call'; id: number; request: string; input: unknown }
  | { type: 'init'; id: number; core: { simd: CoreFiles; scalar: CoreFiles; relaxed: CoreFiles; threads?: CoreFiles }; force?: 'simd' | 'scalar'; maxThreads?: number }
  | { type: 'configure'; id: number; config: TrainerConfigMsg; sample: SampleSpec; ablation?: Ablation; corpus?: CorpusInput | null }
  | { type: 'useCorpus'; id: number; corpus: CorpusInput | null }
  | { type: 'reset'; id: number }
  | { type: 'step'; id: number; n: number }
  | { type: 'play'; id: number; intervalMs?: number }
  | { type: 'pause'; id: number }
  | { type: 'sample'; id: number; sample: SampleSpec }
  | { type: 'importRun'; id: number; run: ImportRun };

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
  call: { type: 'answer'; replyTo: number; output: unknown };
  /** threads: how many threads the core runs on (more than 1: the threads build); relaxed: the
   * relaxed-SIMD build runs. */
  init: { type: 'ready'; replyTo: number; simd: boolean; relaxed: boolean; threads: number };
  configure: { type: 'configured'; replyTo: number; snapshot: Snapshot };
  useCorpus: { type: 'configured'; replyTo: number; snapshot: Snapshot };
  reset: { type: 'configured'; replyTo: number; snapshot: Snapshot };
  step: { type: 'stepped'; replyTo: number; snapshot: Snapshot };
  play: { type: 'playing'; replyTo: number };
  pause: { type: 'paused'; replyTo: number; snapshot: Snapshot };
  sample: { type: 'sampled'; replyTo: number; snapshot: Snapshot };
  importRun: { type: 'configured'; replyTo: number; snapshot: Snapshot };
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
