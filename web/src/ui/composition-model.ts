// The composition panel's model: the core's per-head scores of the live model (headScores():
// previous-token, prefix-matching, K-composition with its random baseline), when to ask for them
// (a new run, a step, a change of the interventions, about once a second while training plays and
// the panel is on the page; one request in flight, the latest wins), and the pure helpers that turn
// them into the figure's matrices and sentences. No DOM here; composition-panel.ts draws.
import type { Controller } from '../client/controller';
import { num } from '../model/format';
import { argmaxHead, headLabel } from '../model/layers';
import type { HeadScores, HeadScoresReport, Matrix } from '../model/protocol';
import { ABLATION_KEYS } from '../settings/settings';
import { LiveRequest } from './live-request';

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

/** What the view does with the model's news. */
export interface CompositionViewHooks {
  report(r: HeadScoresReport): void;
  problem(message: string | null): void;
  /** Whether the panel is on the page (hidden: no requests while training plays). */
  visible(): boolean;
}

/** The panel's requests; `destroy` stops them. */
export class CompositionModel {
  report: HeadScoresReport | null = null;
  /** What the last request was for: the run, the step and the interventions. */
  #asked = '';
  #lastAsk = -Infinity;
  readonly #live: LiveRequest<HeadScoresReport>;
  readonly #unsubscribe: () => void;

  constructor(
    private readonly ctl: Controller,
    private readonly view: CompositionViewHooks,
    private readonly intervalMs = REMEASURE_MS,
  ) {
    this.#live = new LiveRequest(
      () => {
        this.#lastAsk = performance.now();
        this.#asked = this.#key();
        return ctl.headScores();
      },
      {
        done: (r) => {
          this.report = r;
          view.problem(null);
          view.report(r);
        },
        failed: (e) => view.problem(e instanceof Error ? e.message : String(e)),
      },
    );
    this.#unsubscribe = ctl.subscribe(() => this.update());
    this.update();
  }

  /** The run, step and interventions the scores depend on. */
  #key(): string {
    const st = this.ctl.store.state;
    return `${this.ctl.runId}|${this.ctl.snapshot?.step ?? ''}|${ABLATION_KEYS.map((k) => String(st[k])).join('|')}`;
  }

  /** Asks again when what the scores depend on changed (throttled while playing, none while hidden). */
  update(): void {
    const ctl = this.ctl;
    const ready = !!ctl.snapshot && ctl.status !== 'loading' && ctl.status !== 'crashed';
    if (!ready || !this.view.visible() || this.#key() === this.#asked) return;
    if (ctl.status === 'playing' && performance.now() - this.#lastAsk < this.intervalMs) return;
    void this.#live.request();
  }

  destroy(): void {
    this.#live.stop();
    this.#unsubscribe();
  }
}
