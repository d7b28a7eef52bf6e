// The controller: reset, step, play/pause, restart. It talks to the worker only through the
// worker client (the messages of model/protocol.ts) and never touches wasm. It keeps no settings: every
// request is built from the Store at the moment it is sent, and a change of the Store's config or
// sample becomes a configure or sample request here. Views subscribe to its snapshots and status.
import type {
  AblationReport,
  HeadScoresReport,
  RowBackwardReport,
  SelfTestReport,
  Timeline,
  ErrorKind,
  ImportRun,
  SelfAttentionRequest,
  SelfAttentionStages,
  BlockStages,
  ScalingDemo,
  SoftmaxComparison,
  Snapshot,
  WorkerEvent,
  PredictionsReport,
  InspectReport,
  LengthsReport,
  TrainerConfigMsg,
  CacheSpeed,
  GenerateChunk,
  GenerateSpec,
  GenerateStarted,
  TextSample,
  CorpusInput,
} from '../model/protocol';
import { CONFIG_KEYS, keysOf, type State } from '../settings/settings';
import { ablationOf, ablationState, sampleSpec, totalHeads, trainerConfig } from '../settings/state';
import type { ChangeSource, Store } from '../settings/store';
import { RequestError, type WorkerClient } from './worker-client';

export { RequestError, WorkerClient } from './worker-client';

/** What the run is doing. */
export type RunStatus = 'loading' | 'paused' | 'playing' | 'invalid' | 'crashed';

/** Something the learner should read: a core message, a non-finite loss, a crash. */
export interface Problem {
  kind: ErrorKind | 'crash';
  message: string;
  /** The config key the core named, if any. */
  key?: string;
}

/** Reset/step/play/pause for the training view, and the self-attention request of view 2. */
export class Controller {
  status: RunStatus = 'loading';
  snapshot: Snapshot | null = null;
  simd = false;
  /** The threads the core runs on (more than 1: the threads build). */
  threads = 1;
  /** Changes whenever a new run starts (configure, reset, import, restart): panels that hold
   * data of the old run (timeline, ablation report, backward view) start over. */
  runId = 0;
  /** Task text: the corpus runs train on (null: the core's default). Not a setting: too large for
   * the URL, so the page or the element holds it. */
  corpus: CorpusInput | null = null;
  private intervalMs = 50;
  /** Whether a model was asked for (reset and restart need one). */
  private configured = false;
  private listeners = new Set<(c: Controller) => void>();
  private problemListeners = new Set<(p: Problem | null) => void>();
  private unsubscribeStore: () => void;

  constructor(
    private readonly client: WorkerClient,
    /** The settings: the only owner of config, sample, task, ablation and view. */
    readonly store: Store,
  ) {
    client.onEvent = (e) => this.onEvent(e);
    client.onCrash = (message) => {
      this.status = 'crashed';
      this.emitProblem({
        kind: 'crash',
        message: `The training worker stopped unexpectedly (${message}). Restart it to continue.`,
      });
      this.emit();
    };
    this.unsubscribeStore = store.subscribe((_s, changed, source) => this.onSettings(changed, source));
  }

  /** A new config builds a new model; a new sample changes the heatmaps' sequence. */
  private onSettings(changed: ReadonlySet<keyof State>, source: ChangeSource): void {
    if (source === 'run') return; // the worker holds that run already (an import)
    if (CONFIG_KEYS.some((k) => changed.has(k))) void this.configure();
    else if (keysOf('sample').some((k) => changed.has(k))) void this.setSample();
  }

  /** Stops following the Store (the page is unmounted). */
  destroy(): void {
    this.unsubscribeStore();
  }

  /** Calls f whenever status or snapshot change. Returns an unsubscribe function. */
  subscribe(f: (c: Controller) => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  /** Calls f with each new problem, or null when the last one is resolved. */
  onProblem(f: (p: Problem | null) => void): () => void {
    this.problemListeners.add(f);
    return () => this.problemListeners.delete(f);
  }

  /** Progress events while playing arrive at most every ms milliseconds. */
  setProgressInterval(ms: number): void {
    this.intervalMs = ms;
  }

  /** Starts the worker and loads the core. */
  async start(): Promise<void> {
    this.status = 'loading';
    this.emit();
    ({ simd: this.simd, threads: this.threads } = await this.client.start());
  }

  /** Builds a new model from the Store's settings (back to step 0). On a core error the old run
   * stays and status is invalid. */
  async configure(): Promise<void> {
    const s = this.store.state;
    const config = trainerConfig(s);
    const request = { type: 'configure', config, sample: sampleSpec(s), ablation: ablationOf(s, totalHeads(config)), ...(config.task === 'text' && { corpus: this.corpus }) } as const;
    this.configured = true;
    const first = this.snapshot === null;
    let fallback: RequestError | null = null;
    await this.run(
      this.client.request('configure', request).catch(async (e: unknown) => {
        // The first run's text (an element's slot or property) rejected: the run starts on the
        // default text, and the problem says why.
        if (!(first && request.corpus != null && e instanceof RequestError && e.kind === 'input')) throw e;
        this.corpus = null;
        const r = await this.client.request('configure', { ...request, corpus: null });
        fallback = new RequestError('input', `The text was not used, so the model trains on the default text: ${e.message}`);
        return r;
      }),
      'paused',
      true,
    );
    if (fallback) this.fail(fallback);
  }

  /**
   * Task text: restarts the run (step 0, paused) on corpus (null: the default). A corpus the core
   * rejects is thrown as a RequestError (kind `input`, one sentence) and nothing changes: the run
   * goes on as it was. Before the first run, the corpus is only kept for it.
   */
  async useCorpus(corpus: CorpusInput | null): Promise<void> {
    if (!this.configured) {
      this.corpus = corpus;
      return;
    }
    if (this.status === 'loading' || this.status === 'crashed') throw new RequestError('state', 'the core is not ready');
    const r = await this.client.request('useCorpus', { type: 'useCorpus', corpus });
    this.corpus = corpus;
    this.snapshot = r.snapshot;
    this.runId++;
    this.status = 'paused';
    this.emitProblem(null);
    this.emit();
  }

  /** Back to step 0 with the same config and seed. */
  async reset(): Promise<void> {
    if (!this.configured || this.status === 'invalid') return;
    await this.run(this.client.request('reset', { type: 'reset' }), 'paused', true);
  }

  /** Runs n steps (pausing first if playing). */
  async step(n: number): Promise<void> {
    if (this.status === 'invalid' || this.status === 'crashed' || this.status === 'loading') return;
    if (this.status === 'playing') await this.pause();
    await this.run(this.client.request('step', { type: 'step', n }), 'paused');
  }

  /** Trains until pause() or a non-finite loss. */
  async play(): Promise<void> {
    if (this.status !== 'paused') return;
    this.status = 'playing';
    this.emitProblem(null);
    this.emit();
    await this.client.request('play', { type: 'play', intervalMs: this.intervalMs }).catch((e) => this.fail(e));
  }

  /** Stops training after the current chunk. */
  async pause(): Promise<void> {
    if (this.status !== 'playing') return;
    await this.run(this.client.request('pause', { type: 'pause' }), 'paused');
  }

  /** Play if paused, pause if playing. */
  toggle(): Promise<void> {
    return this.status === 'playing' ? this.pause() : this.play();
  }

  /** Shows the Store's sample sequence in the heatmaps. */
  async setSample(): Promise<void> {
    if (!this.configured || this.status === 'invalid' || this.status === 'crashed' || this.status === 'loading') return;
    try {
      const r = await this.client.request('sample', { type: 'sample', sample: sampleSpec(this.store.state) });
      this.snapshot = r.snapshot;
      this.emit();
    } catch (e) {
      this.fail(e);
    }
  }

  /** A new worker after a crash, with the Store's settings (back to step 0). */
  async restart(): Promise<void> {
    this.emitProblem(null);
    await this.start();
    if (this.configured) await this.configure();
  }

  /** The weights as a safetensors file and the snapshot they belong to (pauses first). */
  async exportWeights(): Promise<{ bytes: Uint8Array; snapshot: Snapshot }> {
    if (this.status === 'playing') await this.pause();
    const r = await this.client.request('exportWeights', { type: 'exportWeights' });
    return { bytes: r.bytes, snapshot: r.snapshot };
  }

  /**
   * Restores a run. On success the run is paused at the imported step and the Store holds its
   * settings (config, sample, ablation, whichever it carries); on an error (rejected with a
   * RequestError) nothing changes, and the caller shows the message.
   */
  async importRun(run: ImportRun): Promise<void> {
    if (this.status === 'loading' || this.status === 'crashed') throw new RequestError('state', 'the core is not ready');
    const r = await this.client.request('importRun', { type: 'importRun', run });
    const settings: Partial<State> = {
      ...run.config,
      ...(run.sample && { sample: run.sample.join(' ') }),
      ...(run.ablation && ablationState(run.ablation)),
    };
    this.snapshot = r.snapshot;
    this.runId++;
    if ((this.status as RunStatus) !== 'crashed') this.status = 'paused';
    this.store.set(settings, 'run');
    this.emitProblem(null);
    this.emit();
  }

  /** Applies the Store's interventions, sized to the run's head count (every layer's; the worker
   * keeps them across reset), and measures their effect. */
  async ablate(): Promise<AblationReport> {
    this.requireRun();
    const ablation = ablationOf(this.store.state, this.snapshot!.L * this.snapshot!.H);
    const r = await this.client.request('ablate', { type: 'ablate', ablation });
    this.snapshot = r.snapshot;
    this.emit();
    return r.report;
  }

  /** The timeline entries after step `since` (-1: all), and which steps are kept. */
  async timeline(since: number): Promise<Timeline> {
    this.requireRun();
    return (await this.client.request('timeline', { type: 'timeline', since })).timeline;
  }

  /** The core's per-head scores of the live model (previous-token, prefix-matching, K-composition). */
  async headScores(): Promise<HeadScoresReport> {
    this.requireRun();
    return (await this.client.request('headScores', { type: 'headScores' })).report;
  }

  /** One query row of one head (global index l * H + h), forward and backward, on the sample sequence. */
  async rowBackward(head: number, query: number, target?: number): Promise<RowBackwardReport> {
    this.requireRun();
    return (await this.client.request('rowBackward', { type: 'rowBackward', head, query, target })).report;
  }

  /** The curriculum's invariants on the live model, plus the shipped PyTorch case. */
  async selfTest(): Promise<SelfTestReport> {
    this.requireRun();
    return (await this.client.request('selfTest', { type: 'selfTest', reference: this.client.assets.reference })).report;
  }

  /** The model's top 3 next tokens at each position of the sample, with the task's answers. */
  async predictions(): Promise<PredictionsReport> {
    this.requireRun();
    return (await this.client.request('predictions', { type: 'predictions' })).report;
  }

  /** The live model on its task at each of lengths (a row per length; a learned table too short
   * for one is that row's problem). */
  async lengths(lengths: number[], batches: number): Promise<LengthsReport> {
    this.requireRun();
    return (await this.client.request('lengths', { type: 'lengths', lengths, batches })).report;
  }

  /** Look inside the live model on the sample: the logit lens, attribution, patching against
   * `corrupted` (or the sample with the token at `change` changed, or the task's default) and the
   * QK/OV circuits. A bad corrupted input is rejected with kind `input`. */
  async inspect(corrupted?: number[], change?: number): Promise<InspectReport> {
    this.requireRun();
    return (await this.client.request('inspect', { type: 'inspect', corrupted, change })).report;
  }

  /** The comparison's Trainer in the worker, apart from the run: start it for config, train it n
   * steps (its step count and last loss), measure it at lengths, free it. */
  readonly comparison = {
    start: async (config: TrainerConfigMsg): Promise<void> => {
      await this.client.request('comparisonStart', { type: 'comparisonStart', config });
    },
    step: async (n: number): Promise<{ step: number; loss: number }> => {
      const r = await this.client.request('comparisonStep', { type: 'comparisonStep', n });
      return { step: r.step, loss: r.loss };
    },
    lengths: async (lengths: number[], batches: number): Promise<LengthsReport> =>
      (await this.client.request('comparisonLengths', { type: 'comparisonLengths', lengths, batches })).report,
    end: async (): Promise<void> => {
      await this.client.request('comparisonEnd', { type: 'comparisonEnd' });
    },
  };

  /** The Generate panel's generation in the worker (task text): start it (the prompt pushed),
   * take the next n characters, free it. */
  readonly generation = {
    start: async (spec: GenerateSpec): Promise<GenerateStarted> => {
      this.requireRun();
      return (await this.client.request('generateStart', { type: 'generateStart', spec })).started;
    },
    next: async (n: number): Promise<GenerateChunk> => (await this.client.request('generateNext', { type: 'generateNext', n })).chunk,
    end: async (): Promise<void> => {
      await this.client.request('generateEnd', { type: 'generateEnd' });
    },
  };

  /** A short sample of the live model (the strip of samples over training). */
  async textSample(spec: GenerateSpec): Promise<TextSample> {
    this.requireRun();
    return (await this.client.request('textSample', { type: 'textSample', spec })).sample;
  }

  /** The same greedy characters with and without the KV cache: tokens/s of each. */
  async cacheSpeed(prompt: string, tokens: number): Promise<CacheSpeed> {
    this.requireRun();
    return (await this.client.request('cacheSpeed', { type: 'cacheSpeed', prompt, tokens })).speed;
  }

  private requireRun(): void {
    if (!this.snapshot || this.status === 'loading' || this.status === 'crashed') throw new RequestError('state', 'the core is not ready');
  }

  /** View 2: every stage of one head, computed by the core in the worker. */
  async selfAttention(input: SelfAttentionRequest): Promise<SelfAttentionStages> {
    const r = await this.client.request('selfAttention', { type: 'selfAttention', input });
    return r.stages;
  }

  /** View 3: one block of the Store's model (config and sample as the training view's), every
   * stage computed by the core in the worker. */
  async transformerBlock(opts: { ropePair?: number; ropeHead?: number } = {}): Promise<BlockStages> {
    const s = this.store.state;
    const input = { config: trainerConfig(s), sample: sampleSpec(s), ...opts };
    return (await this.client.request('transformerBlock', { type: 'transformerBlock', input })).stages;
  }

  /** View 2's sqrt(dk) panel: one seeded query row of width dk against `keys` keys. */
  async scalingDemo(dk: number, keys: number, seed: number): Promise<ScalingDemo> {
    return (await this.client.request('scalingDemo', { type: 'scalingDemo', dk, keys, seed })).demo;
  }

  /** View 2's stability panel: the logits' softmax without and with the max subtracted. */
  async softmaxSteps(logits: number[]): Promise<SoftmaxComparison> {
    return (await this.client.request('softmaxSteps', { type: 'softmaxSteps', logits })).comparison;
  }

  private async run(p: Promise<{ snapshot: Snapshot }>, after: RunStatus, newRun = false): Promise<void> {
    try {
      const r = await p;
      this.snapshot = r.snapshot;
      if (newRun) this.runId++;
      if (this.status !== 'crashed') this.status = after;
      this.emitProblem(null);
      this.emit();
    } catch (e) {
      this.fail(e);
    }
  }

  private fail(e: unknown): void {
    if (this.status === 'crashed') return;
    const err = e instanceof RequestError ? e : new RequestError('internal', String(e));
    if (err.kind === 'config') this.status = 'invalid';
    else if (this.status === 'playing' || this.status === 'loading') this.status = 'paused';
    this.emitProblem({ kind: err.kind, message: explain(err), key: err.key });
    this.emit();
  }

  private onEvent(e: WorkerEvent): void {
    this.snapshot = e.snapshot;
    if (e.type === 'stopped') {
      this.status = 'paused';
      this.emitProblem({ kind: e.kind, message: explain(new RequestError(e.kind, e.message)) });
    }
    this.emit();
  }

  /** Tells every subscriber to look at the current state again (a panel that was hidden is shown). */
  refresh(): void {
    this.emit();
  }

  private emit(): void {
    for (const f of this.listeners) f(this);
  }

  private emitProblem(p: Problem | null): void {
    for (const f of this.problemListeners) f(p);
  }
}

/** The core's message, with a sentence of context for the non-finite case. */
function explain(e: RequestError): string {
  if (e.kind === 'nonFinite') {
    return `Training paused: the loss is no longer a finite number, so the model cannot learn from it. ` +
      `This usually means the learning rate is too high. Lower it (or Reset) and press Play again. Core: ${e.message}`;
  }
  return e.message;
}
