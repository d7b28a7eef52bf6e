// The element's event logic, pure (web/src/element/step-events.ts, solved.ts): the `step` events'
// throttle under fake timers (the clock only moves when the test moves it), and when `solved` fires.
import { afterEach, beforeEach, describe, expect, it, test, vi } from 'vitest';
import { SolvedWatch, type SolvedSnapshot } from '../../web/src/element/solved';
import { converged, CONVERGED_PATIENCE, DoneWatch, TASK_SOLVED_AT } from '../../web/src/model/done';
import { TASKS } from '../../web/src/settings/tasks';
import { STEP_EVENT_MS, StepEvents } from '../../web/src/element/step-events';

describe('step events', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A throttle whose events are collected as the steps they announce. */
  const open = () => {
    const sent: number[] = [];
    const events = new StepEvents<{ step: number }>((s) => sent.push(s.step));
    return { events, sent, push: (step: number) => events.push({ step }) };
  };

  test('the starting point is no event; the first step is announced at once', () => {
    const { events, sent, push } = open();
    events.start({ step: 0 });
    push(0);
    expect(sent).toEqual([]);
    push(5);
    expect(sent).toEqual([5]);
  });

  test('at most one event per interval, each for the latest step, and the last is never dropped', () => {
    const { sent, push } = open();
    push(1);
    for (const step of [2, 3, 4]) push(step);
    expect(sent).toEqual([1]);
    vi.advanceTimersByTime(STEP_EVENT_MS - 1);
    expect(sent).toEqual([1]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual([1, 4]);
    // A step that comes after a quiet interval goes at once; a burst after it waits again.
    vi.advanceTimersByTime(5 * STEP_EVENT_MS);
    push(9);
    push(10);
    expect(sent).toEqual([1, 4, 9]);
    expect(vi.getTimerCount()).toBe(1);
    vi.runAllTimers();
    expect(sent).toEqual([1, 4, 9, 10]);
  });

  test('the same step is never announced twice', () => {
    const { sent, push } = open();
    push(3);
    push(3);
    vi.runAllTimers();
    expect(sent).toEqual([3]);
    // A pending event whose step was already announced is dropped when it comes due.
    push(4);
    push(3);
    vi.advanceTimersByTime(STEP_EVENT_MS);
    expect(sent).toEqual([3]);
  });

  test('stop drops the pending event and forgets the run', () => {
    const { events, sent, push } = open();
    push(1);
    push(2);
    events.stop();
    expect(vi.getTimerCount()).toBe(0);
    vi.runAllTimers();
    expect(sent).toEqual([1]);
    // Mounted again: a new starting point, then its steps (the interval still holds).
    events.start({ step: 0 });
    push(1);
    vi.runAllTimers();
    expect(sent).toEqual([1, 1]);
  });
});

describe('solved', () => {
  const snap = (step: number, loss: number, lossAtInit = false): SolvedSnapshot => ({ step, loss, lossAtInit });

  test('fires once per run, the first time the loss is below the threshold, never at step 0 or at init, never for NaN', () => {
    const w = new SolvedWatch(0.5);
    expect(w.observe(snap(0, 0.1, true))).toBeNull();
    expect(w.observe(snap(0, 0.1))).toBeNull();
    expect(w.observe(snap(3, NaN))).toBeNull();
    expect(w.observe(snap(10, 0.5))).toBeNull();
    expect(w.observe(snap(20, 0.4))).toEqual({ step: 20, loss: 0.4, threshold: 0.5 });
    expect(w.observe(snap(30, 0.3))).toBeNull();
  });

  test('from the history: the first step below the threshold, with its loss, though the snapshot\'s own loss is above', () => {
    const w = new SolvedWatch(0.5);
    // history[i] is step 1 + 2i: steps 1, 3, 5, 7; step 5 is the first under 0.5.
    expect(w.observe({ ...snap(8, 0.7), history: [2, 0.9, 0.4, 0.6], historyStride: 2 })).toEqual({ step: 5, loss: 0.4, threshold: 0.5 });
    expect(w.observe({ ...snap(9, 0.3), history: [2, 0.9, 0.4, 0.6, 0.3], historyStride: 2 })).toBeNull(); // once per run
    // Never from the history of a loss at init, nor under a threshold of 0 (solved-at="0": never).
    expect(new SolvedWatch(0.5).observe({ ...snap(0, 2, true), history: [0.1], historyStride: 1 })).toBeNull();
    expect(new SolvedWatch(0).observe({ ...snap(8, 0.7), history: [0, 0.001], historyStride: 1 })).toBeNull();
  });

  test('a step back is a new run (configure, reset): it may fire again', () => {
    const w = new SolvedWatch(0.5);
    expect(w.observe(snap(20, 0.4))).not.toBeNull();
    expect(w.observe(snap(0, 2, true))).toBeNull();
    expect(w.observe(snap(15, 0.45))).toEqual({ step: 15, loss: 0.45, threshold: 0.5 });
  });

  test('a new threshold is a new goal: checked against the latest snapshot at once', () => {
    const w = new SolvedWatch(0.1);
    expect(w.setThreshold(0.2)).toBeNull(); // no snapshot yet
    expect(w.observe(snap(20, 0.3))).toBeNull();
    expect(w.setThreshold(0.35)).toEqual({ step: 20, loss: 0.3, threshold: 0.35 });
    expect(w.observe(snap(25, 0.25))).toBeNull();
    expect(w.setThreshold(0.3)).toEqual({ step: 25, loss: 0.25, threshold: 0.3 });
    // Forgotten (the element left the page): nothing to check a new threshold against.
    w.forget();
    expect(w.setThreshold(0.5)).toBeNull();
  });
});

describe('DoneWatch: the page\'s run is done when solved or converged, once per run', () => {
  const snap = (step: number, loss: number) => ({ step, loss, lossAtInit: step === 0 });
  it('solved at the first step under the task\'s threshold; the same after; a new run starts over', () => {
    const w = new DoneWatch();
    expect(w.observe(snap(0, 0.01), 0.1)).toBeNull(); // the loss at init is no achievement
    expect(w.observe(snap(100, 0.5), 0.1)).toBeNull();
    expect(w.observe(snap(180, 0.09), 0.1)).toEqual({ kind: 'solved', step: 180 });
    expect(w.observe(snap(400, 0.7), 0.1)).toEqual({ kind: 'solved', step: 180 }); // a later spike does not undo it
    expect(w.observe(snap(0, 3), 0.1)).toBeNull(); // reset: a new run
    expect(w.observe(snap(50, Number.NaN), 0.1)).toBeNull();
  });
  it('a task without a threshold is never solved; text converges when validation stops improving', () => {
    const w = new DoneWatch();
    expect(w.observe(snap(500, 0.001), null)).toBeNull();
    // Best 2.0 before the last 5; none of those is below 2.0 * 0.99 = 1.98.
    expect(converged([3, 2.5, 2.0, 1.99, 1.995, 2.01, 1.985, 2.0])).toBe(true);
    expect(converged([3, 2.5, 2.0, 1.99, 1.995, 2.01, 1.97, 2.0])).toBe(false);
    expect(converged([3, 2, 2, 2, 2])).toBe(false); // too few measurements
    expect(w.observe(snap(900, 1.2), null, [3, 2.5, 2.0, 1.99, 1.995, 2.01, 1.985, 2.0])).toEqual({ kind: 'converged', step: 900 });
    expect(CONVERGED_PATIENCE).toBe(5);
    // From the history: losses[i] is step 1 + 2i; the first below 0.1 is index 2, step 5.
    expect(new DoneWatch().observe(snap(9, 0.5), 0.1, undefined, { losses: [1, 0.5, 0.05, 0.5], stride: 2 })).toEqual({ kind: 'solved', step: 5 });
  });
  it('fresh at exactly one snapshot per run: the one where the run pauses itself', () => {
    const w = new DoneWatch();
    const fresh = (step: number, loss: number) => (w.observe(snap(step, loss), 0.1), w.fresh);
    expect([fresh(0, 3), fresh(100, 0.5), fresh(180, 0.09), fresh(180, 0.09), fresh(200, 0.05), fresh(400, 0.7)]).toEqual([false, false, true, false, false, false]);
    // Reset: a new run, done (and fresh) once more.
    expect([fresh(0, 3), fresh(150, 0.08), fresh(160, 0.07)]).toEqual([false, true, false]);
  });
  it('every task has its own threshold or none', () => {
    for (const t of Object.keys(TASKS)) expect(t in TASK_SOLVED_AT, t).toBe(true);
    expect(TASK_SOLVED_AT.future).toBeNull();
  });
});
