// The self-test panel's model: one run of the checks at a time, and whether the results shown
// belong to an earlier model (a new run started since).
import type { Controller } from '../client/controller';
import type { SelfTestReport } from '../model/protocol';

/** What the view does with the model's news. */
export interface SelfTestViewHooks {
  /** The checks were asked for. */
  started(): void;
  /** The report, when it was measured (a sentence's end), and whether a new run started since. */
  done(report: SelfTestReport, at: string, stale: boolean): void;
  failed(why: string): void;
  /** A run ended (either way). */
  finished(): void;
}

/** The panel's state and its one request. */
export class SelfTestModel {
  running = false;
  /** Runs of the checks so far (done or failed). */
  runs = 0;
  /** The run (Controller.runId) the results shown belong to. */
  private shownRun: number;
  private destroyed = false;

  constructor(
    private readonly ctl: Controller,
    private readonly view: SelfTestViewHooks,
  ) {
    this.shownRun = ctl.runId;
  }

  /** Whether a run exists to check. */
  get ready(): boolean {
    return this.ctl.status !== 'loading' && this.ctl.status !== 'crashed' && !!this.ctl.snapshot;
  }

  /** Whether the results shown are of an earlier model. */
  get stale(): boolean {
    return this.ctl.runId !== this.shownRun;
  }

  /** Runs the checks, unless they are running already. */
  async run(): Promise<void> {
    if (this.running) return;
    const ctl = this.ctl;
    this.running = true;
    this.view.started();
    const mine = ctl.runId;
    const before = { step: ctl.snapshot?.step, paused: ctl.status === 'paused' };
    try {
      const report = await ctl.selfTest();
      if (this.destroyed) return;
      this.shownRun = mine;
      const still = before.paused && ctl.status === 'paused' && ctl.snapshot?.step === before.step;
      this.view.done(report, still ? `the model at step ${before.step}` : 'while the model was training', this.stale);
    } catch (e) {
      if (this.destroyed) return;
      this.view.failed(e instanceof Error ? e.message : String(e));
    } finally {
      this.runs++;
      this.running = false;
      if (!this.destroyed) this.view.finished();
    }
  }

  destroy(): void {
    this.destroyed = true;
  }
}
