// A core error across two keys (web/src/ui/train-controls.ts): it goes on the control the learner
// changed when the message names it, and it names keys by the controls' labels, not the JS names.
import { describe, expect, test } from 'vitest';
import { controlFor, inLabels } from '../../web/src/ui/train-controls';

const DIVIDES = 'dModel (32) must be divisible by nHeads (3)';

describe('a core error on the right control, in the page words', () => {
  test('heads changed: the heads control; d_model changed or nothing changed: d_model', () => {
    expect(controlFor('dModel', DIVIDES, 'nHeads')?.key).toBe('nHeads');
    expect(controlFor('dModel', DIVIDES, 'dModel')?.key).toBe('dModel');
    expect(controlFor('dModel', DIVIDES, null)?.key).toBe('dModel');
    // A control the message does not name does not take the error.
    expect(controlFor('dModel', DIVIDES, 'lr')?.key).toBe('dModel');
  });

  test('JS names become labels; longer names first (kvHeads is not k + vHeads)', () => {
    expect(inLabels(DIVIDES)).toBe('d_model (32) must be divisible by heads (3)');
    expect(inLabels('nHeads (4) must be divisible by kvHeads (3)')).toBe('heads (4) must be divisible by K/V heads (3)');
    expect(inLabels('a plain sentence')).toBe('a plain sentence');
  });
});
