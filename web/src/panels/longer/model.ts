// The "Longer than trained" panel's logic (length extrapolation): which lengths it
// measures, when it asks the core again (after a pause in training, never while it plays), what
// it says about a position method, and the "Compare the five position methods" preset: five
// Trainers in the worker, one after the other, with progress and cancel. No DOM here; the view
// (view.ts) draws. Every number comes from the core (evaluateAt).
import type { PositionKind } from '../../core/attention-core';
import type { Controller } from '../../client/controller';
import type { TrainerConfigMsg } from '../../model/protocol';
import { DEFAULTS } from '../../settings/settings';
import { trainerConfig } from '../../settings/state';
import { PanelModel, type PanelView } from '../../ui/panel-model';
import { comparisonEndRequest, comparisonLengthsRequest, comparisonStartRequest, comparisonStepRequest, lengthsRequest, type LengthRow, type LengthsReport } from './request';

/** The lengths measured, as multiples of the training length. */
export const LENGTH_FACTORS = [1, 2, 4] as const;
/** Eval batches per length (of the run's batch size). */
export const EVAL_BATCHES = 4;
/** The longest length the page evaluates at, to bound the work in a tab (the core's
 * kMaxEvalLength goes to 4096, tile by tile). */
export const MAX_EVAL_LENGTH = 1024;

/** The lengths measured for training length T: T, 2T and 4T (at most MAX_EVAL_LENGTH). */
export function lengthsFor(T: number): number[] {
  return LENGTH_FACTORS.map((f) => Math.min(MAX_EVAL_LENGTH, f * T));
}

/** The rows of the learned position table (the core's C: maxSeqLen, or seqLen for 0). */
export function tableRows(config: Pick<TrainerConfigMsg, 'maxSeqLen' | 'seqLen'>): number {
  return config.maxSeqLen > 0 ? config.maxSeqLen : config.seqLen;
}

/** The cell text for a length the model cannot take (no rows of the learned table past max_seq_len). */
export function problemText(row: LengthRow, config: Pick<TrainerConfigMsg, 'maxSeqLen' | 'seqLen'>): string {
  if (!row.problem) return '';
  if (row.problem.key === 'maxSeqLen') {
    const C = tableRows(config);
    return `Not measurable: the learned table has max_seq_len = ${C} rows, so positions ${C} to ${row.length - 1} have no vector to add.`;
  }
  return row.problem.message;
}

/** Two or three sentences on what the learner sees for this position method, and why. */
export function explainPositions(positions: PositionKind, config: Pick<TrainerConfigMsg, 'maxSeqLen' | 'seqLen'>): string[] {
  const T = config.seqLen;
  switch (positions) {
    case 'learned':
      return [
        `Learned positions are a table with one trained row per position, max_seq_len = ${tableRows(config)} rows here. ` +
          `Rows past ${T - 1} were never updated by training (no sequence was that long), so they are still random, and past max_seq_len there is no row at all.`,
        'Expect accuracy to hold up to the training length and fall apart after it.',
      ];
    case 'sinusoidal':
      return [
        `Sinusoidal positions give every position a vector, even past ${T - 1}, but the model has only ever seen the first ${T} of them.`,
        'Positions past the training length add vectors the weights were never fitted to, so accuracy usually falls there.',
      ];
    case 'rope':
      return [
        'RoPE rotates queries and keys by their position, so a score depends only on how far apart the two tokens are.',
        'Distances seen in training mean the same thing anywhere in a longer sequence; what can still break are rotation angles (long distances) the model never saw.',
      ];
    case 'alibi':
      return [
        'ALiBi adds a penalty proportional to the distance between query and key, and nothing to the tokens themselves.',
        'The same distance gets the same bias at any position, so what the model learned for short distances carries over to longer sequences.',
      ];
    case 'none':
      return [
        'Without position information the model sees only which tokens came before, not where; the causal mask is its one clue.',
        'Whatever it manages does not depend on the length, so it changes little with longer sequences, but it cannot solve tasks that need exact positions.',
      ];
  }
}

/** The accuracy per position as chart data: x = 0..longest-1, one series per row (null past the
 * row's length, where it has no target, and for a row that could not be measured). */
export function perPositionSeries(rows: LengthRow[]): { x: number[]; ys: (number | null)[][] } {
  const longest = Math.max(0, ...rows.map((r) => r.length));
  const x = Array.from({ length: longest }, (_, i) => i);
  const ys = rows.map((r) =>
    x.map((i) => {
      const v = r.evaluation?.accuracyPerPosition[i];
      return v !== undefined && Number.isFinite(v) ? v : null;
    }),
  );
  return { x, ys };
}

// ---- When the panel asks the core again

/** The panel's requests: on each new snapshot while training does not play (a step, a pause, a
 * reset, a new model), once the panel shows again after a change it skipped; never while playing
 * (a pause brings the latest): ui/panel-model.ts. */
export class LongerModel extends PanelModel<LengthsReport> {
  constructor(ctl: Controller, view: PanelView<LengthsReport>) {
    super(ctl, view, { whilePlaying: 'never' });
    this.start();
  }

  protected ask(): Promise<LengthsReport> {
    const s = this.ctl.snapshot;
    return this.ctl.call(lengthsRequest, { lengths: lengthsFor(s ? s.T : this.ctl.store.state.seqLen), batches: EVAL_BATCHES });
  }
}

// ---- The preset: "Compare the five position methods"

/** The five methods, in the table's order. */
export const COMPARISON_METHODS: readonly PositionKind[] = ['sinusoidal', 'learned', 'rope', 'alibi', 'none'];
/** The preset's training length, lengths and default steps per method (bench/length-extrapolation
 * runs the same configs from the CLI; bench/results/length-extrapolation.md has its results). */
export const COMPARISON_T = 16;
export const COMPARISON_STEPS = 600;
export const COMPARISON_MAX_STEPS = 20000;
/** The learned table's rows: enough for 4 T, so every length can be measured. */
export const COMPARISON_TABLE = 64;
/** Eval batches per length in the preset (as many as attn eval's default). */
export const COMPARISON_BATCHES = 8;
/** Steps per request to the worker: the progress and cancel granularity. */
const CHUNK = 100;

/** The preset's config for one method: the shift task (the answer is the token one position
 * back) at T = 16, one residual attention layer, V 16, D 32, H 4, seed 1. */
export function comparisonConfig(positions: PositionKind): TrainerConfigMsg {
  return trainerConfig({
    ...DEFAULTS,
    task: 'shift',
    vocabSize: 16,
    dModel: 32,
    nHeads: 4,
    seqLen: COMPARISON_T,
    batchSize: 16,
    lr: 0.005,
    seed: 1,
    nLayers: 1,
    residual: true,
    positions,
    maxSeqLen: positions === 'learned' ? COMPARISON_TABLE : 0,
  }) as TrainerConfigMsg;
}

/** The worker's comparison Trainer (a test passes a fake). */
export interface ComparisonApi {
  start(config: TrainerConfigMsg): Promise<void>;
  step(n: number): Promise<{ step: number; loss: number }>;
  lengths(lengths: number[], batches: number): Promise<LengthsReport>;
  end(): Promise<void>;
}

/** The comparison's requests through ctl. */
export function comparisonApi(ctl: Controller): ComparisonApi {
  return {
    start: (config) => ctl.call(comparisonStartRequest, config),
    step: (n) => ctl.call(comparisonStepRequest, { n }),
    lengths: (lengths, batches) => ctl.call(comparisonLengthsRequest, { lengths, batches }),
    end: () => ctl.call(comparisonEndRequest),
  };
}

/** One method's result. */
export interface ComparisonResult {
  positions: PositionKind;
  steps: number;
  /** The last training step's loss. */
  loss: number;
  report: LengthsReport;
}

/** Where the preset is: method index (0-based) of COMPARISON_METHODS.length, steps done of steps. */
export interface ComparisonProgress {
  method: number;
  positions: PositionKind;
  step: number;
  steps: number;
}

/** Steps per method from the panel's field: an integer in [1, COMPARISON_MAX_STEPS], else null. */
export function parseSteps(raw: string): number | null {
  const n = Number(raw.trim());
  return Number.isInteger(n) && n >= 1 && n <= COMPARISON_MAX_STEPS ? n : null;
}

/**
 * Trains each method for `steps` steps in the worker (a fresh Trainer each, one after the other),
 * then measures it at 16, 32 and 64. progress() after each chunk; cancelled() is read between
 * chunks: then the Trainer is freed and the results so far are returned with cancelled true.
 * On an error the Trainer is freed and the error goes on.
 */
export async function runComparison(
  api: ComparisonApi,
  steps: number,
  progress: (p: ComparisonProgress) => void,
  cancelled: () => boolean,
  onResult: (r: ComparisonResult) => void = () => {},
): Promise<{ results: ComparisonResult[]; cancelled: boolean }> {
  const results: ComparisonResult[] = [];
  const lengths = lengthsFor(COMPARISON_T);
  try {
    for (let m = 0; m < COMPARISON_METHODS.length; ++m) {
      const positions = COMPARISON_METHODS[m];
      if (cancelled()) return { results, cancelled: true };
      await api.start(comparisonConfig(positions));
      let done = 0;
      let loss = NaN;
      progress({ method: m, positions, step: 0, steps });
      while (done < steps) {
        if (cancelled()) return { results, cancelled: true };
        const r = await api.step(Math.min(CHUNK, steps - done));
        done = r.step;
        loss = r.loss;
        progress({ method: m, positions, step: done, steps });
      }
      const result = { positions, steps: done, loss, report: await api.lengths(lengths, COMPARISON_BATCHES) };
      results.push(result);
      onResult(result);
    }
    return { results, cancelled: false };
  } finally {
    await api.end().catch(() => {});
  }
}
