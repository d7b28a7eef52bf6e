// The "Look inside" panel's pure logic (panels/inspect/model.ts, handler.ts): reading the
// learner's corrupted input (one sentence for each bad input), the figures' row labels, the
// attribution table's rows, and the default corrupted inputs built on the page's side.
import { describe, expect, test } from 'vitest';
import { changeTokenAt, defaultChangePosition } from '../../web/src/panels/inspect/handler';
import type { InspectReport } from '../../web/src/panels/inspect/request';
import { attributionTable, changedPositions, headLabels, parseCorrupted, streamRowLabels, tokenLabels } from '../../web/src/panels/inspect/model';

describe('the corrupted input', () => {
  test('T ids in [0, V), separated by spaces or commas', () => {
    expect(parseCorrupted(' 1 2,3  0 ', 4, 8)).toEqual({ ids: [1, 2, 3, 0] });
  });

  test('another length: one sentence naming both lengths', () => {
    expect(parseCorrupted('1 2 3', 4, 8)).toEqual({ problem: 'The corrupted input was not used: it has 3 tokens, and it needs 4, as many as the sample.' });
  });

  test('a token outside the vocabulary: one sentence naming it and the range', () => {
    expect(parseCorrupted('1 2 8 0', 4, 8)).toEqual({ problem: 'The corrupted input was not used: token 8 is outside the vocabulary (0 to 7).' });
  });

  test('not numbers, negative or fractional ids, and nothing at all', () => {
    expect(parseCorrupted('1 x 2 3', 4, 8)).toEqual({ problem: 'The corrupted input was not used: "x" is not a whole number; type token ids such as 3 17 5.' });
    expect(parseCorrupted('1 -2 2 3', 4, 8)).toMatchObject({ problem: expect.stringContaining('"-2" is not a whole number') });
    expect(parseCorrupted('1 2.5 2 3', 4, 8)).toMatchObject({ problem: expect.stringContaining('"2.5" is not a whole number') });
    expect(parseCorrupted('   ', 4, 8)).toEqual({ problem: 'The corrupted input is empty: type 4 token ids, separated by spaces.' });
  });

  test('a hostile string is quoted and cut, never more than one sentence', () => {
    const r = parseCorrupted(`<img src=x onerror=alert(1)>${'a'.repeat(100)}`, 4, 8);
    expect('problem' in r && r.problem.length < 160).toBe(true);
  });

  test('which positions differ', () => {
    expect(changedPositions([1, 2, 3], [1, 5, 3])).toEqual([1]);
    expect(changedPositions([1, 2, 3], [1, 2, 3])).toEqual([]);
  });
});

describe('the default corrupted input of a task other than induction', () => {
  test('the token the last answer copies is the one changed, to a token not in the sample', () => {
    const ids = Int32Array.from([4, 1, 2, 3]);
    // shift: the answer at t is ids[t - 1]
    const answers = Int32Array.from([-100, 4, 1, 2]);
    expect(defaultChangePosition(ids, answers)).toBe(2);
    expect(Array.from(changeTokenAt(ids, 2, 8))).toEqual([4, 1, 0, 3]);
  });

  test('no earlier copy: the answer position itself; no answer at all: the last position', () => {
    expect(defaultChangePosition(Int32Array.from([1, 2, 3]), Int32Array.from([-100, 7, -100]))).toBe(1);
    expect(defaultChangePosition(Int32Array.from([1, 2, 3]), Int32Array.from([-100, -100, -100]))).toBe(2);
  });

  test('every token present: the next one mod V; a position outside the sample throws', () => {
    expect(Array.from(changeTokenAt(Int32Array.from([0, 1, 2, 3]), 3, 4))).toEqual([0, 1, 2, 0]);
    expect(() => changeTokenAt(Int32Array.from([0, 1]), 2, 4)).toThrow(/outside the sample/);
  });
});

describe('labels and the attribution table', () => {
  test('the stream rows, the token axis and the heads', () => {
    expect(streamRowLabels(2)).toEqual(['embedding', 'after layer 1', 'after layer 2']);
    expect(tokenLabels(Int32Array.from([3, 17]))).toEqual(['3', '17']);
    expect(headLabels(2, 2)).toEqual(['layer 1 · head 1', 'layer 1 · head 2', 'layer 2 · head 1', 'layer 2 · head 2']);
    expect(headLabels(1, 2)).toEqual(['Head 1', 'Head 2']);
  });

  const report = (ffnRows: number): InspectReport => {
    const T = 2;
    const f = (...v: number[]) => Float32Array.from(v);
    return {
      step: 1, task: 'induction', vocabSize: 4, nLayers: 2, nHeads: 1, ids: Int32Array.from([1, 2]), corrupted: null, changed: -1, patchingNote: '',
      inspection: {
        answers: Int32Array.from([2, 1]),
        lens: { applies: false, reason: 'r' },
        attribution: {
          applies: true, reason: '',
          heads: { data: f(1, 2, 3, 4), rows: 2, cols: T },
          embed: f(0.5, 0.5),
          ffn: { data: ffnRows ? f(1, 1, 1, 1) : f(), rows: ffnRows, cols: T },
          bias: f(0.25, -0.5),
          total: ffnRows ? f(6.75, 8) : f(4.75, 6),
        },
        patching: null,
        circuits: [],
      },
    };
  };

  test('heads, embedding, an FFN row per layer, biases, then the total', () => {
    const a = attributionTable(report(2))!;
    expect(a.labels).toEqual(['layer 1 · head 1', 'layer 2 · head 1', 'embedding', 'FFN layer 1', 'FFN layer 2', 'biases', 'total']);
    expect(a.matrix.rows).toBe(7);
    expect(Array.from(a.matrix.data.slice(10, 14))).toEqual([0.25, -0.5, 6.75, 8]);
    expect(a.parts).toBe(6);
  });

  test('without FFNs there is no FFN row; an attribution that does not apply gives no table', () => {
    expect(attributionTable(report(0))!.labels).toEqual(['layer 1 · head 1', 'layer 2 · head 1', 'embedding', 'biases', 'total']);
    const r = report(0);
    r.inspection.attribution = { applies: false, reason: 'no stream' };
    expect(attributionTable(r)).toBeNull();
  });
});
