// The composition panel's model: the core's per-head scores of the live model (headScores():
// previous-token, prefix-matching, K-composition with its random baseline), when to ask for them
// (a new run, a step, a change of the interventions, about once a second while training plays and
// the panel is on the page: ui/panel-model.ts), and the pure helpers that turn them into the
// figure's matrices and sentences. No DOM here; view.ts draws.
import type { HeadScores } from '../../core/attention-core';
import type { Controller } from '../../client/controller';
import { num } from '../../model/format';
import { argmaxHead, headLabel } from '../../model/layers';
import type { Matrix } from '../../model/protocol';
import { ABLATION_KEYS } from '../../settings/settings';
import { PanelModel, type PanelView } from '../../ui/panel-model';
import { headScoresRequest, type HeadScoresReport } from './request';

/** How often the panel asks again while training plays (ms). */
const REMEASURE_MS = 1000;

/** The K-composition scores from layer l's heads (rows) to layer l + 1's heads (columns): (H,H). */
export function compositionMatrix(s: HeadScores, layer: number): Matrix {
  const H = s.nHeads;
  if (!(layer >= 0 && layer < s.nLayers - 1)) throw new Error(`layer ${layer} has no next layer (L=${s.nLayers})`);
  if (s.composition.length !== (s.nLayers - 1) * H * H) throw new Error(`composition: ${s.composition.length} values for L=${s.nLayers}, H=${H}`);
  return { data: s.composition.slice(layer * H * H, (layer + 1) * H * H), rows: H, cols: H };
}

/** The largest K-composition score between layer l and l + 1: the writer and reader (global
 * indices) and the score. */
export function strongestPair(s: HeadScores, layer: number): { from: number; to: number; score: number } {
  const m = compositionMatrix(s, layer);
  let k = 0;
  for (let i = 1; i < m.data.length; ++i) if (m.data[i] > m.data[k]) k = i;
  const H = s.nHeads;
  return { from: layer * H + Math.floor(k / H), to: (layer + 1) * H + (k % H), score: m.data[k] };
}

/** The sentences under the figure: which head looks one token back, which matches prefixes, and
 * which pair composes most, against the random baseline. */
export function explainScores(s: HeadScores): string[] {
  const { nLayers: L, nHeads: H } = s;
  const name = (g: number) => headLabel(g, H, L);
  if (!Number.isFinite(s.compositionBaseline) && s.previousToken.every((v) => !Number.isFinite(v))) {
    return ['This model cannot be scored: its sequences are too short to hold a run of tokens twice. Raise seq_len.'];
  }
  const out: string[] = [];
  const prev = argmaxHead(s.previousToken, H);
  const ind = argmaxHead(s.prefixMatching, H, L > 1 ? 1 : 0);
  if (prev >= 0) out.push(`Most previous-token-like: ${name(prev)} (score ${num(s.previousToken[prev])}: the mean weight its queries put one position back).`);
  if (ind >= 0) out.push(`Most prefix-matching${L > 1 ? ' in a later layer' : ''}: ${name(ind)} (score ${num(s.prefixMatching[ind])}: at a repeated token, the mean weight on the token after its first occurrence).`);
  if (L < 2) {
    out.push('With one layer there is nothing to compose: no head can read what another head wrote. Set layers to 2 with the residual stream (the preset does) to see the composition scores.');
    return out;
  }
  for (let l = 0; l < L - 1; ++l) {
    const p = strongestPair(s, l);
    const ratio = s.compositionBaseline > 0 ? p.score / s.compositionBaseline : NaN;
    out.push(
      `Strongest composition from layer ${l + 1} to layer ${l + 2}: ${name(p.from)} → ${name(p.to)}, ${num(p.score)}` +
        (Number.isFinite(ratio) ? `, ${num(ratio, 1)}× the random baseline ${num(s.compositionBaseline)}.` : '.'),
    );
  }
  return out;
}

/** The panel's requests; `destroy` stops them. */
export class CompositionModel extends PanelModel<HeadScoresReport> {
  report: HeadScoresReport | null = null;

  constructor(ctl: Controller, view: PanelView<HeadScoresReport>, intervalMs = REMEASURE_MS) {
    super(ctl, view, { whilePlaying: intervalMs });
    this.start();
  }

  protected ask(): Promise<HeadScoresReport> {
    return this.ctl.call(headScoresRequest);
  }

  /** The run, step and interventions the scores depend on (not the sample: the core scores the
   * heads on fixed induction sequences). */
  protected override dependsOn(): string {
    const st = this.ctl.store.state;
    return `${this.ctl.runId}|${this.ctl.snapshot?.step ?? ''}|${ABLATION_KEYS.map((k) => String(st[k])).join('|')}`;
  }

  protected override answered(r: HeadScoresReport): boolean {
    this.report = r;
    return true;
  }
}
