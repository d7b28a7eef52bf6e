// The "Look inside" panel's logic: when it asks the core (trainer.inspect, in the
// worker) again, which corrupted input the patching uses, how the learner's corrupted input is
// read, the figures' row labels, and the lesson's questions. No DOM here; view.ts draws.
// Every number shown comes from the core.
import type { Controller } from '../../client/controller';
import { headLabel } from '../../model/layers';
import type { Matrix } from '../../model/protocol';
import { quote } from '../../settings/parse';
import type { Question } from '../../ui/check-yourself';
import { PanelModel, type PanelView } from '../../ui/panel-model';
import { inspectRequest, type InspectReport } from './request';

// ---- Reading the learner's corrupted input

/** The learner's corrupted input: T token ids in [0, V), or the one sentence saying why not. */
export function parseCorrupted(text: string, T: number, V: number): { ids: number[] } | { problem: string } {
  const parts = text.trim().split(/[\s,]+/).filter((p) => p !== '');
  if (parts.length === 0) return { problem: `The corrupted input is empty: type ${T} token ids, separated by spaces.` };
  const ids: number[] = [];
  for (const p of parts) {
    const n = Number(p);
    if (!/^\d+$/.test(p) || !Number.isInteger(n)) return { problem: `The corrupted input was not used: ${quote(p)} is not a whole number; type token ids such as 3 17 5.` };
    if (n >= V) return { problem: `The corrupted input was not used: token ${n} is outside the vocabulary (0 to ${V - 1}).` };
    ids.push(n);
  }
  if (ids.length !== T) return { problem: `The corrupted input was not used: it has ${ids.length} tokens, and it needs ${T}, as many as the sample.` };
  return { ids };
}

/** The positions at which corrupted differs from clean. */
export function changedPositions(clean: ArrayLike<number>, corrupted: ArrayLike<number>): number[] {
  const out: number[] = [];
  for (let t = 0; t < Math.min(clean.length, corrupted.length); ++t) if (clean[t] !== corrupted[t]) out.push(t);
  return out;
}

// ---- The figures' labels and matrices

/** The rows of the logit lens and of the residual-stream patching: the stream after the embedding,
 * then after each layer. */
export function streamRowLabels(L: number): string[] {
  return ['embedding', ...Array.from({ length: L }, (_, l) => `after layer ${l + 1}`)];
}

/** The column labels of a token axis: each position's token id. */
export function tokenLabels(ids: ArrayLike<number>): string[] {
  return Array.from(ids, (t) => String(t));
}

/** Every head's label, g = l * H + h. */
export function headLabels(L: number, H: number): string[] {
  return Array.from({ length: L * H }, (_, g) => headLabel(g, H, L));
}

/** The attribution as one table: a row per head, the embedding, each layer's FFN (if any), the
 * biases, then the total; columns are positions. Null when it does not apply. */
export function attributionTable(r: InspectReport): { labels: string[]; matrix: Matrix; parts: number } | null {
  const a = r.inspection.attribution;
  if (!a.applies || !a.heads || !a.embed || !a.bias || !a.total) return null;
  const { nLayers: L, nHeads: H } = r;
  const T = a.total.length;
  const ffnRows = a.ffn?.rows ?? 0;
  const labels = [...headLabels(L, H), 'embedding', ...Array.from({ length: ffnRows }, (_, l) => (L > 1 ? `FFN layer ${l + 1}` : 'FFN')), 'biases', 'total'];
  const data = new Float32Array(labels.length * T);
  data.set(a.heads.data, 0);
  let row = L * H;
  data.set(a.embed, row++ * T);
  if (ffnRows && a.ffn) {
    data.set(a.ffn.data, row * T);
    row += ffnRows;
  }
  data.set(a.bias, row++ * T);
  data.set(a.total, row * T);
  return { labels, matrix: { data, rows: labels.length, cols: T }, parts: labels.length - 1 };
}

/** headsAll as an (L*H, 1) matrix for a one-column table. */
export function column(values: Float32Array): Matrix {
  return { data: values, rows: values.length, cols: 1 };
}

// ---- The lesson

/** The panel's "Check yourself" questions. */
export const INSPECT_QUESTIONS: readonly Question[] = [
  {
    q: 'Open the preset "Find the induction circuit" and train until the loss has dropped (about 1,000 steps). In the direct attribution, which heads push the answer at the second copy of the repeated run?',
    a: 'The layer-2 heads: their rows carry almost all of the total there (one head, or two sharing the job, depending on the run). They are the induction heads: each attends to the token after the earlier occurrence and copies it, and their OV circuits have copying scores near 1.',
  },
  {
    q: 'The previous-token head sits in layer 1, yet its row of the attribution is close to 0. How do you find it, and why does it not show there?',
    a: 'In the attention heatmaps (a line just below the diagonal) or by its previous-token score in the Circuits panel. It writes "which token came before me" into each position, which the induction head reads through its keys, not the LM head: its effect is indirect, and direct attribution only sees direct effects.',
  },
  {
    q: 'In the activation patching, which cells bring the clean answer back (values near 1)?',
    a: 'The residual stream at the changed token up to layer 1, then at the answer position after layer 2: the token stays where it was until the induction head moves it to where it is needed. Among the heads, the layer-2 heads at the answer position.',
  },
  {
    q: 'Switch the previous-token head off in the Ablation panel (heads off), then come back here. Which figures change, and which do not? Then try a layer-2 head instead.',
    a: 'The layer-2 heads\' rows of the attribution and the total collapse, although the head you switched off pushed the answer hardly at all itself: without it the induction heads cannot find the earlier occurrence. The QK and OV circuits stay as they were: they are read from the weights, which switching a head off leaves alone. A layer-2 head switched off instead: its own row becomes 0, and patching it does nothing.',
  },
];

// ---- When the panel asks the core

/** The patching's corrupted input: the task's default, the sample with one token changed, or the
 * learner's own ids. */
export type CorruptionChoice = { kind: 'default' } | { kind: 'change'; position: number } | { kind: 'ids'; ids: number[] };

/** The panel's requests (ui/panel-model.ts): on each new snapshot while training does not play (a
 * step, a pause, an ablation, a new sample or model), when the panel shows again after a change it
 * skipped, and on the learner's choice; never while playing (a pause brings the latest). A new
 * sample or run sets the corrupted input back to the default. */
export class InspectModel extends PanelModel<InspectReport> {
  choice: CorruptionChoice = { kind: 'default' };
  private sampleKey = '';

  constructor(ctl: Controller, view: PanelView<InspectReport>) {
    super(ctl, view, { whilePlaying: 'never' });
    this.start();
  }

  /** Patch against this corrupted input from now on, and measure. */
  choose(choice: CorruptionChoice): void {
    this.choice = choice;
    this.refresh();
  }

  protected ask(): Promise<InspectReport> {
    const c = this.choice;
    return this.ctl.call(inspectRequest, c.kind === 'ids' ? { corrupted: c.ids } : c.kind === 'change' ? { change: c.position } : {});
  }

  /** A new sample or run: the default corrupted input again. */
  protected override follow(): void {
    const s = this.ctl.snapshot;
    if (!s) return;
    const key = `${this.ctl.runId}|${Array.from(s.ids).join(' ')}`;
    if (key === this.sampleKey) return;
    this.sampleKey = key;
    this.choice = { kind: 'default' };
  }
}
