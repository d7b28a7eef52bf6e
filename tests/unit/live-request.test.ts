// The live-request helper: one run in flight, a request meanwhile makes the answer stale and runs
// once more with the latest inputs; stop() silences it.
import { describe, expect, test } from 'vitest';
import { LiveRequest } from '../../web/src/ui/live-request';

/** A run whose answers the test releases by hand; it answers with the input it read. */
function manual() {
  const waiting: ((v: number) => void)[] = [];
  const fails: ((e: Error) => void)[] = [];
  let input = 0;
  const run = () =>
    new Promise<number>((resolve, reject) => {
      const read = input;
      waiting.push(() => resolve(read));
      fails.push(reject);
    });
  return {
    run,
    set: (v: number) => (input = v),
    release: () => waiting.shift()!(0),
    fail: (e: Error) => (waiting.shift(), fails.shift()!(e)),
    pending: () => waiting.length,
  };
}
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('LiveRequest', () => {
  test('one request: one run, its answer handled', async () => {
    const m = manual();
    const got: number[] = [];
    const lr = new LiveRequest(m.run, { done: (a) => got.push(a), failed: () => {} });
    m.set(1);
    const p = lr.request();
    expect(lr.busy).toBe(true);
    m.release();
    await p;
    expect(got).toEqual([1]);
    expect(lr.runs).toBe(1);
    expect(lr.busy).toBe(false);
  });

  test('requests while in flight: the stale answer is dropped, one more run reads the latest input', async () => {
    const m = manual();
    const got: number[] = [];
    const lr = new LiveRequest(m.run, { done: (a) => got.push(a), failed: () => {} });
    m.set(1);
    const first = lr.request();
    for (const v of [2, 3, 4]) {
      m.set(v);
      void lr.request();
    }
    expect(m.pending()).toBe(1);
    m.release(); // answers 1: stale
    await tick();
    expect(got).toEqual([]);
    expect(m.pending()).toBe(1); // exactly one more run, not three
    m.release(); // answers 4
    await first;
    expect(got).toEqual([4]);
    expect(lr.runs).toBe(2);
  });

  test('a failure of the latest run reaches failed; a failure of a stale run is dropped', async () => {
    const m = manual();
    const errors: string[] = [];
    const got: number[] = [];
    const lr = new LiveRequest(m.run, { done: (a) => got.push(a), failed: (e) => errors.push((e as Error).message) });
    const p = lr.request();
    void lr.request();
    m.fail(new Error('stale'));
    await tick();
    m.fail(new Error('latest'));
    await p;
    expect(errors).toEqual(['latest']);
    expect(got).toEqual([]);
    // It keeps working after a failure.
    m.set(7);
    const q = lr.request();
    m.release();
    await q;
    expect(got).toEqual([7]);
  });

  test('stop(): no callback for the run in flight, and no new run', async () => {
    const m = manual();
    const got: number[] = [];
    const lr = new LiveRequest(m.run, { done: (a) => got.push(a), failed: () => got.push(-1) });
    const p = lr.request();
    lr.stop();
    m.release();
    await p;
    await lr.request();
    expect(got).toEqual([]);
    expect(lr.runs).toBe(1);
  });
});
