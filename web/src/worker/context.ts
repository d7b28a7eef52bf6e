// What a panel's request handler (web/src/panels/<name>/handler.ts) may use of the worker: the core,
// the current run, the sample and the interventions, the snapshot, and a place to keep something
// between its requests (a generation, a second Trainer, a cache). The Session is the only
// implementation; a handler never sees the Session itself, so the run's lifecycle (configure, step,
// play...) stays the Session's alone.
import type { AttentionCore, CorpusInput } from '../core/attention-core';
import { MAX_STEPS_PER_REQUEST, type Ablation, type RequestDef, type SampleSpec, type Snapshot, type TrainerConfigMsg } from '../model/protocol';
import { RequestFailure } from './post';
import type { Run } from './run';

/** Reads the bytes at url (the worker: fetch; a test: the file system). */
export type FetchBytes = (url: string) => Promise<Uint8Array>;

/** fetch(url) as bytes; an HTTP error status throws, naming the URL. */
export async function fetchBytes(url: string): Promise<Uint8Array> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url} answered ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

/** Something a panel keeps between its requests; free() releases what it holds in the core. */
export interface Held {
  free(): void;
}

/** How long a held thing lives: until the run changes (a new Trainer: configure, reset, import,
 * a new corpus), until the run or the interventions change, or until it is replaced or released. */
export type HeldUntil = 'run' | 'ablation' | 'released';

/** The worker's state as a handler sees it. */
export interface WorkerContext {
  readonly core: AttentionCore;
  /** The current run; a `state` error before the first configure. */
  run(): Run;
  /** The sequence the heatmaps show (the session's; copy it before sending it). */
  readonly sample: Int32Array;
  /** The interventions in force (null: none set yet, the intact layer). */
  readonly ablation: Ablation | null;
  /** Keeps the interventions the core accepted (trainer.ablation()); frees what was held until
   * they change. */
  setAblation(ablation: Ablation): void;
  /** Task text: the corpus runs train on (null: the core's default). */
  readonly corpus: CorpusInput | null;
  /** The ids of a sample spec for config: the ids given, or the task generator's sequence for the
   * seed (task text: the run's text, so it needs a text run). */
  sampleIds(sample: SampleSpec, config: TrainerConfigMsg): Int32Array<ArrayBuffer>;
  /** Everything the page draws for the current moment of the run. */
  snapshot(): Snapshot;
  /** The clock, in ms. */
  now(): number;
  readonly fetchBytes: FetchBytes;
  /** What is held under key (null: nothing). */
  held<T extends Held>(key: string): T | null;
  /** Holds value under key until `until` (the previous value under key is freed); null frees. */
  hold(key: string, value: Held | null, until?: HeldUntil): void;
}

/** A request's handler: its declaration and what answers it. */
export interface RequestHandler {
  readonly request: RequestDef<unknown, unknown>;
  answer(ctx: WorkerContext, input: unknown): unknown;
}

/** The handler of request: answer(ctx, input) returns its output (or a Promise of it), or throws
 * (the error reply's kind: the error's own, else the request's fallback kind). */
export function handle<In, Out>(request: RequestDef<In, Out>, answer: (ctx: WorkerContext, input: In) => Out | Promise<Out>): RequestHandler {
  return { request: request as RequestDef<unknown, unknown>, answer: answer as RequestHandler['answer'] };
}

/** A step count of a request, as a whole number in [1, MAX_STEPS_PER_REQUEST]; else an `input` error. */
export function stepCount(n: number): number {
  const k = Math.floor(n);
  if (!(k >= 1 && k <= MAX_STEPS_PER_REQUEST)) throw new RequestFailure('input', `step count (${n}) must be in [1, ${MAX_STEPS_PER_REQUEST}]`);
  return k;
}
