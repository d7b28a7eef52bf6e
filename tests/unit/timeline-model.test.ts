// The timeline panel's model (web/src/panels/timeline/model.ts) under node, with a real worker Session
// (the page's core under Node) behind a stand-in controller: what the panel holds is what the
// worker keeps, through thinning and new runs; the selection keeps its step; nothing is fetched
// while hidden; the play-through walks to the end. Under fake timers: each check comes after every
// timer and promise the model started has run (settled()), so nothing waits on the real clock.
import { afterEach, beforeAll, beforeEach, describe, expect, test, vi } from 'vitest';
import type { Controller, RunStatus } from '../../web/src/client/controller';
import type { AttentionCore } from '../../web/src/core/attention-core';
import type { RequestDef, Snapshot } from '../../web/src/model/protocol';
import { HEADS_EVERY, snapshotBytes } from '../../web/src/model/timeline';
import { TimelineModel, type TimelineChange } from '../../web/src/panels/timeline/model';
import { timelineRequest, type Timeline } from '../../web/src/panels/timeline/request';
import { Session } from '../../web/src/worker/session';
import { createCore } from '../js-api/load-core.mjs';

let core: AttentionCore;
beforeAll(async () => {
  core = await createCore('simd');
});

/** The part of the Controller the model uses, driving a Session directly. */
class StandIn {
  runId = 0;
  status: RunStatus = 'paused';
  snapshot: Snapshot | null = null;
  requests = 0;
  readonly session: Session;

  constructor(timelineBytes?: number) {
    this.session = new Session(core, () => {}, { timelineBytes });
  }
  #listeners = new Set<() => void>();

  subscribe(f: () => void): () => void {
    this.#listeners.add(f);
    return () => this.#listeners.delete(f);
  }
  get ready(): boolean {
    return this.snapshot !== null;
  }
  /** A panel's request, answered by the session as the worker answers it (a copy, as postMessage
   * makes one). */
  async call(request: RequestDef<unknown, unknown>, input: unknown): Promise<unknown> {
    this.requests++;
    await new Promise((r) => setTimeout(r, 1));
    return structuredClone(await this.session.call(request.name, input));
  }
  configure(seqLen = 12, nHeads = 4): void {
    this.snapshot = this.session.configure({ ...core.defaultConfig(), seqLen, nHeads, dModel: 16, batchSize: 2 }, Array.from({ length: seqLen }, (_, i) => i % 64));
    this.runId++;
    this.#emit();
  }
  step(n: number): void {
    this.snapshot = this.session.step(n);
    this.#emit();
  }
  #emit(): void {
    for (const f of this.#listeners) f();
  }
}

let opened: { model: TimelineModel; ctl: StandIn }[] = [];
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
  for (const { model, ctl } of opened) {
    model.destroy();
    ctl.session.dispose();
  }
  opened = [];
});

function open(opts: { visible?: () => boolean; frameMs?: number; timelineBytes?: number } = {}) {
  const ctl = new StandIn(opts.timelineBytes);
  const changes: TimelineChange[] = [];
  const model = new TimelineModel(ctl as unknown as Controller, {
    interval: 500,
    frameMs: opts.frameMs ?? 1,
    visible: opts.visible ?? (() => true),
    onChange: (c) => changes.push(c),
  });
  opened.push({ model, ctl });
  return { ctl, model, changes };
}

/** Runs every timer (and the promises they settle) until none is left. */
const settled = () => vi.runAllTimersAsync();

const heldSteps = (m: TimelineModel) => m.entries.map((e) => e.step);
/** A budget of 7.5 snapshots of a 2-head, 12-token model: 7 kept, so a few dozen steps thin it
 * (as the page's budget does for the largest model, whose snapshots cost seconds to take here). */
const SMALL = { seqLen: 12, nHeads: 2, timelineBytes: 7.5 * snapshotBytes(2, 12) };
/** What the worker keeps now (no entries: only the steps, the policy and the bytes). */
const kept = (ctl: StandIn) => ctl.session.call(timelineRequest.name, { since: Infinity }) as Timeline;
const workerSteps = (ctl: StandIn) => kept(ctl).steps;

describe('TimelineModel', () => {
  test('holds exactly what the worker keeps, through thinning', async () => {
    const { ctl, model } = open({ timelineBytes: SMALL.timelineBytes });
    ctl.configure(SMALL.seqLen, SMALL.nHeads);
    model.start();
    await settled();
    expect(model.entries.length).toBe(1);
    for (let i = 0; i < 4; ++i) {
      ctl.step(20);
      await settled();
      expect(model.entries.at(-1)?.step).toBe(ctl.snapshot!.step);
      expect(heldSteps(model)).toEqual(workerSteps(ctl));
      expect(model.sel).toBe(model.entries.length - 1);
    }
    expect(model.info!.every).toBeGreaterThan(10);
    expect(model.info!.bytes).toBe(kept(ctl).bytes);
  });

  test('a selection off the end keeps its step, or the last kept one before it once thinned', async () => {
    const { ctl, model } = open({ timelineBytes: SMALL.timelineBytes });
    ctl.configure(SMALL.seqLen, SMALL.nHeads);
    model.start();
    ctl.step(60);
    await settled();
    expect(model.entries.length).toBe(7);
    model.select(3, true); // step 30
    expect(model.selected!.step).toBe(30);
    expect(model.followEnd).toBe(false);
    ctl.step(10); // 8 snapshots: every 20, 30 goes
    await settled();
    expect(model.info!.every).toBe(20);
    expect(heldSteps(model)).toEqual([0, 20, 40, 60, 70]);
    expect(model.selected!.step).toBe(20);
    model.select(99, true);
    expect(model.followEnd).toBe(true);
  });

  test('the heads\' statistics of a selected entry that did not measure them come from the latest one before it that did', async () => {
    const { ctl, model } = open();
    ctl.configure(SMALL.seqLen, SMALL.nHeads);
    model.start();
    // Snapshots every 10 steps; the heads measured at step 0 and every HEADS_EVERY snapshots.
    const last = 10 * HEADS_EVERY;
    ctl.step(last + 10);
    await settled();
    const grid = Array.from({ length: HEADS_EVERY + 2 }, (_, i) => 10 * i);
    expect(heldSteps(model)).toEqual(grid);
    expect(model.entries.map((e) => e.entropy.length)).toEqual(grid.map((s) => (s % last === 0 ? 2 : 0)));
    expect(grid.map((_, i) => (model.select(i, true), model.selectedHeads!.step))).toEqual(grid.map((s) => (s < last ? 0 : last)));
    expect(model.selectedHeads!.previousToken.length).toBe(2);
  });

  test('a new run: the old entries go, the new run\'s come', async () => {
    const { ctl, model, changes } = open();
    ctl.configure();
    model.start();
    ctl.step(30);
    await settled();
    expect(model.entries.length).toBe(4);
    ctl.configure(6, 2);
    expect(model.entries).toEqual([]);
    expect(changes.at(-1)).toEqual({ meta: true, entries: true });
    await settled();
    expect(model.entries.length).toBe(1);
    expect(model.entries[0].H).toBe(2);
  });

  test('hidden: nothing is fetched, and it is marked stale; shown: one fetch catches up', async () => {
    let shown = false;
    const { ctl, model } = open({ visible: () => shown });
    ctl.configure();
    model.start();
    ctl.step(20);
    await settled();
    expect(ctl.requests).toBe(0);
    expect(model.stale).toBe(true);
    shown = true;
    model.want();
    await settled();
    expect(model.entries.length).toBe(3);
    expect(ctl.requests).toBe(1);
  });

  test('play-through walks from the first snapshot to the last, then stops', async () => {
    const { ctl, model } = open();
    ctl.configure();
    model.start();
    ctl.step(40);
    await settled();
    expect(model.entries.length).toBe(5);
    model.togglePlayThrough();
    expect(model.playingThrough).toBe(true);
    expect(model.sel).toBe(0);
    // One snapshot per frame (frameMs 1).
    await vi.advanceTimersByTimeAsync(1);
    expect(model.sel).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(model.sel).toBe(2);
    await settled();
    expect(model.playingThrough).toBe(false);
    expect(model.sel).toBe(4);
    expect(model.followEnd).toBe(true);
  });
});
