// The "Longer than trained" panel's logic (panels/longer/model.ts): the lengths, the cell sentence for a
// learned table too short, the chart's series, and the preset's sequence of worker requests with
// progress and cancel (against a fake of the controller's comparison API).
import { describe, expect, test } from 'vitest';
import type { TrainerConfigMsg } from '../../web/src/model/protocol';
import type { LengthRow, LengthsReport } from '../../web/src/panels/longer/request';
import {
  COMPARISON_METHODS,
  comparisonConfig,
  explainPositions,
  lengthsFor,
  parseSteps,
  perPositionSeries,
  problemText,
  runComparison,
  type ComparisonApi,
} from '../../web/src/panels/longer/model';

const row = (length: number, acc: number[] | null): LengthRow => ({
  length,
  evaluation: acc ? { loss: 1, accuracy: 0.5, accuracyPerPosition: Float32Array.from(acc) } : null,
  problem: acc ? null : { kind: 'config', key: 'maxSeqLen', message: 'core message' },
});

describe('lengths and sentences', () => {
  test('1x, 2x and 4x the training length, capped at the core limit', () => {
    expect(lengthsFor(16)).toEqual([16, 32, 64]);
    expect(lengthsFor(300)).toEqual([300, 600, 1024]);
  });

  test('a learned table too short: one sentence naming max_seq_len and the missing positions', () => {
    const t = problemText(row(32, null), { seqLen: 16, maxSeqLen: 0 });
    expect(t).toContain('max_seq_len = 16');
    expect(t).toContain('positions 16 to 31');
    expect(problemText(row(64, null), { seqLen: 16, maxSeqLen: 40 })).toContain('max_seq_len = 40');
    expect(problemText(row(16, [1]), { seqLen: 16, maxSeqLen: 0 })).toBe('');
  });

  test('every position method has its own two sentences', () => {
    const seen = new Set<string>();
    for (const p of COMPARISON_METHODS) {
      const s = explainPositions(p, { seqLen: 12, maxSeqLen: 0 });
      expect(s.length).toBeGreaterThanOrEqual(2);
      seen.add(s[0]);
    }
    expect(seen.size).toBe(5);
  });

  test('the chart: x over the longest length, one series per row, null past its length and where NaN', () => {
    const { x, ys } = perPositionSeries([row(2, [NaN, 1]), row(4, [NaN, 0.5, 0.25, 0]), row(8, null)]);
    expect(x).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(ys[0]).toEqual([null, 1, null, null, null, null, null, null]);
    expect(ys[1].slice(0, 5)).toEqual([null, 0.5, 0.25, 0, null]);
    expect(ys[2].every((v) => v === null)).toBe(true);
  });

  test('steps per method: whole numbers from 1 to 20000', () => {
    expect(parseSteps('600')).toBe(600);
    expect(parseSteps(' 5 ')).toBe(5);
    for (const bad of ['', '0', '-3', '2.5', 'abc', '20001', 'Infinity']) expect(parseSteps(bad)).toBeNull();
  });
});

describe('the preset', () => {
  test('five configs: shift at T = 16, learned with a 64-row table, the others without one', () => {
    const configs = COMPARISON_METHODS.map(comparisonConfig);
    expect(configs.map((c) => c.positions)).toEqual(['sinusoidal', 'learned', 'rope', 'alibi', 'none']);
    for (const c of configs) {
      expect(c).toMatchObject({ task: 'shift', seqLen: 16, residual: true, seed: 1 });
      expect(c.maxSeqLen).toBe(c.positions === 'learned' ? 64 : 0);
    }
  });

  /** A fake worker: records the calls; cancel after `cancelAt` step calls. */
  function fake(cancelAt = Infinity) {
    const calls: string[] = [];
    let steps = 0;
    let stepCalls = 0;
    let config: TrainerConfigMsg | null = null;
    const api: ComparisonApi = {
      start: async (c) => {
        config = c;
        steps = 0;
        calls.push(`start ${c.positions}`);
      },
      step: async (n) => {
        stepCalls++;
        steps += n;
        calls.push(`step ${n}`);
        return { step: steps, loss: 1 / steps };
      },
      lengths: async (lengths, batches): Promise<LengthsReport> => {
        calls.push(`lengths ${lengths.join(',')} x${batches}`);
        return { step: steps, config: config!, rows: lengths.map((n) => row(n, [NaN, 1])) };
      },
      end: async () => {
        calls.push('end');
      },
    };
    return { api, calls, cancelled: () => stepCalls >= cancelAt };
  }

  test('each method in turn: start, steps in chunks with progress, lengths 16/32/64, then end', async () => {
    const f = fake();
    const progress: string[] = [];
    const results: string[] = [];
    const out = await runComparison(f.api, 250, (p) => progress.push(`${p.positions} ${p.step}/${p.steps}`), f.cancelled, (r) => results.push(r.positions));
    expect(out.cancelled).toBe(false);
    expect(out.results.map((r) => [r.positions, r.steps])).toEqual(COMPARISON_METHODS.map((p) => [p, 250]));
    expect(results).toEqual([...COMPARISON_METHODS]);
    expect(f.calls.slice(0, 5)).toEqual(['start sinusoidal', 'step 100', 'step 100', 'step 50', 'lengths 16,32,64 x8']);
    expect(f.calls.at(-1)).toBe('end');
    expect(progress.slice(0, 4)).toEqual(['sinusoidal 0/250', 'sinusoidal 100/250', 'sinusoidal 200/250', 'sinusoidal 250/250']);
    expect(out.results[0].loss).toBe(1 / 250);
  });

  test('cancel: stops between chunks, frees the trainer, keeps the results so far', async () => {
    const f = fake(3); // 2 chunks per method at 200 steps: cancelled after the second method's first
    const out = await runComparison(f.api, 200, () => {}, f.cancelled);
    expect(out.cancelled).toBe(true);
    expect(out.results.map((r) => r.positions)).toEqual(['sinusoidal']);
    expect(f.calls.at(-1)).toBe('end');
    expect(f.calls.filter((c) => c.startsWith('start'))).toEqual(['start sinusoidal', 'start learned']);
  });

  test('an error frees the trainer and goes on', async () => {
    const f = fake();
    f.api.step = async () => {
      throw new Error('boom');
    };
    await expect(runComparison(f.api, 10, () => {}, () => false)).rejects.toThrow('boom');
    expect(f.calls.at(-1)).toBe('end');
  });
});
