// The controller: reset, step, play/pause, restart, import. It talks to the worker only through the
// worker client (the messages of model/protocol.ts) and never touches wasm. It keeps no settings: every
// request is built from the Store at the moment it is sent, and a change of the Store's config or
// sample becomes a configure or sample request here. Views subscribe to its snapshots and status.
// The panels' requests all go through one method, call(request, input), typed by the request's
// declaration (web/src/panels/<name>/request.ts): the controller has no method per panel.
import type { ErrorKind, ImportRun, RequestDef, Snapshot, WorkerEvent, CorpusInput } from '../model/protocol';
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
  /** The relaxed-SIMD build runs (fused multiply-adds). */
  relaxed = false;
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
    ({ simd: this.simd, relaxed: this.relaxed, threads: this.threads } = await this.client.start());
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

  /**
   * Task text: shows these characters in the heatmaps (the core's encodeText on the run's
   * vocabulary); the Store then holds their ids (the sample setting, in the URL) as the run's. A
   * character outside the vocabulary is rejected with the core's sentence (a RequestError of kind
   * `input`) and nothing changes.
   */
  async setSampleText(text: string): Promise<void> {
    if (!this.ready) throw new RequestError('state', 'the core is not ready');
    const r = await this.client.request('sample', { type: 'sample', sample: { text } });
    this.snapshot = r.snapshot;
    this.store.set({ sample: Array.from(r.snapshot.ids).join(' ') }, 'run');
    this.emit();
  }

  /** A new worker after a crash, with the Store's settings (back to step 0). */
  async restart(): Promise<void> {
    this.emitProblem(null);
    await this.start();
    if (this.configured) await this.configure();
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

  /** Whether a run exists to ask about (the panels' requests need one). */
  get ready(): boolean {
    return !!this.snapshot && this.status !== 'loading' && this.status !== 'crashed';
  }

  /** What the page loads at run time (the worker, the core's builds, the self-test's case). */
  get assets(): WorkerClient['assets'] {
    return this.client.assets;
  }

  /** Sends a panel's request (declared in web/src/panels/<name>/request.ts) to the worker;
   * resolves with its output, rejects with a RequestError (kind `state` after a crash, until
   * Restart). */
  async call<In, Out>(request: RequestDef<In, Out>, ...input: [In] extends [void] ? [] : [In]): Promise<Out> {
    if (this.status === 'crashed') throw new RequestError('state', 'the core is not ready');
    return (await this.client.request('call', { type: 'call', request: request.name, input: input[0] })).output as Out;
  }

  /** A panel's request changed what the heatmaps show (the interventions): its snapshot becomes
   * the page's, and every subscriber hears of it. */
  adopt(snapshot: Snapshot): void {
    this.snapshot = snapshot;
    this.emit();
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
