// The Ablation panel's model: which interventions are set (the Store's, sized to the run's heads),
// when the core measures them (a change, a new run, every second or so while training plays; one
// request in flight, the latest wins), and the sentences that say what the numbers mean.
import type { Controller } from '../../client/controller';
import { mean, num, pct, signed } from '../../model/format';
import { argmaxHead, headLabel } from '../../model/layers';
import { noAblation, type Ablation } from '../../model/protocol';
import { ABLATION_KEYS, type State } from '../../settings/settings';
import { ablationOf, ablationState } from '../../settings/state';
import { PanelModel, type PanelView } from '../../ui/panel-model';
import { ablateRequest, type AblationReport } from './request';

/** How often the panel re-measures while training plays (ms). */
const REMEASURE_MS = 1000;

const capitalise = (t: string) => `${t.charAt(0).toUpperCase()}${t.slice(1)}`;

/** The head whose prefix-matching score the panel follows: the intact model's most
 * prefix-matching head, in a layer after the first when there are several (the induction head);
 * -1 when the scores are undefined. */
export function inductionHead(r: AblationReport): number {
  const s = r.intactScores;
  return argmaxHead(s.prefixMatching, s.nHeads, s.nLayers > 1 ? 1 : 0);
}

/** The sentence on the induction circuit when heads are off: the induction head's prefix-matching
 * score and the accuracy, intact and with the heads off (empty when the scores are undefined). */
export function explainInduction(r: AblationReport): string {
  const g = inductionHead(r);
  if (g < 0) return '';
  const { nLayers: L, nHeads: H } = r.intactScores;
  const name = headLabel(g, H, L);
  const before = r.intactScores.prefixMatching[g];
  const after = r.ablatedScores.prefixMatching[g];
  const prev = argmaxHead(r.intactScores.previousToken, H);
  const knocked = prev >= 0 && r.ablation.headsOff[prev] ? ` ${capitalise(headLabel(prev, H, L))} is the most previous-token-like head (score ${num(r.intactScores.previousToken[prev])}); without it no key knows its previous token.` : '';
  const fell = after < before - 0.1 && r.ablated.accuracy < r.intact.accuracy - 0.1;
  return (
    `Induction: ${name}'s prefix-matching score goes from ${num(before)} to ${num(after)}, the accuracy from ${pct(r.intact.accuracy)} to ${pct(r.ablated.accuracy)}.${knocked}` +
    (fell ? ' The circuit is broken: the induction head no longer finds the token after the earlier occurrence, and the copy fails.' : '')
  );
}

/** The sentences under the numbers: what each intervention did, in this run's numbers. */
export function explainAblation(r: AblationReport, vocabSize: number): string[] {
  const a = r.ablation;
  const out: string[] = [];
  const { nLayers: L, nHeads: H } = r.intactScores;
  const off = a.headsOff.flatMap((z, g) => (z ? [g] : []));
  const frozen = a.headsFrozen.flatMap((f, g) => (f ? [g] : []));
  /** "Head 2 is", "Heads 1, 3 are"; with layers "Layer 1 · head 2 is", "Layer 1 · head 2, layer 2 · head 1 are". */
  const heads = (gs: number[]) => {
    const verb = gs.length === 1 ? 'is' : 'are';
    if (L === 1) return gs.length === 1 ? `Head ${gs[0] + 1} ${verb}` : `Heads ${gs.map((g) => g + 1).join(', ')} ${verb}`;
    return `${capitalise(gs.map((g) => headLabel(g, H, L)).join(', '))} ${verb}`;
  };
  if (a.mask !== 'causal') {
    const how = a.mask === 'none' ? 'With no mask' : 'With the inverted mask (−1e4 written below the diagonal instead of above it)';
    out.push(
      `The mask leaks. ${how}, query i can read key i + 1, and in next-token prediction key i + 1 holds exactly the token query i must predict. ` +
        'Training will happily learn to copy it: the loss falls and the accuracy rises, but the model has learned to read the future, which is not there when it generates text. That is a leak, not learning.',
    );
    const gain = r.ablated.accuracy - r.intact.accuracy;
    if (Number.isFinite(gain) && gain > 0.05) {
      out.push(`Measured now: accuracy ${pct(r.ablated.accuracy)} with the leaking mask, ${pct(r.intact.accuracy)} for the same weights under the correct causal mask (chance is ${pct(1 / vocabSize)}).`);
    } else if (r.task === 'future') {
      out.push(`On the future task the target is the next token: chance is ${pct(1 / vocabSize)} under the causal mask. Press Play and watch the accuracy with the leak climb toward 100%.`);
    } else {
      out.push('Choose the task "future" (the target is the next token) to see the leak most clearly: under the causal mask it stays at chance, with the leak it is solved.');
    }
  }
  if (!a.scaleScores) {
    const is = r.intactStats;
    const as = r.ablatedStats;
    out.push(
      `Without the 1/√dk scaling the scores are √dk times larger, so the softmax saturates: the mean largest weight of a row goes from ${num(mean(is.maxWeight))} to ${num(mean(as.maxWeight))} ` +
        `and the mean entropy from ${num(mean(is.entropy))} to ${num(mean(as.entropy))} nats. A saturated row passes almost no gradient back (the softmax Jacobian w(1 − w) is near 0 there), so training slows or stalls.`,
    );
  }
  if (off.length > 0) {
    const dl = r.ablated.loss - r.intact.loss;
    out.push(
      `${heads(off)} switched off: ${off.length === 1 ? 'its' : 'their'} output is zero, so nothing it computes reaches the LM head. ` +
        `The loss goes from ${num(r.intact.loss)} to ${num(r.ablated.loss)} (${signed(dl)}), the accuracy from ${pct(r.intact.accuracy)} to ${pct(r.ablated.accuracy)}. ` +
        (Math.abs(dl) < 0.01 ? 'Hardly a change: the other heads carry what this task needs.' : 'The remaining heads cannot fully stand in for it; keep training to see whether they learn to.'),
    );
    if (r.task === 'induction' || L > 1) {
      const induction = explainInduction(r);
      if (induction) out.push(induction);
    }
  }
  if (frozen.length > 0) {
    out.push(
      `${heads(frozen)} frozen: ${frozen.length === 1 ? 'its' : 'their'} query, key and value projections and ${frozen.length === 1 ? 'its' : 'their'} columns of out_proj stop updating while everything else trains. Press Play to see whether the other heads compensate.`,
    );
  }
  if (out.length === 0) out.push('The layer is intact: both columns measure the same model.');
  return out;
}

/** What the view does with the model's news, besides showing the measurement. */
export interface AblationView extends PanelView<AblationReport> {
  /** A new run with L layers of H heads (the head rows are rebuilt). */
  heads(L: number, H: number): void;
  /** The interventions to show in the inputs (the Store's, for the run's heads). */
  settings(a: Ablation): void;
  /** Whether the inputs can be used (a run exists). */
  ready(ok: boolean): void;
}

/** The panel's state and requests: a change of the interventions and a new run are measured at
 * once, shown or not (the request also sets them in the worker); a step, while the panel is shown,
 * and while training plays every second or so. `destroy` unsubscribes. */
export class AblationModel extends PanelModel<AblationReport> {
  /** The run's head count, every layer's (0 before the first run), and its layers. */
  H = 0;
  L = 1;
  report: AblationReport | null = null;
  private runId = -1;
  private readonly unsubscribeStore: () => void;

  constructor(
    ctl: Controller,
    protected override readonly view: AblationView,
    private readonly reducedMotion: boolean,
  ) {
    super(ctl, view, { whilePlaying: reducedMotion ? 2 * REMEASURE_MS : REMEASURE_MS });
    this.unsubscribeStore = ctl.store.subscribe((_s, changed, source) => this.onSettings(changed, source === 'run'));
    this.start();
  }

  /** The Store's interventions for the run's heads. */
  get ablation(): Ablation {
    return this.H > 0 ? ablationOf(this.ctl.store.state, this.H) : noAblation(0);
  }

  /** The re-measuring interval while training plays (ms). */
  get remeasureMs(): number {
    return this.reducedMotion ? 2 * REMEASURE_MS : REMEASURE_MS;
  }

  /** A change from the panel goes to the Store (and so to the URL); the Store's change sends it. */
  change(part: Partial<Ablation>): void {
    this.ctl.store.set(ablationState({ ...this.ablation, ...part }));
  }

  /** Back to the intact layer. */
  restore(): void {
    this.change(noAblation(this.H));
  }

  override destroy(): void {
    super.destroy();
    this.unsubscribeStore();
  }

  /** Sets the Store's interventions in the worker and measures them; the heatmaps follow. */
  protected async ask(): Promise<AblationReport> {
    const ctl = this.ctl;
    const r = await ctl.call(ablateRequest, ablationOf(ctl.store.state, ctl.snapshot!.L * ctl.snapshot!.H));
    ctl.adopt(r.snapshot);
    return r.report;
  }

  /** The run and its step (an answer's own snapshot, at the same step, asks nothing more). */
  protected override dependsOn(): string {
    return `${this.ctl.runId}|${this.ctl.snapshot?.step ?? ''}`;
  }

  protected override answered(r: AblationReport): boolean {
    this.report = r;
    return true;
  }

  protected override follow(): void {
    const ctl = this.ctl;
    const s = ctl.snapshot;
    this.view.ready(this.ready);
    if (!this.ready || !s || ctl.runId === this.runId) return;
    // A new run gets the Store's interventions, for its head count.
    this.runId = ctl.runId;
    if (this.H !== s.L * s.H || this.L !== s.L) {
      this.H = s.L * s.H;
      this.L = s.L;
      this.view.heads(s.L, s.H);
    }
    this.view.settings(this.ablation);
    void this.askNow();
  }

  private onSettings(changed: ReadonlySet<keyof State>, imported: boolean): void {
    if (!ABLATION_KEYS.some((k) => changed.has(k)) || this.H === 0) return;
    this.view.settings(this.ablation);
    // An imported run's interventions are in the worker already; its new run is measured then.
    if (!imported) void this.askNow();
  }
}
