// The lifecycle every panel's model shares (web/src/ui/panel-model.ts), against a fake controller
// under fake timers: it asks when shown and what it depends on changed; a hidden panel asks
// nothing and catches up once shown; while training plays it asks never, or at most once per
// interval (once more when the interval is over); the learner's own change asks at once; one
// request is in flight and an answer asked again meanwhile is dropped; destroy cancels.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { Controller, RunStatus } from '../../web/src/client/controller';
import type { Snapshot } from '../../web/src/model/protocol';
import { PanelModel, type PanelPolicy } from '../../web/src/ui/panel-model';

/** The part of the Controller a panel model reads. */
class FakeController {
  status: RunStatus = 'paused';
  snapshot: Snapshot | null = null;
  #listeners = new Set<() => void>();
  get ready(): boolean {
    return this.snapshot !== null && this.status !== 'loading' && this.status !== 'crashed';
  }
  subscribe(f: () => void): () => void {
    this.#listeners.add(f);
    return () => this.#listeners.delete(f);
  }
  /** A new snapshot (a step, a pause...) with this status. */
  next(status: RunStatus, step: number): void {
    this.status = status;
    this.snapshot = { step } as Snapshot;
    this.emit();
  }
  /** Tells the subscribers to look again, with nothing new. */
  emit(): void {
    for (const f of this.#listeners) f();
  }
}

/** A panel whose request answers the step it was asked at, 10 ms later. */
class StepModel extends PanelModel<number> {
  asked: number[] = [];
  constructor(ctl: FakeController, view: { visible(): boolean; done(n: number): void; failed(why: string): void }, policy: PanelPolicy) {
    super(ctl as unknown as Controller, view, policy);
    this.start();
  }
  protected async ask(): Promise<number> {
    const step = this.ctl.snapshot!.step;
    this.asked.push(step);
    await new Promise((r) => setTimeout(r, 10));
    return step;
  }
}

function open(policy: PanelPolicy, shown = true) {
  const ctl = new FakeController();
  const view = { shown, answers: [] as number[], failures: [] as string[] };
  const model = new StepModel(ctl, { visible: () => view.shown, done: (n) => view.answers.push(n), failed: (w) => view.failures.push(w) }, policy);
  return { ctl, view, model };
}

/** Moves the clock by ms, running every timer and promise due. */
const pass = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('PanelModel', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  test('asks once a run exists and after each change; the same snapshot again asks nothing', async () => {
    const { ctl, view, model } = open({ whilePlaying: 'never' });
    expect(model.asked).toEqual([]);
    ctl.next('paused', 0);
    await pass(20);
    ctl.next('paused', 5);
    await pass(20);
    ctl.emit();
    await pass(20);
    expect([model.asked, view.answers, model.refreshes]).toEqual([[0, 5], [0, 5], 2]);
    model.destroy();
  });

  test('hidden: asks nothing, and catches up once shown, with one request', async () => {
    const { ctl, view, model } = open({ whilePlaying: 'never' }, false);
    ctl.next('paused', 0);
    ctl.next('paused', 1);
    await pass(20);
    expect(model.asked).toEqual([]);
    view.shown = true;
    model.shown();
    model.shown();
    await pass(20);
    expect([model.asked, view.answers]).toEqual([[1], [1]]);
    model.destroy();
  });

  test('never while playing: the pause brings the latest', async () => {
    const { ctl, model } = open({ whilePlaying: 'never' });
    ctl.next('paused', 0);
    await pass(20);
    for (let s = 1; s <= 5; ++s) {
      ctl.next('playing', s * 10);
      await pass(100);
    }
    expect(model.asked).toEqual([0]);
    ctl.next('paused', 55);
    await pass(20);
    expect(model.asked).toEqual([0, 55]);
    model.destroy();
  });

  test('at most once per interval while playing, and once more when the interval is over', async () => {
    const { ctl, view, model } = open({ whilePlaying: 500 });
    ctl.next('playing', 0);
    await pass(20);
    // Snapshots every 50 ms for 400 ms: within the interval, none asks.
    for (let s = 1; s <= 8; ++s) {
      ctl.next('playing', s);
      await pass(50);
    }
    expect(model.asked).toEqual([0]);
    // No snapshot after step 8: the interval's end asks for it all the same.
    await pass(200);
    expect(model.asked).toEqual([0, 8]);
    expect(view.answers).toEqual([0, 8]);
    model.destroy();
  });

  test('the learner\'s own change asks at once, even within the interval', async () => {
    const { ctl, model } = open({ whilePlaying: 500 });
    ctl.next('playing', 0);
    await pass(20);
    ctl.next('playing', 1);
    model.refresh();
    await pass(20);
    expect(model.asked).toEqual([0, 1]);
    model.destroy();
  });

  test('one request in flight: a change meanwhile drops its answer and asks again, once', async () => {
    const { ctl, view, model } = open({ whilePlaying: 'never' });
    ctl.next('paused', 0);
    ctl.next('paused', 1);
    ctl.next('paused', 2);
    await pass(50);
    expect([model.asked, view.answers]).toEqual([[0, 2], [2]]);
    model.destroy();
  });

  test('on demand (auto false): changes ask nothing, refresh() does', async () => {
    const { ctl, model } = open({ whilePlaying: 0, auto: false });
    ctl.next('paused', 0);
    ctl.next('playing', 3);
    await pass(20);
    expect(model.asked).toEqual([]);
    model.refresh();
    await pass(20);
    expect(model.asked).toEqual([3]);
    model.destroy();
  });

  test('destroy: no more requests, timers or answers', async () => {
    const { ctl, view, model } = open({ whilePlaying: 500 });
    ctl.next('playing', 0);
    ctl.next('playing', 1); // in flight, and due again: both dropped
    model.destroy();
    await pass(1000);
    ctl.next('paused', 2);
    await pass(20);
    expect([model.asked, view.answers]).toEqual([[0], []]);
  });

  test('not ready (loading, crashed, no run): asks nothing; a failure says why', async () => {
    const { ctl, view, model } = open({ whilePlaying: 'never' });
    ctl.next('loading', 0);
    ctl.next('crashed', 1);
    await pass(20);
    expect(model.asked).toEqual([]);
    (model as unknown as { ask: () => Promise<number> }).ask = () => Promise.reject(new Error('the core said no'));
    ctl.next('paused', 2);
    await pass(20);
    expect(view.failures).toEqual(['the core said no']);
    model.destroy();
  });
});
