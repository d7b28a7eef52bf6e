// The self-test panel's model: the checks run when the learner asks (never by themselves), one run
// at a time (presses while it runs are ignored), and whether the results shown belong to an earlier
// model (a new run started since).
import type { Controller } from '../../client/controller';
import { PanelModel, type PanelView } from '../../ui/panel-model';
import { selfTestRequest, type SelfTestReport } from './request';

/** A run of the checks: the report, when it was measured (a sentence's end), and whether a new run
 * of the model started since. */
export interface SelfTestOutcome {
  report: SelfTestReport;
  at: string;
  stale: boolean;
}

/** The panel's state and its one request. */
export class SelfTestModel extends PanelModel<SelfTestOutcome> {
  running = false;
  /** Runs of the checks so far (done or failed). */
  runs = 0;
  /** The run (Controller.runId) the results shown belong to. */
  private shownRun: number;

  constructor(ctl: Controller, view: PanelView<SelfTestOutcome>) {
    super(ctl, view, { whilePlaying: 0, auto: false });
    this.shownRun = ctl.runId;
    this.start();
  }

  /** Whether the results shown are of an earlier model. */
  get stale(): boolean {
    return this.ctl.runId !== this.shownRun;
  }

  /** Runs the checks, unless they are running already. */
  run(): void {
    if (!this.running) this.refresh();
  }

  protected async ask(): Promise<SelfTestOutcome> {
    const ctl = this.ctl;
    this.running = true;
    const mine = ctl.runId;
    const before = { step: ctl.snapshot?.step, paused: ctl.status === 'paused' };
    try {
      const report = await ctl.call(selfTestRequest, ctl.assets.reference);
      this.shownRun = mine;
      const still = before.paused && ctl.status === 'paused' && ctl.snapshot?.step === before.step;
      return { report, at: still ? `the model at step ${before.step}` : 'while the model was training', stale: this.stale };
    } finally {
      this.runs++;
      this.running = false;
    }
  }
}
