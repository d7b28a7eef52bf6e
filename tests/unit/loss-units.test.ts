// One unit per task (web/src/model/format.ts): bits per character on text, nats elsewhere, named
// on the loss chart's axis; the chart's caption and the task text follow the task and the objective.
import { describe, expect, test } from 'vitest';
import { lossUnitOf, perNat } from '../../web/src/model/format';
import { lossAxisLabel, lossChartCaption } from '../../web/src/draw/loss-chart';
import { TASKS, taskText, type TaskName } from '../../web/src/settings/tasks';

describe('loss units', () => {
  test('text is in bits per character, every other task in nats; a bit is ln 2 nats', () => {
    expect(lossUnitOf('text')).toBe('bits/char');
    for (const t of Object.keys(TASKS).filter((t) => t !== 'text')) expect(lossUnitOf(t)).toBe('nats');
    expect(perNat('nats')).toBe(1);
    // ln 35 nats (chance over the default text's 35 characters) is log2 35 bits.
    expect(Math.log(35) * perNat('bits/char')).toBeCloseTo(Math.log2(35), 12);
  });

  test('the axis names the unit and the scale', () => {
    expect(lossAxisLabel('bits/char', true)).toBe('loss (bits/char, log scale)');
    expect(lossAxisLabel('nats', false)).toBe('loss (nats)');
  });
});

describe('captions follow the task and the objective', () => {
  test('the chart: ln V on the synthetic tasks, the unigram line in bits on text, hidden positions under mlm', () => {
    const synthetic = lossChartCaption(false, false);
    expect(synthetic).toMatch(/chance, ln V nats/);
    expect(synthetic).not.toMatch(/unigram/);
    expect(synthetic).toMatch(/step 0/);
    const text = lossChartCaption(true, false);
    expect(text).toMatch(/bits per character, and the dashed one is the unigram entropy/);
    expect(text).not.toMatch(/ln V/);
    expect(lossChartCaption(true, true)).toMatch(/hidden positions only/);
  });

  test('the task text: under mlm no task says a position predicts the next token from the ones before it', () => {
    expect(taskText('text', 'causal')).toBe(TASKS.text);
    expect(TASKS.text).toMatch(/predicts the next character from the ones before it/);
    for (const t of Object.keys(TASKS) as TaskName[]) {
      const m = taskText(t, 'mlm');
      expect(m).not.toMatch(/predicts the next character from the ones before it/);
      expect(m).toMatch(/both sides/);
    }
  });
});
