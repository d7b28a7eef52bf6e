// The worker's one piece of state: a Session owns the core's Trainer and everything derived from
// it. The current Run (run.ts) holds the Trainer with what belongs to it alone (config, losses,
// loss at init, an imported run's past, timeline); the Session adds what outlives a run (the
// sample, the interventions, the corpus, the play loop, what the panels hold between requests).
// Its methods answer the run's own requests (configure, step, play...; handlers.ts maps them);
// every panel's request goes through call(), to the handler its panel registers
// (web/src/panels/<name>/handler.ts), which sees the session as a WorkerContext (context.ts). It
// runs wherever it is given a core and a post function: in the worker, and under node in the unit
// tests. Every number comes from the core.
import type { AttentionCore, CorpusInput, Trainer } from '../core/attention-core';
import { MAX_STEPS_PER_REQUEST, type Ablation, type ImportRun, type SampleSpec, type Snapshot, type TrainerConfigMsg } from '../model/protocol';
import { TIMELINE_BYTES } from '../model/timeline';
import { PANEL_HANDLERS } from '../panels/handlers';
import { fetchBytes, stepCount, type FetchBytes, type Held, type HeldUntil, type WorkerContext } from './context';
import { newTrainer } from './new-trainer';
import { Pace } from './pace';
import { isTrap, kindOf, messageOf, RequestFailure, rethrowLater, send, withKind, type Post } from './post';
import { Run, type Past, type View } from './run';

/** What a Session needs besides the core and post; the defaults are the worker's. */
export interface SessionOptions {
  /** Runs f after the messages already queued (the play loop's next chunk). */
  defer?: (f: () => void) => void;
  /** The clock, in ms (chunk sizes, steps/s, progress interval, the panels' timings). */
  now?: () => number;
  /** Reads files by URL (the self-test's reference case). */
  fetchBytes?: FetchBytes;
  /** Called with a wasm trap, which leaves the module unusable (the worker: a crash). */
  crash?: (err: unknown) => void;
  /** The timeline's byte budget (a test fills a small one with a small, quick model). */
  timelineBytes?: number;
}

/** While playing, the text run's validation loss is measured at most this often (ms), and at most
 * TEXT_EVAL_SHARE of the time: a measurement that took d ms waits d / TEXT_EVAL_SHARE before the
 * next (on the "Train a GPT on text" preset one took 8% of the worker's time at once a second;
 * bench/worker_loop.mjs). */
export const TEXT_EVAL_MS = 1000;
export const TEXT_EVAL_SHARE = 0.04;

/** The core and one training run; see the file comment. */
export class Session {
  #run: Run | null = null;
  /** The sequence the heatmaps and the timeline show. */
  #sample = new Int32Array(0);
  /** The interventions a request set (null: none yet, the intact layer); kept across runs. */
  #ablation: Ablation | null = null;
  #playing = false;
  #loopScheduled = false;
  /** What the panels hold between their requests, by key, and until when. */
  readonly #held = new Map<string, { value: Held; until: HeldUntil }>();
  /** Task text: the corpus the runs train on (null: the core's default); kept across runs. */
  #corpus: CorpusInput | null = null;
  /** When the text run's validation loss was last measured (ms, the clock's). */
  #textMeasuredAt = -Infinity;
  /** The wait before the next validation measurement while playing (ms). */
  #textEvalEvery = TEXT_EVAL_MS;
  readonly #pace = new Pace();
  readonly #defer: (f: () => void) => void;
  readonly #now: () => number;
  readonly #crash: (err: unknown) => void;
  readonly #timelineBytes: number;
  /** The session as the panels' handlers see it. */
  readonly #context: WorkerContext;

  constructor(
    readonly core: AttentionCore,
    private readonly post: Post,
    options: SessionOptions = {},
  ) {
    this.#defer = options.defer ?? ((f) => setTimeout(f, 0));
    this.#now = options.now ?? (() => performance.now());
    this.#crash = options.crash ?? rethrowLater;
    this.#timelineBytes = options.timelineBytes ?? TIMELINE_BYTES;
    const session = this;
    this.#context = {
      core,
      run: () => this.#require(),
      get sample() {
        return session.#sample;
      },
      get ablation() {
        return session.#ablation;
      },
      setAblation: (a) => {
        this.#ablation = a;
        this.#release('ablation');
      },
      get corpus() {
        return session.#corpus;
      },
      sampleIds: (sample, config) => this.#sampleIds(sample, config, this.#run?.trainer),
      snapshot: () => this.snapshot(),
      now: this.#now,
      fetchBytes: options.fetchBytes ?? fetchBytes,
      held: <T extends Held>(key: string) => (this.#held.get(key)?.value as T | undefined) ?? null,
      hold: (key, value, until = 'released') => {
        const old = this.#held.get(key);
        this.#held.delete(key);
        old?.value.free();
        if (value) this.#held.set(key, { value, until });
      },
    };
  }

  /** Whether the play loop is running. */
  get playing(): boolean {
    return this.#playing;
  }

  /** A wasm trap goes to the crash handler; other errors are the request's to report. */
  reportTrap(err: unknown): void {
    if (isTrap(err)) this.#crash(err);
  }

  // ---- Requests

  /** A new Trainer (step 0) for config and the sample, under `ablation` if given, else the one
   * kept. All or nothing for the config and the ablation (a config error names the key; an
   * ablation that does not fit the head count is an `input` error); a sample that does not fit
   * the new model is reported (`input`) after it is in place. */
  configure(config: TrainerConfigMsg, sample: SampleSpec, ablation?: Ablation, corpus?: CorpusInput | null): Snapshot {
    this.#playing = false;
    const wanted = ablation ?? this.#ablation;
    const text = corpus === undefined ? this.#corpus : corpus;
    const next = newTrainer(this.core, config, { ablation: wanted, corpus: text });
    let ids: Int32Array<ArrayBuffer>;
    try {
      ids = withKind('input', () => this.#sampleIds(sample, config, next.trainer));
    } catch (e) {
      next.trainer.delete();
      throw e;
    }
    this.#sample = ids;
    if (ablation) this.#ablation = next.trainer.ablation();
    if (config.task === 'text') this.#corpus = text;
    this.#install(next.trainer, config, next.initLoss, null);
    return withKind('input', () => this.snapshot());
  }

  /** Task text: a new run (step 0) on corpus (null: the core's default), with the run's config and
   * the generator's first sample. All or nothing: a corpus the core rejects (kind `input`) leaves
   * the run as it was, playing if it was. */
  useCorpus(corpus: CorpusInput | null): Snapshot {
    const run = this.#require();
    if (run.config.task !== 'text') throw new RequestFailure('state', `the task is ${run.config.task}, not text: a corpus is only for the text task`);
    const next = newTrainer(this.core, run.config, { ablation: this.#ablation, corpus });
    this.#playing = false;
    this.#corpus = corpus;
    this.#sample = Int32Array.from(next.trainer.sampleSequence(0));
    this.#install(next.trainer, run.config, next.initLoss, null);
    return this.snapshot();
  }

  /** The same config again, back to step 0. */
  reset(): Snapshot {
    const run = this.#require();
    this.#playing = false;
    const next = newTrainer(this.core, run.config, { ablation: this.#ablation, corpus: this.#corpus });
    this.#install(next.trainer, run.config, next.initLoss, null);
    return this.snapshot();
  }

  /** Runs n steps (1..MAX_STEPS_PER_REQUEST), taking timeline snapshots on the way. */
  step(n: number): Snapshot {
    const run = this.#require();
    run.train(stepCount(n), this.#view());
    return this.snapshot();
  }

  /** Starts the play loop (progress events every intervalMs at most), if not running. */
  play(intervalMs?: number): void {
    this.#require();
    this.#pace.setInterval(intervalMs);
    if (this.#playing) return;
    this.#playing = true;
    this.#pace.start();
    this.#schedule();
  }

  /** Stops the play loop before its next chunk. */
  pause(): Snapshot {
    this.#require();
    this.#playing = false;
    return this.snapshot();
  }

  /** Shows another sequence; one that does not fit the model leaves the old one. */
  setSample(sample: SampleSpec): Snapshot {
    const run = this.#require();
    const prev = this.#sample;
    this.#sample = withKind('input', () => this.#sampleIds(sample, run.config, run.trainer));
    try {
      return this.snapshot();
    } catch (e) {
      this.#sample = prev;
      throw e;
    }
  }

  /** A new Trainer from the run's config (else the current one), weights, interventions (else the
   * kept ones) and sample; all or nothing: on an error the current run is untouched and plays on. */
  importRun(imported: ImportRun): Snapshot {
    const run = this.#require();
    const config = imported.config ?? run.config;
    const ids = imported.sample ? Int32Array.from(imported.sample) : this.#sample;
    const next = newTrainer(this.core, config, { weights: imported.weights, ablation: imported.ablation ?? this.#ablation, sample: ids, corpus: this.#corpus });
    this.#playing = false;
    this.#sample = ids;
    if (imported.ablation) this.#ablation = next.trainer.ablation();
    this.#install(next.trainer, config, next.initLoss, imported.weights && imported.past ? imported.past : null);
    return this.snapshot();
  }

  /** Answers a panel's request (web/src/panels/<name>/handler.ts) by its name; an unknown name
   * is an `input` error. */
  call(name: string, input: unknown): unknown {
    const handler = PANEL_HANDLERS.get(name);
    if (!handler) throw new RequestFailure('input', `there is no request named ${JSON.stringify(name)}`);
    return handler.answer(this.#context, input);
  }

  /** Everything the page draws for the current moment of the run. */
  snapshot(): Snapshot {
    const run = this.#require();
    // Task text: the validation loss at most once a second (and TEXT_EVAL_SHARE of the time) while
    // playing, at every other snapshot.
    const now = this.#now();
    if (run.corpus && run.textStep !== run.step && (!this.#playing || now - this.#textMeasuredAt >= this.#textEvalEvery)) {
      run.measureText();
      this.#textMeasuredAt = now;
      this.#textEvalEvery = Math.max(TEXT_EVAL_MS, (this.#now() - now) / TEXT_EVAL_SHARE);
    }
    return run.snapshot(this.#view(), this.#playing ? this.#pace.stepsPerSec() : 0, run.textReadout(this.#corpus === null));
  }

  /** Frees the Trainer and stops the play loop. */
  dispose(): void {
    for (const key of [...this.#held.keys()]) this.#context.hold(key, null);
    this.#playing = false;
    this.#run?.delete();
    this.#run = null;
  }

  // ---- The run

  /** The ids of a sample request: the ids given, the characters given (a text trainer's
   * vocabulary: a character outside it is the core's `input` error naming it), or the task
   * generator's sequence for the seed (the run's task unless the spec names one; task text: the
   * text's, from trainer's validation split, so it needs a text trainer; task markov: the run's
   * chain, so it needs a markov trainer). */
  #sampleIds(sample: SampleSpec, config: TrainerConfigMsg, trainer: Trainer | undefined): Int32Array<ArrayBuffer> {
    if (Array.isArray(sample)) return Int32Array.from(sample);
    if ('text' in sample) {
      const corpus = trainer?.corpus();
      if (!corpus) throw new RequestFailure('input', 'a sample of characters needs a text run: train on the text task first');
      return Int32Array.from(this.core.encodeText(corpus.vocab, sample.text));
    }
    const task = sample.task ?? config.task;
    if (task !== 'text' && task !== 'markov') return Int32Array.from(this.core.taskSample(task, config.vocabSize, config.seqLen, sample.seed));
    if (task === 'markov') {
      // The chain is the run's (drawn from its seed): only its trainer has it.
      if (trainer?.config().task !== 'markov') throw new RequestFailure('input', 'a markov sample needs a markov run: train on the markov task first');
      return Int32Array.from(trainer.sampleSequence(sample.seed));
    }
    if (!trainer?.corpus()) throw new RequestFailure('input', 'a text sample needs a text run: train on the text task first');
    return Int32Array.from(trainer.sampleSequence(sample.seed));
  }

  #require(): Run {
    if (!this.#run) throw new RequestFailure('state', 'no trainer: send configure first');
    return this.#run;
  }

  /** Frees what the panels hold until the run changes (until: 'run'), or until the run or the
   * interventions change ('ablation': both). */
  #release(event: 'run' | 'ablation'): void {
    for (const [key, { until }] of [...this.#held]) if (until === 'ablation' || until === event) this.#context.hold(key, null);
  }

  /** What the run is shown on: the sample, under the mask in force. */
  #view(): View {
    return { sample: this.#sample, mask: this.#ablation?.mask ?? 'causal' };
  }

  /** Makes trainer the current one (the old one is freed), with a new timeline and its first
   * snapshot (none when the sample does not fit this model: configure reports that). */
  #install(trainer: Trainer, config: TrainerConfigMsg, initLoss: number, past: Past | null): void {
    this.#release('run'); // a generation's decoder reads the old Trainer
    this.#run?.delete();
    const run = new Run(trainer, config, initLoss, past, this.#timelineBytes);
    this.#run = run;
    this.#pace.clearRate();
    try {
      run.capture(this.#view());
    } catch {
      // The timeline starts empty.
    }
  }

  // ---- The play loop: one chunk per turn of the event loop, so requests are answered between.

  #schedule(): void {
    if (this.#loopScheduled) return;
    this.#loopScheduled = true;
    this.#defer(() => {
      this.#loopScheduled = false;
      this.#chunk();
    });
  }

  #chunk(): void {
    const run = this.#run;
    if (!this.#playing || !run) return;
    const t0 = this.#now();
    try {
      run.train(this.#pace.stepsPerChunk, this.#view());
    } catch (e) {
      this.#playing = false;
      this.reportTrap(e);
      send(this.post, { type: 'stopped', kind: kindOf(e, 'internal'), message: messageOf(e), snapshot: this.snapshot() });
      return;
    }
    const t1 = this.#now();
    this.#pace.chunkDone(t0, t1, run.trainer.stepsDone(), MAX_STEPS_PER_REQUEST);
    if (this.#pace.progressDue(t1)) send(this.post, { type: 'progress', snapshot: this.snapshot() });
    this.#schedule();
  }
}
