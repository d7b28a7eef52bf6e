// The worker's one piece of state: a Session owns the core's Trainer and everything derived from
// it. The current Run (run.ts) holds the Trainer with what belongs to it alone (config, losses,
// loss at init, an imported run's past, timeline); the Session adds what outlives a run (the
// sample, the interventions, the play loop, the reference-case cache). Each public method answers
// one request of model/protocol.ts (handlers.ts maps them). It runs wherever it is given a core and a
// post function: in the worker, and under node in the unit tests. Every number comes from the core.
import type { AttentionCore, CorpusInput, Trainer } from '../core/attention-core';
import {
  MAX_STEPS_PER_REQUEST,
  type Ablation,
  type AblationReport,
  type CacheSpeed,
  type GenerateChunk,
  type GenerateSpec,
  type GenerateStarted,
  type TextSample,
  type HeadScoresReport,
  type ImportRun,
  type InspectReport,
  type LengthsReport,
  type PredictionsReport,
  type ReferenceFiles,
  type RowBackwardReport,
  type SampleSpec,
  type SelfAttentionRequest,
  type BlockRequest,
  type BlockStages,
  type SelfAttentionStages,
  type ScalingDemo,
  type SoftmaxComparison,
  type SelfTestReport,
  type Snapshot,
  type Timeline,
  type TrainerConfigMsg,
} from '../model/protocol';
import { entriesAfter, TIMELINE_BYTES, timelineBytes } from '../model/timeline';
import { measureAblation } from './ablation';
import { cacheSpeed, Generation, textSample } from './generate';
import { measureLengths } from './lengths';
import { inspectSample } from './inspect';
import { newTrainer } from './new-trainer';
import { Pace } from './pace';
import { predictions } from './predictions';
import { isTrap, kindOf, messageOf, RequestFailure, rethrowLater, send, withKind, type Post } from './post';
import { fetchBytes, ReferenceCache, type FetchBytes } from './reference';
import { Run, type Past, type View } from './run';
import { selfAttentionStages } from './self-attention';
import { headScoresOf } from './scores';
import { runSelfTest } from './self-test';

/** What a Session needs besides the core and post; the defaults are the worker's. */
export interface SessionOptions {
  /** Runs f after the messages already queued (the play loop's next chunk). */
  defer?: (f: () => void) => void;
  /** The clock, in ms (chunk sizes, steps/s, progress interval, self-test time). */
  now?: () => number;
  /** Reads the reference case's files. */
  fetchBytes?: FetchBytes;
  /** Called with a wasm trap, which leaves the module unusable (the worker: a crash). */
  crash?: (err: unknown) => void;
  /** The timeline's byte budget (a test fills a small one with a small, quick model). */
  timelineBytes?: number;
}

/** While playing, the text run's validation loss is measured at most this often (ms). */
export const TEXT_EVAL_MS = 1000;

/** The core and one training run; see the file comment. */
export class Session {
  #run: Run | null = null;
  /** The sequence the heatmaps and the timeline show. */
  #sample = new Int32Array(0);
  /** The interventions a request set (null: none yet, the intact layer); kept across runs. */
  #ablation: Ablation | null = null;
  #playing = false;
  #loopScheduled = false;
  /** The Generate panel's generation on the run's model (generateStart); null: none. */
  #generation: Generation | null = null;
  /** The comparison's Trainer (comparisonStart), apart from the run; null: none. */
  #comparison: { trainer: Trainer; config: TrainerConfigMsg } | null = null;
  /** Task text: the corpus the runs train on (null: the core's default); kept across runs. */
  #corpus: CorpusInput | null = null;
  /** When the text run's validation loss was last measured (ms, the clock's). */
  #textMeasuredAt = -Infinity;
  readonly #pace = new Pace();
  readonly #reference: ReferenceCache;
  readonly #defer: (f: () => void) => void;
  readonly #now: () => number;
  readonly #crash: (err: unknown) => void;
  readonly #timelineBytes: number;

  constructor(
    readonly core: AttentionCore,
    private readonly post: Post,
    options: SessionOptions = {},
  ) {
    this.#defer = options.defer ?? ((f) => setTimeout(f, 0));
    this.#now = options.now ?? (() => performance.now());
    this.#crash = options.crash ?? rethrowLater;
    this.#timelineBytes = options.timelineBytes ?? TIMELINE_BYTES;
    this.#reference = new ReferenceCache(options.fetchBytes ?? fetchBytes);
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
    const k = Math.floor(n);
    if (!(k >= 1 && k <= MAX_STEPS_PER_REQUEST)) throw new RequestFailure('input', `step count (${n}) must be in [1, ${MAX_STEPS_PER_REQUEST}]`);
    run.train(k, this.#view());
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

  /** The weights as a safetensors file, and the snapshot they belong to. */
  exportWeights(): { bytes: Uint8Array; snapshot: Snapshot } {
    const run = this.#require();
    return { bytes: run.trainer.exportWeights(), snapshot: this.snapshot() };
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

  /** Sets the interventions and measures the run without and with them. */
  ablate(wanted: Ablation): { report: AblationReport; snapshot: Snapshot } {
    const run = this.#require();
    this.generateEnd(); // its cache was made under the old interventions
    const measured = measureAblation(run.trainer, run.config.nLayers, run.config.nHeads, wanted, this.#ablation);
    this.#ablation = measured.ablation;
    const report: AblationReport = { ...measured, step: run.step, task: run.config.task };
    return { report, snapshot: this.snapshot() };
  }

  /** The kept steps, copies of the snapshots after `since` (-1: all), and the policy's state. */
  timeline(since: number): Timeline {
    const { timeline: tl } = this.#require();
    const entries = entriesAfter(tl, since).map((e) => ({
      ...e,
      ids: e.ids.slice(),
      weights: e.weights.slice(),
      entropy: e.entropy.slice(),
      answerMass: e.answerMass.slice(),
      previousToken: e.previousToken.slice(),
      prefixMatching: e.prefixMatching.slice(),
    }));
    return { steps: tl.entries.map((e) => e.step), entries, every: tl.every, capacity: tl.capacity, bytes: timelineBytes(tl.entries) };
  }

  /** The core's per-head scores now (previous-token, prefix-matching, K-composition). */
  headScores(): HeadScoresReport {
    const run = this.#require();
    return { scores: headScoresOf(run.trainer, run.config.nLayers, run.config.nHeads), step: run.step };
  }

  /** One query row of one head (global index), forward and backward, on the sample; the target is the one
   * given, else the default one (chooseTarget). */
  rowBackward(head: number, query: number, chosen?: number): RowBackwardReport {
    const run = this.#require();
    const ids = this.#sample;
    const { target, targetSource } = chosen !== undefined ? { target: chosen, targetSource: 'chosen' as const } : chooseTarget(this.core.taskTargets(run.config.task, ids), ids, query);
    return { ids: ids.slice(), head, query, target, targetSource, row: run.trainer.rowBackward(ids, head, query, target) };
  }

  /** The core's checks on the live model, with the reference case at files when it loads. */
  async selfTest(files: ReferenceFiles): Promise<SelfTestReport> {
    this.#require();
    let reference = null;
    let loadError = '';
    try {
      reference = await this.#reference.load(files);
    } catch (e) {
      loadError = messageOf(e);
    }
    return runSelfTest(this.#require().trainer, reference, loadError, this.#now);
  }

  /** The model's top tokens at each position of the sample, and the task's answers. */
  predictions(): PredictionsReport {
    const run = this.#require();
    return predictions(run.trainer, run.config, this.#sample, run.step);
  }

  /** Look inside the live model on the sample (the "Look inside" panel; see inspectSample). */
  inspect(corrupted?: number[], change?: number): InspectReport {
    const run = this.#require();
    return inspectSample(this.core, run.trainer, run.config, this.#sample, run.step, corrupted, change);
  }

  /** The live model on its task at each of lengths (a row per length; see measureLengths). */
  lengths(lengths: number[], batches: number): LengthsReport {
    const run = this.#require();
    return { step: run.step, config: run.config, rows: measureLengths(run.trainer, lengths, batches) };
  }

  /** A new Trainer for the comparison, apart from the run (which plays on); the previous one is
   * freed once the new one exists. */
  comparisonStart(config: TrainerConfigMsg): void {
    const trainer = new this.core.Trainer(config, this.#corpus);
    this.comparisonEnd();
    this.#comparison = { trainer, config };
  }

  /** n steps (1..MAX_STEPS_PER_REQUEST) of the comparison's Trainer: its step count and last loss. */
  comparisonStep(n: number): { step: number; loss: number } {
    const c = this.#requireComparison();
    const k = Math.floor(n);
    if (!(k >= 1 && k <= MAX_STEPS_PER_REQUEST)) throw new RequestFailure('input', `step count (${n}) must be in [1, ${MAX_STEPS_PER_REQUEST}]`);
    const loss = c.trainer.step(k);
    return { step: c.trainer.stepsDone(), loss };
  }

  /** The comparison's Trainer at each of lengths, as lengths() measures the run. */
  comparisonLengths(lengths: number[], batches: number): LengthsReport {
    const c = this.#requireComparison();
    return { step: c.trainer.stepsDone(), config: c.config, rows: measureLengths(c.trainer, lengths, batches) };
  }

  /** Frees the comparison's Trainer (if any). */
  comparisonEnd(): void {
    this.#comparison?.trainer.delete();
    this.#comparison = null;
  }

  /** A generation on the live model (task text), its prompt pushed; replaces the previous one. */
  generateStart(spec: GenerateSpec): GenerateStarted {
    const run = this.#require();
    const g = new Generation(this.core, run.trainer, spec);
    this.generateEnd();
    this.#generation = g;
    return g.started;
  }

  /** The generation's next n characters; it is freed once done or failed. */
  generateNext(n: number): GenerateChunk {
    const g = this.#generation;
    if (!g) throw new RequestFailure('state', 'No generation is running: press Generate.');
    try {
      const chunk = g.next(n);
      if (chunk.done) this.generateEnd();
      return chunk;
    } catch (e) {
      this.generateEnd();
      throw e;
    }
  }

  /** Frees the generation (if any). */
  generateEnd(): void {
    this.#generation?.delete();
    this.#generation = null;
  }

  /** A short sample of the live model (the strip of samples over training). */
  textSample(spec: GenerateSpec): TextSample {
    const run = this.#require();
    return { step: run.step, text: textSample(this.core, run.trainer, spec) };
  }

  /** The KV cache's speed-up on the live model. */
  cacheSpeed(prompt: string, tokens: number): CacheSpeed {
    const run = this.#require();
    return { ...cacheSpeed(this.core, run.trainer, prompt, tokens, this.#now), step: run.step };
  }

  /** View 2: every stage of one head (needs no Trainer). */
  selfAttention(input: SelfAttentionRequest): SelfAttentionStages {
    return selfAttentionStages(this.core, input);
  }

  /** View 3: one block of the config's model at its seeded init, on the sample, every stage
   * from the core (needs no Trainer; the run is untouched). */
  transformerBlock(input: BlockRequest): BlockStages {
    const ids = withKind('input', () => this.#sampleIds(input.sample, input.config, this.#run?.trainer));
    const stages = this.core.transformerBlock({ config: input.config, ids, ropePair: input.ropePair, ropeHead: input.ropeHead });
    return { ...stages, ids };
  }

  /** View 2's sqrt(dk) panel (needs no Trainer). */
  scalingDemo(dk: number, keys: number, seed: number): ScalingDemo {
    return this.core.scalingDemo(dk, keys, seed);
  }

  /** View 2's stability panel: the logits in float32 through both recipes (needs no Trainer). */
  softmaxSteps(logits: number[]): SoftmaxComparison {
    const x = Float32Array.from(logits);
    return { logits: x, naive: this.core.softmaxSteps(x, false), stable: this.core.softmaxSteps(x, true) };
  }

  /** Everything the page draws for the current moment of the run. */
  snapshot(): Snapshot {
    const run = this.#require();
    // Task text: the validation loss at most once a second while playing, at every other snapshot.
    const now = this.#now();
    if (run.corpus && run.textStep !== run.step && (!this.#playing || now - this.#textMeasuredAt >= TEXT_EVAL_MS)) {
      run.measureText();
      this.#textMeasuredAt = now;
    }
    return run.snapshot(this.#view(), this.#playing ? this.#pace.stepsPerSec() : 0, run.textReadout(this.#corpus === null));
  }

  /** Frees the Trainer and stops the play loop. */
  dispose(): void {
    this.generateEnd();
    this.comparisonEnd();
    this.#playing = false;
    this.#run?.delete();
    this.#run = null;
  }

  // ---- The run

  /** The ids of a sample request: the ids given, or the task generator's sequence for the seed
   * (task text: the text's, from trainer's validation split, so it needs a text trainer). */
  #sampleIds(sample: SampleSpec, config: TrainerConfigMsg, trainer: Trainer | undefined): Int32Array<ArrayBuffer> {
    if (Array.isArray(sample)) return Int32Array.from(sample);
    if (config.task !== 'text') return Int32Array.from(this.core.taskSample(config.task, config.vocabSize, config.seqLen, sample.seed));
    if (!trainer?.corpus()) throw new RequestFailure('input', 'a text sample needs a text run: train on the text task first');
    return Int32Array.from(trainer.sampleSequence(sample.seed));
  }

  #requireComparison(): { trainer: Trainer; config: TrainerConfigMsg } {
    if (!this.#comparison) throw new RequestFailure('state', 'no comparison trainer: send comparisonStart first');
    return this.#comparison;
  }

  #require(): Run {
    if (!this.#run) throw new RequestFailure('state', 'no trainer: send configure first');
    return this.#run;
  }

  /** What the run is shown on: the sample, under the mask in force. */
  #view(): View {
    return { sample: this.#sample, mask: this.#ablation?.mask ?? 'causal' };
  }

  /** Makes trainer the current one (the old one is freed), with a new timeline and its first
   * snapshot (none when the sample does not fit this model: configure reports that). */
  #install(trainer: Trainer, config: TrainerConfigMsg, initLoss: number, past: Past | null): void {
    this.generateEnd(); // its decoder reads the old Trainer
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

/** The default target of the one-row backward at query: the task's answer there (answers: the
 * task's targets, -100 where it has none), else the next token, else the token itself. */
export function chooseTarget(answers: Int32Array, ids: Int32Array, query: number): Pick<RowBackwardReport, 'target' | 'targetSource'> {
  const answer = answers[query];
  if (answer !== undefined && answer >= 0) return { target: answer, targetSource: 'task' };
  if (query + 1 < ids.length) return { target: ids[query + 1], targetSource: 'next' };
  return { target: ids[query] ?? 0, targetSource: 'last' };
}
