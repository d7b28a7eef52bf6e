// The timeline panel's model (web/src/ui/timeline-model.ts) under node, with a real worker Session
// (the node build of the core) behind a stand-in controller: what the panel holds is what the
// worker keeps, through thinning and new runs; the selection keeps its step; nothing is fetched
// while hidden; the play-through walks to the end.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Controller, RunStatus } from '../../web/src/client/controller';
import type { AttentionCore, CreateAttentionCore } from '../../web/src/core/attention-core';
import type { Snapshot, Timeline } from '../../web/src/model/protocol';
import { TimelineModel, type TimelineChange } from '../../web/src/ui/timeline-model';
import { Session } from '../../web/src/worker/session';

const build = path.resolve(import.meta.dirname, '../../build/wasm-simd');
let core: AttentionCore;
beforeAll(async () => {
  const create = createRequire(import.meta.url)(path.join(build, 'attention-core-node.cjs')) as CreateAttentionCore;
  core = await create({ wasmBinary: readFileSync(path.join(build, 'attention-core-node.wasm')) });
});

/** The part of the Controller the model uses, driving a Session directly. */
class StandIn {
  runId = 0;
  status: RunStatus = 'paused';
  snapshot: Snapshot | null = null;
  requests = 0;
  readonly session = new Session(core, () => {});
  #listeners = new Set<() => void>();

  subscribe(f: () => void): () => void {
    this.#listeners.add(f);
    return () => this.#listeners.delete(f);
  }
  async timeline(since: number): Promise<Timeline> {
    this.requests++;
    await new Promise((r) => setTimeout(r, 1));
    return structuredClone(this.session.timeline(since));
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
afterEach(() => {
  for (const { model, ctl } of opened) {
    model.destroy();
    ctl.session.dispose();
  }
  opened = [];
});

function open(opts: { visible?: () => boolean; frameMs?: number } = {}) {
  const ctl = new StandIn();
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

/** Polls until cond() holds. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); ++i) await new Promise((r) => setTimeout(r, 1));
  expect(cond()).toBe(true);
}

const heldSteps = (m: TimelineModel) => m.entries.map((e) => e.step);
const workerSteps = (ctl: StandIn) => ctl.session.timeline(Infinity).steps;

describe('TimelineModel', () => {
  test('holds exactly what the worker keeps, through thinning', async () => {
    const { ctl, model } = open();
    // H 16, T 128: 7 kept, so a few dozen steps thin it.
    ctl.configure(128, 16);
    model.start();
    await until(() => model.entries.length === 1);
    for (let i = 0; i < 4; ++i) {
      ctl.step(20);
      await until(() => model.entries.length > 0 && model.entries[model.entries.length - 1].step === ctl.snapshot!.step);
      expect(heldSteps(model)).toEqual(workerSteps(ctl));
      expect(model.sel).toBe(model.entries.length - 1);
    }
    expect(model.info!.every).toBeGreaterThan(10);
    expect(model.info!.bytes).toBe(ctl.session.timeline(Infinity).bytes);
  });

  test('a selection off the end keeps its step, or the last kept one before it once thinned', async () => {
    const { ctl, model } = open();
    ctl.configure(128, 16);
    model.start();
    ctl.step(60);
    await until(() => model.entries.length === 7);
    model.select(3, true); // step 30
    expect(model.selected!.step).toBe(30);
    expect(model.followEnd).toBe(false);
    ctl.step(10); // 8 snapshots: every 20, 30 goes
    await until(() => model.info!.every === 20);
    expect(heldSteps(model)).toEqual([0, 20, 40, 60, 70]);
    expect(model.selected!.step).toBe(20);
    model.select(99, true);
    expect(model.followEnd).toBe(true);
  });

  test('a new run: the old entries go, the new run\'s come', async () => {
    const { ctl, model, changes } = open();
    ctl.configure();
    model.start();
    ctl.step(30);
    await until(() => model.entries.length === 4);
    ctl.configure(6, 2);
    expect(model.entries).toEqual([]);
    expect(changes.at(-1)).toEqual({ meta: true, entries: true });
    await until(() => model.entries.length === 1);
    expect(model.entries[0].H).toBe(2);
  });

  test('hidden: nothing is fetched, and it is marked stale; shown: one fetch catches up', async () => {
    let shown = false;
    const { ctl, model } = open({ visible: () => shown });
    ctl.configure();
    model.start();
    ctl.step(20);
    await new Promise((r) => setTimeout(r, 10));
    expect(ctl.requests).toBe(0);
    expect(model.stale).toBe(true);
    shown = true;
    model.want();
    await until(() => model.entries.length === 3);
    expect(ctl.requests).toBe(1);
  });

  test('play-through walks from the first snapshot to the last, then stops', async () => {
    const { ctl, model } = open();
    ctl.configure();
    model.start();
    ctl.step(40);
    await until(() => model.entries.length === 5);
    model.togglePlayThrough();
    expect(model.playingThrough).toBe(true);
    expect(model.sel).toBe(0);
    await until(() => !model.playingThrough);
    expect(model.sel).toBe(4);
    expect(model.followEnd).toBe(true);
  });
});
