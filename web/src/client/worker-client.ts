// The worker client: starts the training worker and matches each reply to its request by id
// (the messages of model/protocol.ts). Knows nothing of settings or runs; the controller drives it.
import type { ErrorKind, ErrorReply, ReplyFor, Request, WorkerEvent, WorkerMessage } from '../model/protocol';
import type { Assets } from './assets';
import { explainWorkerFailure, startWorker, watchPolicyViolations, type StartedWorker } from './worker-start';

/** A request that the worker answered with an error reply. */
export class RequestError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly key?: string,
  ) {
    super(message);
  }
}

type Pending = { resolve: (m: unknown) => void; reject: (e: unknown) => void };
type RequestBody<K extends Request['type']> = Omit<Extract<Request, { type: K }>, 'id'>;

/** Sends requests to a worker and matches each reply to its request by id. */
export class WorkerClient {
  private worker: Worker | null = null;
  private started: StartedWorker | null = null;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  /** Called for progress/stopped events. */
  onEvent: (e: WorkerEvent) => void = () => {};
  /** Called once when the worker dies (uncaught error, failed load). */
  onCrash: (message: string) => void = () => {};

  constructor(
    readonly assets: Assets,
    /** A build to load instead of the best one here: 'simd' (the plain SIMD build, not the
     * relaxed one) or 'scalar'. */
    private readonly force?: 'simd' | 'scalar',
    /** At most this many threads (1: the one-thread build even where threads are available). */
    private readonly maxThreads?: number,
  ) {}

  /**
   * Starts a worker and loads the core; resolves with whether a SIMD build was chosen and on how
   * many threads it runs. A worker that cannot start rejects with a RequestError of kind 'worker'
   * whose message names the cause.
   */
  async start(): Promise<{ simd: boolean; relaxed: boolean; threads: number }> {
    this.stop();
    const violations = watchPolicyViolations();
    const cannotStart = async (cause: unknown) => new RequestError('worker', await explainWorkerFailure(this.assets.worker, cause, violations.seen));
    try {
      let started: StartedWorker;
      try {
        started = startWorker(this.assets.worker, 'attention-trainer');
      } catch (e) {
        throw await cannotStart(e);
      }
      this.started = started;
      const w = started.worker;
      this.worker = w;
      let up = false;
      let failedToStart: (e: RequestError) => void = () => {};
      const startFailure = new Promise<never>((_, reject) => (failedToStart = reject));
      w.onmessage = (ev: MessageEvent<WorkerMessage>) => {
        up = true;
        this.receive(ev.data);
      };
      w.onerror = (ev: ErrorEvent) => {
        ev.preventDefault();
        if (up) this.crash(ev.message || 'the worker stopped with an error');
        else if (this.worker === w) {
          void cannotStart(ev).then((e) => {
            failedToStart(e);
            if (this.worker === w) this.stop();
          });
        }
      };
      w.onmessageerror = () => this.crash('the worker sent a message that could not be read');
      const init = this.request('init', { type: 'init', core: this.assets.core, force: this.force, maxThreads: this.maxThreads });
      const reply = await Promise.race([init, startFailure]);
      return { simd: reply.simd, relaxed: reply.relaxed, threads: reply.threads };
    } finally {
      violations.stop();
    }
  }

  /** Terminates the worker; pending requests are rejected. */
  stop(): void {
    this.worker?.terminate();
    this.worker = null;
    this.started?.dispose();
    this.started = null;
    for (const p of this.pending.values()) p.reject(new RequestError('internal', 'the worker was stopped'));
    this.pending.clear();
  }

  /** Sends a request; resolves with the reply it names, rejects with a RequestError. */
  request<K extends Request['type']>(_type: K, body: RequestBody<K>): Promise<ReplyFor[K]> {
    const w = this.worker;
    if (!w) return Promise.reject(new RequestError('state', 'the worker is not running'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (m: unknown) => void, reject });
      w.postMessage({ ...body, id } as Request);
    });
  }

  private receive(m: WorkerMessage): void {
    if (!('replyTo' in m)) {
      this.onEvent(m);
      return;
    }
    const p = this.pending.get(m.replyTo);
    if (!p) return;
    this.pending.delete(m.replyTo);
    if (m.type === 'error') {
      const e = m as ErrorReply;
      p.reject(new RequestError(e.kind, e.message, e.key));
    } else {
      p.resolve(m);
    }
  }

  private crash(message: string): void {
    if (!this.worker) return;
    this.stop();
    this.onCrash(message);
  }
}
