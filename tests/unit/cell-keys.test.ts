// The keyboard's moves over a grid of cells, shared by the coloured tables, the training view's
// heatmaps and the canvas heatmaps (Look inside's circuits): arrows by one cell, Home and End to
// the row's ends, clamped at the edges; any other key moves nothing.
import { expect, test } from 'vitest';
import { cellAfterKey } from '../../web/src/ui/cell-links';

test('arrows move one cell, Home and End to the ends of the row, never past an edge', () => {
  // A 3 x 4 grid, from (1, 2).
  expect(cellAfterKey('ArrowUp', [1, 2], 3, 4)).toEqual([0, 2]);
  expect(cellAfterKey('ArrowDown', [1, 2], 3, 4)).toEqual([2, 2]);
  expect(cellAfterKey('ArrowLeft', [1, 2], 3, 4)).toEqual([1, 1]);
  expect(cellAfterKey('ArrowRight', [1, 2], 3, 4)).toEqual([1, 3]);
  expect(cellAfterKey('Home', [1, 2], 3, 4)).toEqual([1, 0]);
  expect(cellAfterKey('End', [1, 2], 3, 4)).toEqual([1, 3]);
  // At the corners the moves stop.
  expect(cellAfterKey('ArrowUp', [0, 0], 3, 4)).toEqual([0, 0]);
  expect(cellAfterKey('ArrowLeft', [0, 0], 3, 4)).toEqual([0, 0]);
  expect(cellAfterKey('ArrowDown', [2, 3], 3, 4)).toEqual([2, 3]);
  expect(cellAfterKey('ArrowRight', [2, 3], 3, 4)).toEqual([2, 3]);
  expect(cellAfterKey('Enter', [1, 2], 3, 4)).toBeNull();
  expect(cellAfterKey('a', [1, 2], 3, 4)).toBeNull();
});
