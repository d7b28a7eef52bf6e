// View 2's mask setting: presets, drawn rows, the old causal link, hostile values, and the cells
// each value gives for T tokens.
import { describe, expect, test } from 'vitest';

import { checkField } from '../../web/src/settings/settings';
import { stateFromHash } from '../../web/src/settings/state';
import { cleanMask, cleanSecondSentence, fullyMaskedRows, maskCells, maskValue, MAX_MASK_TOKENS, presetOf } from '../../web/src/settings/lesson-mask';

const grid = (cells: Uint8Array, T: number) => maskValue(cells, T).split('.');

describe('the mask setting', () => {
  test('presets and drawn rows pass (1 and 0 are drawn one-cell masks); anything else is none', () => {
    for (const v of ['none', 'causal', 'window', 'blocks', '0', '1', '01.00', '011.001.000']) expect(cleanMask(v)).toEqual({ value: v });
    expect(cleanMask('true').value).toBe('none');
    expect(stateFromHash('#lesson-mask=blocks').state.lessonMask).toBe('blocks');
  });

  test('hostile values become none with one sentence that names them', () => {
    expect(checkField('lessonMask', '<img src=x>')).toEqual({
      value: 'none',
      correction: { key: 'lessonMask', message: 'lesson mask: "<img src=x>" is not none, causal, window, blocks or rows of 0 and 1 such as 011.001.000; using none' },
    });
    expect(checkField('lessonMask', '01.0').correction!.message).toBe('lesson mask: "01.0" is not a square of at most 32 rows of 0 and 1; using none');
    const big = Array(MAX_MASK_TOKENS + 1).fill('0'.repeat(MAX_MASK_TOKENS + 1)).join('.');
    expect(checkField('lessonMask', big).value).toBe('none');
    expect(checkField('lessonMask', '1'.repeat(100000)).value).toBe('none');
    const most = Array(MAX_MASK_TOKENS).fill('1'.repeat(MAX_MASK_TOKENS)).join('.');
    expect(checkField('lessonMask', most)).toEqual({ value: most });
  });

  test('the second sentence may be empty; the others are bounded', () => {
    expect(cleanSecondSentence('')).toEqual({ value: '' });
    expect(cleanSecondSentence(' . ')).toEqual({ value: ' . ' });
    expect(cleanSecondSentence('\u0000')).toEqual({ value: '', why: '"\\u0000" has no words; left empty' });
    expect(checkField('lessonHeads', '7').value).toBe(4);
    expect(checkField('lessonWindow', '0').value).toBe(1);
    expect(checkField('stage', '9').value).toBe(9);
  });
});

describe('the cells of a mask', () => {
  test('causal, window, blocks and none, for T = 4', () => {
    expect(grid(maskCells('none', 4, 2, 4).cells, 4)).toEqual(['0000', '0000', '0000', '0000']);
    expect(grid(maskCells('causal', 4, 2, 4).cells, 4)).toEqual(['0111', '0011', '0001', '0000']);
    // k = 2: query i reads keys i-1 and i.
    expect(grid(maskCells('window', 4, 2, 4).cells, 4)).toEqual(['0111', '0011', '1001', '1100']);
    expect(grid(maskCells('window', 4, 1, 4).cells, 4)).toEqual(['0111', '1011', '1101', '1110']);
    // Two sentences of 1 and 3 tokens.
    expect(grid(maskCells('blocks', 4, 2, 1).cells, 4)).toEqual(['0111', '1000', '1000', '1000']);
    expect(grid(maskCells('blocks', 4, 2, 4).cells, 4)).toEqual(['0000', '0000', '0000', '0000']);
  });

  test('a drawn mask reads back as drawn; another size is cut or padded, with a note', () => {
    expect(maskCells('010.000.110', 3, 2, 3)).toEqual({ cells: Uint8Array.from([0, 1, 0, 0, 0, 0, 1, 1, 0]) });
    const cut = maskCells('010.000.110', 2, 2, 2);
    expect(Array.from(cut.cells)).toEqual([0, 1, 0, 0]);
    expect(cut.note).toMatch(/3 rows and the sequence 2 tokens: the extra rows and columns are dropped/);
    const padded = maskCells('11.11', 3, 2, 3);
    expect(grid(padded.cells, 3)).toEqual(['110', '110', '000']);
    expect(padded.note).toMatch(/the new cells are open/);
    expect(presetOf('11.11')).toBe('drawn');
    expect(presetOf('window')).toBe('window');
  });

  test('fully masked rows are found', () => {
    expect(fullyMaskedRows(maskCells('111.010.111', 3, 2, 3).cells, 3)).toEqual([0, 2]);
    expect(fullyMaskedRows(maskCells('causal', 3, 2, 3).cells, 3)).toEqual([]);
  });
});
