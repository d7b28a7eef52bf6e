// The worker's handler table and Session against the real core (the page's SIMD module under
// Node, tests/js-api/load-core.mjs), with no Worker: each request goes
// through handle(), and each message leaves through a post that transfers as postMessage does
// (structuredClone with the transfer list), so an array the session kept and also sent would be
// detached and break the next request. The play loop runs one turn when the test says so, on a
// clock the test moves (turns()), so "nothing more happened" is a fact after the queued turns
// ran, never a guess after a sleep.
// Over 300 lines on purpose: one describe per group of requests, sharing one harness (open()) and
// one instance of the core; splitting it would only copy the harness.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { AttentionCore } from '../../web/src/core/attention-core';
import type { Ablation, ErrorReply, ReplyFor, RequestDef, SampleSpec, Snapshot, TrainerConfigMsg, WorkerMessage } from '../../web/src/model/protocol';
import { noAblation } from '../../web/src/model/protocol';
import { follow, hasHeadStats, HEADS_EVERY, snapshotBytes, type Stepped } from '../../web/src/model/timeline';
import { handle, type SessionRequest } from '../../web/src/worker/handlers';
import type { Post } from '../../web/src/worker/post';
import { Session } from '../../web/src/worker/session';
import { ablateRequest } from '../../web/src/panels/ablation/request';
import { rowBackwardRequest } from '../../web/src/panels/backward/request';
import { headScoresRequest } from '../../web/src/panels/circuits/request';
import { exportWeightsRequest } from '../../web/src/panels/export/request';
import { fillRequest } from '../../web/src/panels/fill/request';
import { inspectRequest } from '../../web/src/panels/inspect/request';
import { scalingDemoRequest, selfAttentionRequest, softmaxStepsRequest } from '../../web/src/views/lesson/request';
import { comparisonEndRequest, comparisonLengthsRequest, comparisonStartRequest, comparisonStepRequest, lengthsRequest } from '../../web/src/panels/longer/request';
import { predictionsRequest } from '../../web/src/panels/predictions/request';
import { tiledAttentionRequest, transformerBlockRequest } from '../../web/src/views/block/request';
import { acceptanceRequest, draftMakeRequest, exactnessRequest, speculativeGenerateRequest } from '../../web/src/panels/speculative/request';
import { reach, reachBound } from '../../web/src/panels/receptive/model';
import { receptiveRequest } from '../../web/src/panels/receptive/request';
import { explainMissingReference, PYTORCH_REFERENCE } from '../../web/src/panels/selftest/handler';
import { selfTestRequest } from '../../web/src/panels/selftest/request';
import { timelineRequest } from '../../web/src/panels/timeline/request';
import { createCore } from '../js-api/load-core.mjs';

const root = path.resolve(import.meta.dirname, '../..');
const REFERENCE = path.join(root, 'tests/reference/data');

let core: AttentionCore;
beforeAll(async () => {
  core = await createCore('simd');
});

/** The default config (vocab 64, d_model 32, 4 heads, T 12, batch 16, repeat) with changes. */
const config = (over: Partial<TrainerConfigMsg> = {}): TrainerConfigMsg => ({ ...core.defaultConfig(), ...over });
const SAMPLE = [3, 14, 15, 9, 2, 6, 5, 3, 5, 8, 9, 7];

/** The reference files by URL: here, paths (the worker fetches them). */
const files = { weights: 'short.weights.safetensors', input: 'short.input.safetensors', expected: 'short.expected.safetensors' };
const readReference = async (name: string) => new Uint8Array(readFileSync(path.join(REFERENCE, name)));

type Body<K extends SessionRequest['type']> = Omit<Extract<SessionRequest, { type: K }>, 'id'>;

/** A session, what it posted (as the page receives it), request helpers, and its play loop. */
function open(fetchBytes = readReference, options: { timelineBytes?: number } = {}) {
  const posted: WorkerMessage[] = [];
  /** The play loop's queued turns, and the session's clock (ms), which only turns() moves. */
  const queued: (() => void)[] = [];
  let clock = 1000;
  /** Every array buffer that went out in a transfer list. */
  const transferred: ArrayBuffer[] = [];
  const post: Post = (msg, transfer) => {
    transferred.push(...(transfer as ArrayBuffer[]));
    posted.push(structuredClone(msg, { transfer }));
  };
  const session = new Session(core, post, { fetchBytes, defer: (f) => queued.push(f), now: () => clock, ...options });
  let nextId = 1;
  /** Sends a request and returns its reply (or error reply). */
  async function ask<K extends SessionRequest['type']>(type: K, body: Omit<Body<K>, 'type'>): Promise<ReplyFor[K] | ErrorReply> {
    const id = nextId++;
    await handle(session, post, { ...body, type, id } as SessionRequest);
    const reply = posted.find((m) => 'replyTo' in m && m.replyTo === id);
    if (!reply) throw new Error(`no reply to ${type} #${id}`);
    return reply as ReplyFor[K] | ErrorReply;
  }
  /** The reply, which must not be an error. */
  async function ok<K extends SessionRequest['type']>(type: K, body: Omit<Body<K>, 'type'>): Promise<ReplyFor[K]> {
    const r = await ask(type, body);
    if (r.type === 'error') throw new Error(`${type}: ${r.kind} error: ${r.message}`);
    return r as ReplyFor[K];
  }
  /** The reply, which must be an error. */
  async function fails<K extends SessionRequest['type']>(type: K, body: Omit<Body<K>, 'type'>): Promise<ErrorReply> {
    const r = await ask(type, body);
    if (r.type !== 'error') throw new Error(`${type}: expected an error, got ${r.type}`);
    return r;
  }
  /** A panel's request (a `call`) and its output, which must not be an error. */
  async function call<In, Out>(request: RequestDef<In, Out>, ...input: [In] extends [void] ? [] : [In]): Promise<Out> {
    return (await ok('call', { request: request.name, input: input[0] })).output as Out;
  }
  /** A panel's request that must fail: its error reply. */
  function callFails<In, Out>(request: RequestDef<In, Out>, ...input: [In] extends [void] ? [] : [In]): Promise<ErrorReply> {
    return fails('call', { request: request.name, input: input[0] });
  }
  const events = () => posted.filter((m) => !('replyTo' in m));
  /** Runs the play loop's turns, each 20 ms after the last, while one is queued (at most max);
   * returns how many ran. A loop that stopped queues none. */
  function turns(max: number): number {
    let n = 0;
    for (; n < max && queued.length > 0; ++n) {
      clock += 20;
      queued.shift()!();
    }
    return n;
  }
  sessions.push(session);
  return { session, posted, transferred, ask, ok, fails, call, callFails, events, turns, queued };
}
const sessions: Session[] = [];
afterEach(() => {
  for (const s of sessions.splice(0)) s.dispose();
});

const configure = (c: TrainerConfigMsg = config(), sample: SampleSpec = SAMPLE, ablation?: Ablation) => ({ config: c, sample, ablation });

describe('configure, step, reset, sample', () => {
  test('configure: step 0, the loss at init about ln(vocab), the sample attention (H,T,T)', async () => {
    const s = open();
    const { snapshot: snap } = await s.ok('configure', configure());
    expect(snap.step).toBe(0);
    expect(snap.lossAtInit).toBe(true);
    expect(snap.loss).toBe(snap.initLoss);
    expect(Math.abs(snap.initLoss - Math.log(64))).toBeLessThan(0.5);
    expect(snap.history.length).toBe(0);
    expect([snap.H, snap.T, snap.weights.length]).toEqual([4, 12, 4 * 12 * 12]);
    expect(Array.from(snap.ids)).toEqual(SAMPLE);
    expect(snap.mask).toBe('causal');
    expect(snap.stepsPerSec).toBe(0);
  });

  test('step: n steps, the loss history, the timeline on its grid; n out of [1, 1000] is an input error', async () => {
    const s = open();
    await s.ok('configure', configure());
    const { snapshot: snap } = await s.ok('step', { n: 25 });
    expect(snap.step).toBe(25);
    expect(snap.lossAtInit).toBe(false);
    expect(snap.history.length).toBe(25);
    expect(snap.loss).toBe(snap.history[24]);
    expect((await s.call(timelineRequest, { since: -1 })).steps).toEqual([0, 10, 20]);
    for (const n of [0, 1001, NaN]) {
      const e = await s.fails('step', { n });
      expect(e.kind).toBe('input');
      expect(e.message).toMatch(/step count/);
    }
    expect((await s.ok('pause', {})).snapshot.step).toBe(25);
  });

  test('reset: step 0 again, the same loss at init (same seed), the timeline starts over', async () => {
    const s = open();
    const first = (await s.ok('configure', configure())).snapshot;
    await s.ok('step', { n: 30 });
    const again = (await s.ok('reset', {})).snapshot;
    expect(again.step).toBe(0);
    expect(again.initLoss).toBe(first.initLoss);
    expect(again.weights).toEqual(first.weights);
    expect((await s.call(timelineRequest, { since: -1 })).steps).toEqual([0]);
  });

  test('sample: the heatmaps follow it; one that does not fit leaves the old one', async () => {
    const s = open();
    await s.ok('configure', configure());
    const snap = (await s.ok('sample', { sample: [1, 2, 3] })).snapshot;
    expect(Array.from(snap.ids)).toEqual([1, 2, 3]);
    expect([snap.T, snap.weights.length]).toEqual([3, 4 * 9]);
    const e = await s.fails('sample', { sample: [1, 999] });
    expect(e.kind).toBe('input');
    expect(Array.from((await s.ok('pause', {})).snapshot.ids)).toEqual([1, 2, 3]);
  });

  test('every typed array of a reply is transferred, and the session keeps working after', async () => {
    const s = open();
    await s.ok('configure', configure());
    await s.ok('step', { n: 20 });
    const n = s.transferred.length;
    for (let i = 0; i < 3; ++i) {
      await s.call(timelineRequest, { since: -1 });
      await s.call(ablateRequest, noAblation(4));
      await s.call(exportWeightsRequest);
      await s.call(rowBackwardRequest, { head: 0, query: 3 });
    }
    expect(s.transferred.length).toBeGreaterThan(n);
    // Detached: the page owns them now.
    expect(s.transferred.every((b) => b.byteLength === 0)).toBe(true);
    // What the session holds was never sent: its timeline still reads.
    const tl = await s.call(timelineRequest, { since: -1 });
    expect(tl.entries.every((e) => e.weights.length === 4 * 144)).toBe(true);
  });
});

describe('play and pause', () => {
  test('play: playing, then progress events while it trains; pause: paused, and no more events', async () => {
    const s = open();
    await s.ok('configure', configure());
    expect((await s.ok('play', { intervalMs: 16 })).type).toBe('playing');
    expect(s.session.playing).toBe(true);
    // One chunk per turn, 20 ms apart: each one is past the 16 ms interval, so each posts progress.
    expect(s.turns(4)).toBe(4);
    const progress = s.events().filter((e) => e.type === 'progress') as { snapshot: Snapshot }[];
    const steps = progress.map((e) => e.snapshot.step);
    expect(steps).toHaveLength(4);
    expect(steps.every((step, i) => step > (i > 0 ? steps[i - 1] : 0))).toBe(true);
    const paused = (await s.ok('pause', {})).snapshot;
    expect(s.session.playing).toBe(false);
    expect(paused.step).toBe(steps[3]);
    // The turn queued before the pause runs and ends the loop: no event, no next turn.
    const count = s.events().length;
    expect(s.turns(10)).toBe(1);
    expect(s.events().length).toBe(count);
    expect(s.queued).toHaveLength(0);
    expect((await s.ok('pause', {})).snapshot.step).toBe(paused.step);
  });

  test('play twice, pause, play: one loop, not two', async () => {
    const s = open();
    await s.ok('configure', configure());
    await s.ok('play', {});
    await s.ok('play', {});
    await s.ok('pause', {});
    await s.ok('play', {});
    expect(s.queued).toHaveLength(1);
    expect(s.turns(3)).toBe(3);
    expect(s.queued).toHaveLength(1);
    const a = (await s.ok('pause', {})).snapshot.step;
    expect(a).toBeGreaterThan(0);
    expect(s.turns(10)).toBe(1);
    expect((await s.ok('pause', {})).snapshot.step).toBe(a);
  });

  test('a non-finite loss while playing: a stopped event of kind nonFinite, at the last good step', async () => {
    const s = open();
    await s.ok('configure', configure());
    const { bytes } = await s.call(exportWeightsRequest);
    await s.ok('importRun', { run: { weights: poisoned(bytes) } });
    await s.ok('play', {});
    // The first chunk fails, and the loop ends there.
    expect(s.turns(10)).toBe(1);
    const stopped = s.events().find((e) => e.type === 'stopped') as Extract<WorkerMessage, { type: 'stopped' }>;
    expect(stopped.kind).toBe('nonFinite');
    expect(stopped.snapshot.step).toBe(0);
    expect(s.session.playing).toBe(false);
    // And from a step request: an error reply of the same kind, without a key.
    const e = await s.fails('step', { n: 1 });
    expect(e.kind).toBe('nonFinite');
    expect(e.key).toBeUndefined();
  });
});

/** The weights with lm_head.bias set to +-3e38, so the first step's loss is not finite. */
function poisoned(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  const view = new DataView(out.buffer);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(out.subarray(8, 8 + n)));
  const [begin, end] = header['lm_head.bias'].data_offsets as [number, number];
  for (let o = 8 + n + begin; o < 8 + n + end; o += 4) view.setFloat32(o, o === 8 + n + begin ? 3e38 : -3e38, true);
  return out;
}

describe('export and import', () => {
  test('exported weights and the past restore the run: its step, its history, its attention', async () => {
    const s = open();
    await s.ok('configure', configure());
    await s.ok('step', { n: 30 });
    const exported = await s.call(exportWeightsRequest);
    expect(exported.snapshot.step).toBe(30);
    expect(exported.bytes.length).toBeGreaterThan(100);
    await s.ok('reset', {});
    const past = { step: 30, history: exported.snapshot.history, historyStride: exported.snapshot.historyStride };
    const restored = (await s.ok('importRun', { run: { weights: exported.bytes, past } })).snapshot;
    expect(restored.step).toBe(30);
    expect(restored.weights).toEqual(exported.snapshot.weights);
    expect(Array.from(restored.history)).toEqual(Array.from(exported.snapshot.history));
    // Training continues the step count; the timeline starts at the imported step.
    expect((await s.ok('step', { n: 10 })).snapshot.step).toBe(40);
    expect((await s.call(timelineRequest, { since: -1 })).steps).toEqual([30, 40]);
  });

  test('a config and a sample alone: a fresh run of that config at step 0', async () => {
    const s = open();
    await s.ok('configure', configure());
    await s.ok('step', { n: 5 });
    const snap = (await s.ok('importRun', { run: { config: config({ nHeads: 2 }), sample: [1, 2, 3, 4], ablation: noAblation(2) } })).snapshot;
    expect([snap.step, snap.H, snap.T]).toEqual([0, 2, 4]);
  });

  test('a bad file leaves the run untouched, and a playing run plays on', async () => {
    const s = open();
    await s.ok('configure', configure());
    await s.ok('step', { n: 20 });
    const before = (await s.ok('pause', {})).snapshot;
    const garbage = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const e = await s.fails('importRun', { run: { weights: garbage, config: config({ nHeads: 2 }), sample: [1, 2], ablation: noAblation(2), past: { step: 99, history: new Float32Array(3), historyStride: 1 } } });
    expect(e.kind).toBe('format');
    // A config the core rejects, and weights that do not fit this model.
    expect((await s.fails('importRun', { run: { config: config({ nHeads: 3 }) } })).kind).toBe('config');
    const other = open();
    await other.ok('configure', configure(config({ dModel: 16 })));
    const { bytes } = await other.call(exportWeightsRequest);
    expect((await s.fails('importRun', { run: { weights: bytes } })).kind).toBe('format');
    const after = (await s.ok('pause', {})).snapshot;
    expect([after.step, after.H, after.T]).toEqual([before.step, before.H, before.T]);
    expect(after.weights).toEqual(before.weights);
    expect(Array.from(after.ids)).toEqual(Array.from(before.ids));
    // While playing: the error, and the loop goes on.
    await s.ok('play', {});
    expect((await s.fails('importRun', { run: { weights: garbage } })).kind).toBe('format');
    expect(s.session.playing).toBe(true);
    await s.ok('pause', {});
  });
});

describe('ablation', () => {
  test('ablate: measured intact and with the interventions, which stay set (reset too)', async () => {
    const s = open();
    await s.ok('configure', configure());
    await s.ok('step', { n: 40 });
    const a: Ablation = { headsOff: [true, true, true, true], headsFrozen: [false, true, false, false], scaleScores: false, mask: 'none' };
    const { report, snapshot } = await s.call(ablateRequest, a);
    expect(report.ablation).toEqual(a);
    expect([report.step, report.task]).toEqual([40, 'repeat']);
    expect(report.ablated.loss).not.toBe(report.intact.loss);
    expect(report.intactStats.entropy.length).toBe(4);
    expect(report.ablatedStats.answerMass.length).toBe(4);
    expect(snapshot.mask).toBe('none');
    expect((await s.ok('reset', {})).snapshot.mask).toBe('none');
    // A bad one: an input error, and the one in force stays.
    const bad = await s.callFails(ablateRequest, { ...a, headsOff: [true] });
    expect(bad.kind).toBe('input');
    expect((await s.call(ablateRequest, noAblation(4))).report.intact.loss).toBeCloseTo((await s.call(ablateRequest, noAblation(4))).report.ablated.loss, 6);
  });

  test('configure applies the ablation the page sends, for a new head count too', async () => {
    const s = open();
    await s.ok('configure', configure(config(), SAMPLE, { ...noAblation(4), mask: 'inverted' }));
    const snap = (await s.ok('configure', configure(config({ nHeads: 2 }), SAMPLE, { ...noAblation(2), headsOff: [false, true], mask: 'none' }))).snapshot;
    expect([snap.H, snap.mask]).toEqual([2, 'none']);
    const { report } = await s.call(ablateRequest, { ...noAblation(2), headsOff: [false, true], mask: 'none' });
    expect(report.ablation.headsOff).toEqual([false, true]);
  });

  test('an ablation that does not fit the head count is an input error, and the old run goes on', async () => {
    const s = open();
    await s.ok('configure', configure(config(), SAMPLE, { ...noAblation(4), mask: 'none' }));
    await s.ok('step', { n: 3 });
    const e = await s.fails('configure', configure(config({ nHeads: 2 }), SAMPLE, noAblation(4)));
    expect(e.kind).toBe('input');
    // Without one: the kept one, which does not fit either.
    expect((await s.fails('configure', configure(config({ nHeads: 2 })))).kind).toBe('input');
    const snap = (await s.ok('pause', {})).snapshot;
    expect([snap.step, snap.H, snap.mask]).toEqual([3, 4, 'none']);
  });
});

describe('timeline', () => {
  test('since: only the newer entries, as copies; steps: all kept; bytes: what they hold', async () => {
    const s = open();
    await s.ok('configure', configure());
    const last = 10 * HEADS_EVERY;
    await s.ok('step', { n: last + 5 });
    const all = await s.call(timelineRequest, { since: -1 });
    const grid = Array.from({ length: HEADS_EVERY + 1 }, (_, i) => 10 * i);
    expect(all.steps).toEqual(grid);
    expect(all.entries.map((e) => e.step)).toEqual(grid);
    // The heads are measured at step 0 (the first) and at `last` (HEADS_EVERY intervals), not between.
    expect([all.every, all.capacity, all.bytes]).toEqual([10, 240, 2 * snapshotBytes(4, 12) + (HEADS_EVERY - 1) * snapshotBytes(4, 12, false)]);
    expect(all.entries.map((e) => e.entropy.length)).toEqual(grid.map((step) => (step % last === 0 ? 4 : 0)));
    expect(all.entries[0].loss).toBe((await s.ok('pause', {})).snapshot.initLoss);
    const newer = await s.call(timelineRequest, { since: last - 20 });
    expect(newer.entries.map((e) => e.step)).toEqual([last - 10, last]);
    expect(newer.entries[1].weights).toEqual(all.entries[HEADS_EVERY].weights);
    expect(newer.entries.map((e) => e.entropy.length)).toEqual([0, 4]);
  });

  test('memory capped (7 kept): the interval doubles, and the page\'s copy holds exactly what the worker keeps', async () => {
    // A budget of 7.5 snapshots of a small model: the largest model (H 16, T 128) keeps 7 under
    // the page's budget (timeline.test.ts), and costs seconds a snapshot here (its head scores).
    const T = 12;
    const budget = 7.5 * snapshotBytes(2, T);
    const s = open(readReference, { timelineBytes: budget });
    await s.ok('configure', configure(config({ nHeads: 2, dModel: 16, seqLen: T, batchSize: 1 })));
    let held: (Stepped & { weights: Float32Array; entropy: Float32Array })[] = [];
    let tl = await s.call(timelineRequest, { since: -1 });
    expect(tl.capacity).toBe(7);
    for (let i = 0; i < 5; ++i) {
      // 78 steps in uneven requests: past the doubling at step 70.
      await s.ok('step', { n: 10 + (i % 3) * 7 });
      const since = held.length > 0 ? held[held.length - 1].step : -1;
      tl = await s.call(timelineRequest, { since });
      held = follow(held, tl.steps, tl.entries);
      expect(held.map((e) => e.step)).toEqual(tl.steps);
      expect(held.length).toBeLessThanOrEqual(tl.capacity);
      expect(tl.bytes).toBe(held.reduce((n, e) => n + snapshotBytes(2, T, hasHeadStats(e)), 0));
    }
    expect(tl.every).toBe(20);
    expect(tl.steps).toEqual([0, 20, 40, 60, 70]);
    expect(tl.bytes).toBeLessThanOrEqual(budget);
    // What the page holds is what a fresh full read gives.
    const full = await s.call(timelineRequest, { since: -1 });
    expect(full.entries.map((e) => e.step)).toEqual(held.map((e) => e.step));
    full.entries.forEach((e, i) => expect(e.weights).toEqual(held[i].weights));
  });
});

describe('row backward', () => {
  test('the default target (the task\'s answer, else the next token) and a chosen one; a bad head is an input error', async () => {
    const s = open();
    await s.ok('configure', configure());
    const first = await s.call(rowBackwardRequest, { head: 1, query: 0 });
    expect([first.head, first.query]).toEqual([1, 0]);
    const answers = core.taskTargets('repeat', Int32Array.from(SAMPLE));
    if (answers[0] >= 0) expect([first.targetSource, first.target]).toEqual(['task', answers[0]]);
    else expect([first.targetSource, first.target]).toEqual(['next', SAMPLE[1]]);
    expect(first.row.weights.length).toBe(12);
    expect(first.row.weights[5]).toBe(0); // causal: key 5 is after query 0
    const chosen = await s.call(rowBackwardRequest, { head: 0, query: 4, target: 7 });
    expect([chosen.target, chosen.targetSource]).toEqual([7, 'chosen']);
    expect(Array.from(chosen.ids)).toEqual(SAMPLE);
    expect((await s.callFails(rowBackwardRequest, { head: 9, query: 0 })).kind).toBe('input');
  });
});

describe('self-test', () => {
  test('with the shipped reference case: all six checks pass', async () => {
    const s = open();
    await s.ok('configure', configure());
    const report = await s.call(selfTestRequest, files);
    expect(report.results.map((r) => r.id)).toEqual(['rows_and_mask', 'future_invariance', 'split_merge', 'fused_qkv', 'gradcheck', 'pytorch_reference']);
    for (const r of report.results) expect(r.pass, `${r.id}: ${r.detail}`).toBe(true);
    expect(report.ms).toBeGreaterThanOrEqual(0);
  });

  test('a reference case that cannot be loaded: its row says why, the others are untouched, and the next run tries again', async () => {
    let fail = true;
    const s = open(async (name) => {
      if (fail) throw new Error(`${name} answered 404`);
      return readReference(name);
    });
    await s.ok('configure', configure());
    const report = await s.call(selfTestRequest, files);
    const row = report.results.find((r) => r.id === PYTORCH_REFERENCE)!;
    expect(row.pass).toBe(false);
    expect(row.detail).toBe('The PyTorch reference case could not be loaded: short.weights.safetensors answered 404.');
    for (const r of report.results.filter((r) => r.id !== PYTORCH_REFERENCE)) expect(r.pass, r.id).toBe(true);
    fail = false;
    const again = await s.call(selfTestRequest, files);
    expect(again.results.every((r) => r.pass)).toBe(true);
  });

  test('the row is found by its id, wherever it is', () => {
    const row = (id: string) => ({ id, name: id, maxError: 0, tolerance: 1, pass: true, detail: 'fine.' });
    const results = [row('pytorch_reference'), row('gradcheck')];
    explainMissingReference(results, 'offline');
    expect(results.map((r) => r.detail)).toEqual(['The PyTorch reference case could not be loaded: offline.', 'fine.']);
  });
});

describe('view 2 panels', () => {
  test('scalingDemo and softmaxSteps need no Trainer; their arrays are transferred; bad values are input errors', async () => {
    const s = open();
    const demo = await s.call(scalingDemoRequest, { dk: 16, keys: 8, seed: 42 });
    expect(Array.from(demo.query)).toEqual(Array.from(core.scalingDemo(16, 8, 42).query));
    expect([demo.keys.rows, demo.keys.cols, demo.weightsScaled.length]).toEqual([8, 16, 8]);
    const c = await s.call(softmaxStepsRequest, { logits: [100, 200, 300] });
    expect(Array.from(c.logits)).toEqual([100, 200, 300]);
    expect(c.naive.sum).toBe(Infinity);
    expect(Array.from(c.naive.weights).every(Number.isNaN)).toBe(true);
    expect([c.stable.max, c.stable.sum, c.stable.weights[2]]).toEqual([300, 1, 1]);
    expect(s.transferred.length).toBeGreaterThanOrEqual(12);
    expect((await s.callFails(scalingDemoRequest, { dk: 65, keys: 8, seed: 1 })).kind).toBe('input');
    expect((await s.callFails(softmaxStepsRequest, { logits: [] })).kind).toBe('input');
  });
});

describe('speculative decoding and the tiled step', () => {
  test('a draft; greedy speculative text equal to plain decoding; the acceptance table; the exactness check; no draft or no text: one sentence', async () => {
    const s = open();
    const text = config({ task: 'text', dModel: 32, nHeads: 2, seqLen: 16, batchSize: 8, nLayers: 1, residual: true });
    await s.ok('configure', { config: text, sample: { seed: 1 } });
    await s.ok('step', { n: 20 });
    const greedy = { prompt: 'The ', tokens: 30, draftTokens: 3, options: { temperature: 0 }, seed: 0 };
    const none = await s.callFails(speculativeGenerateRequest, greedy);
    expect([none.kind, none.message]).toEqual(['state', 'No draft yet: train a draft model or take the bigram first.']);

    const d = await s.call(draftMakeRequest, { kind: 'model', steps: 20 });
    expect(d).toMatchObject({ kind: 'model', nLayers: 1, dModel: 32, steps: 20, targetStep: 20 });
    const r = await s.call(speculativeGenerateRequest, greedy);
    expect(r.chars.length).toBe(30);
    expect(r.chars.join('')).toBe(r.plainText);
    expect(r.fates.length).toBe(30);
    expect(r.fates.every((f) => f === 0 || f === 1 || f === 2)).toBe(true);
    expect(r.stats.tokens).toBe(30);
    expect(r.stats.targetPasses).toBeLessThanOrEqual(30);
    expect(r.expectedFromOverlap).toBe(core.expectedTokensPerRound(r.stats.meanOverlap, 3));

    const t = await s.call(acceptanceRequest, { temperatures: [0.5, 1] });
    expect(t.rows.map((row) => row.kind)).toEqual(['bigram', 'model', 'target']);
    for (const a of t.rows[2].alpha) expect(a).toBeCloseTo(1, 5);
    for (const a of [...t.rows[0].alpha, ...t.rows[1].alpha]) expect(a > 0 && a < 1).toBe(true);
    expect([...t.text].length).toBe(16);

    const e = await s.call(exactnessRequest, { prompt: 'The ', draftTokens: 3, options: { temperature: 1 }, seed: 2, samples: 500 });
    for (const p of [e.first, e.second]) {
      expect(p.counts.reduce((a, b) => a + b, 0)).toBe(500);
      expect(p.pValue >= 0 && p.pValue <= 1).toBe(true);
      expect(p.impossible).toBe(0);
    }
    expect(e.vocab.length).toBe(e.first.counts.length);
    expect((await s.callFails(exactnessRequest, { prompt: 'The ', draftTokens: 3, options: {}, seed: 2, samples: 5 })).message).toMatch(/number of samples \(5\)/);
    expect((await s.callFails(speculativeGenerateRequest, { ...greedy, draftTokens: 9 })).message).toMatch(/draft tokens N \(9\)/);
    expect((await s.callFails(speculativeGenerateRequest, { ...greedy, prompt: 'The ☃' })).message).toMatch(/☃/);

    expect((await s.call(draftMakeRequest, { kind: 'bigram' })).kind).toBe('bigram');
    expect((await s.call(acceptanceRequest, { temperatures: [1] })).rows.map((row) => row.kind)).toEqual(['bigram', 'target']);
    expect((await s.call(speculativeGenerateRequest, greedy)).chars.join('')).toBe(r.plainText);

    // A new run frees the draft; a run on token ids has no text to draft from.
    await s.ok('configure', configure());
    expect((await s.callFails(speculativeGenerateRequest, greedy)).kind).toBe('state');
    const ids = await s.callFails(draftMakeRequest, { kind: 'bigram' });
    expect([ids.kind, ids.message]).toEqual(['input', 'Speculative decoding needs the text task: this model was trained on token ids, not characters.']);
  });

  test('transformerBlock: x in its two parts under additive positions (the token rows, the same for the same id, plus the positions), none otherwise', async () => {
    const s = open();
    const b = await s.call(transformerBlockRequest, { config: config(), sample: SAMPLE });
    expect(b.positions).toBe('sinusoidal');
    const { xTokens: tok, xPositions: pos } = b;
    expect([tok!.rows, tok!.cols, pos!.rows, pos!.cols]).toEqual([b.x.rows, b.x.cols, b.x.rows, b.x.cols]);
    const D = b.x.cols;
    let worst = 0;
    for (let k = 0; k < b.x.data.length; ++k) worst = Math.max(worst, Math.abs(tok!.data[k] + pos!.data[k] - b.x.data[k]));
    expect(worst).toBeLessThan(1e-6);
    // SAMPLE repeats 3 at positions 0 and 7, 5 at 6 and 8: the same token row each time, and
    // position 0's sinusoidal code is sin(0) = 0, cos(0) = 1 in turn.
    const row = (m: { data: Float32Array }, i: number) => Array.from(m.data.subarray(i * D, (i + 1) * D));
    expect(row(tok!, 7)).toEqual(row(tok!, 0));
    expect(row(tok!, 8)).toEqual(row(tok!, 6));
    expect(row(tok!, 1)).not.toEqual(row(tok!, 0));
    row(pos!, 0).forEach((v, d) => expect(v).toBeCloseTo(d % 2 === 0 ? 0 : 1, 5));
    // Positions that add nothing to x (RoPE) give no parts.
    const rope = await s.call(transformerBlockRequest, { config: config({ positions: 'rope' }), sample: SAMPLE });
    expect([rope.xTokens, rope.xPositions]).toEqual([null, null]);
  });

  test('tiledAttention: one head of the block tile by tile, equal to the plain softmax; a bad tile size is an input error', async () => {
    const s = open();
    const t = await s.call(tiledAttentionRequest, { config: config(), sample: SAMPLE, head: 1, tileSize: 4 });
    expect([t.head, t.seqLen, t.tiles, t.tileSize]).toEqual([1, 12, 3, 4]);
    expect([t.rowMax.rows, t.rowMax.cols, t.rowSum.rows, t.rowSum.cols]).toEqual([3, 12, 3, 12]);
    expect(t.maxWeightDifference).toBeLessThan(1e-6);
    expect(t.plainBytes > 0 && t.tiledBytes > 0).toBe(true);
    expect((await s.callFails(tiledAttentionRequest, { config: config(), sample: SAMPLE, head: 0, tileSize: 0 })).kind).toBe('input');
  });
});

describe('errors', () => {
  test('a config the core rejects: kind config and the key, and the old run goes on', async () => {
    const s = open();
    await s.ok('configure', configure());
    await s.ok('step', { n: 2 });
    const e = await s.fails('configure', configure(config({ vocabSize: 0 })));
    expect(e.kind).toBe('config');
    expect(e.key).toBe('vocabSize');
    expect((await s.ok('pause', {})).snapshot.step).toBe(2);
  });

  test('a sample the new model does not take: an input error after the new run is in place', async () => {
    const s = open();
    const e = await s.fails('configure', configure(config({ vocabSize: 8 }), [1, 2, 50]));
    expect(e.kind).toBe('input');
    expect((await s.ok('sample', { sample: [1, 2] })).snapshot.step).toBe(0);
  });

  test('before configure: kind state', async () => {
    const s = open();
    for (const [type, body] of [['step', { n: 1 }], ['pause', {}], ['reset', {}], ['play', {}]] as const) {
      const e = await s.fails(type, body as never);
      expect(e.kind, type).toBe('state');
    }
    expect((await s.callFails(timelineRequest, { since: -1 })).kind).toBe('state');
    // A request of no panel: an input error naming it.
    const unknown = await s.fails('call', { request: 'noSuchRequest', input: {} });
    expect([unknown.kind, unknown.message]).toEqual(['input', 'there is no request named "noSuchRequest"']);
    // View 2 needs no Trainer.
    const causal = Uint8Array.from([0, 1, 1, 0, 0, 1, 0, 0, 0]);
    const stages = await s.call(selfAttentionRequest, { tokens: ['a', 'b', 'c'], dModel: 8, dk: 4, dv: 4, seed: 1, mask: causal });
    const head = stages.heads[0];
    expect([head.weights.rows, head.weights.cols, head.output.cols]).toEqual([3, 3, 4]);
    expect(head.weights.data[1]).toBe(0);
    expect((await s.callFails(selfAttentionRequest, { tokens: [], dModel: 8, dk: 4, dv: 4, seed: 1 })).kind).toBe('input');
  });
});

describe('depth and induction', () => {
  const deep = () => config({ vocabSize: 32, dModel: 32, nHeads: 2, seqLen: 32, batchSize: 32, lr: 0.005, task: 'induction', nLayers: 2, residual: true });
  const SEQ = [3, 17, 5, 12, 20, 8, 29, 16, 22, 1, 26, 10, 14, 5, 12, 20, 8, 29, 16, 31, 9];

  /** A Trainer of c stepped to each of steps, with its head scores there (the second path). */
  function direct(c: TrainerConfigMsg, steps: number[]) {
    const t = new core.Trainer(c);
    try {
      return steps.map((n) => {
        while (t.stepsDone() < n) t.step(n - t.stepsDone());
        return { phaseChange: t.phaseChange(), scores: t.headScores() };
      });
    } finally {
      t.delete();
    }
  }

  test('a two-layer run: (L,H,T,T) weights, no phase change at step 0, and every head in the timeline', async () => {
    const s = open();
    const snap = (await s.ok('configure', configure(deep(), SEQ))).snapshot;
    expect([snap.L, snap.H, snap.T, snap.weights.length]).toEqual([2, 2, SEQ.length, 2 * 2 * SEQ.length * SEQ.length]);
    expect(snap.phaseChange).toBe(-1);
    const last = 10 * HEADS_EVERY;
    await s.ok('step', { n: last });
    const tl = await s.call(timelineRequest, { since: -1 });
    const grid = Array.from({ length: HEADS_EVERY + 1 }, (_, i) => 10 * i);
    expect(tl.steps).toEqual(grid);
    expect(tl.bytes).toBe(2 * snapshotBytes(4, SEQ.length) + (HEADS_EVERY - 1) * snapshotBytes(4, SEQ.length, false));
    const want = direct(deep(), grid);
    tl.entries.forEach((e, i) => {
      expect([e.L, e.H, e.weights.length]).toEqual([2, 2, 4 * SEQ.length * SEQ.length]);
      // Only steps 0 and `last` are on the heads' grid (HEADS_EVERY x 10 steps); the others' head
      // arrays are empty.
      const measured = e.step % last === 0;
      expect(e.previousToken).toEqual(measured ? want[i].scores.previousToken : new Float32Array(0));
      expect(e.prefixMatching).toEqual(measured ? want[i].scores.prefixMatching : new Float32Array(0));
      expect(e.entropy.length).toBe(measured ? 4 : 0);
    });
  });

  test('headScores: the core\'s scores at the run\'s step', async () => {
    const s = open();
    await s.ok('configure', configure(deep(), SEQ));
    await s.ok('step', { n: 30 });
    const report = await s.call(headScoresRequest);
    const [want] = direct(deep(), [30]);
    expect(report.step).toBe(30);
    expect(report.scores.previousToken).toEqual(want.scores.previousToken);
    expect(report.scores.prefixMatching).toEqual(want.scores.prefixMatching);
    expect(report.scores.composition).toEqual(want.scores.composition);
    expect(report.scores.composition.length).toBe(1 * 2 * 2);
    expect(report.scores.compositionBaseline).toBe(want.scores.compositionBaseline);
  });

  test('ablate over every layer\'s heads (global index): intact and ablated scores; an H-entry list does not fit', async () => {
    const s = open();
    await s.ok('configure', configure(deep(), SEQ));
    await s.ok('step', { n: 20 });
    const a: Ablation = { ...noAblation(4), headsOff: [false, true, false, false] };
    const { report } = await s.call(ablateRequest, a);
    expect(report.ablation.headsOff).toEqual([false, true, false, false]);
    const [want] = direct(deep(), [20]);
    expect(report.intactScores.prefixMatching).toEqual(want.scores.prefixMatching);
    expect(report.ablatedScores.previousToken.length).toBe(4);
    expect(report.ablated.loss).not.toBe(report.intact.loss);
    expect((await s.callFails(ablateRequest, noAblation(2))).kind).toBe('input');
  });

  test('the one-row backward takes the global head index', async () => {
    const s = open();
    await s.ok('configure', configure(deep(), SEQ));
    const r = await s.call(rowBackwardRequest, { head: 3, query: 14 });
    expect([r.head, r.query]).toEqual([3, 14]);
    expect(r.row.weights.length).toBe(SEQ.length);
    expect((await s.callFails(rowBackwardRequest, { head: 4, query: 14 })).kind).toBe('input');
  });
});

describe('the sample from the task, and the predictions on it', () => {
  test('a seed asks for the task generator\'s sequence (the core\'s taskSample); a bad one keeps the old sample', async () => {
    const s = open();
    const c = config({ task: 'copy', vocabSize: 16, seqLen: 9 });
    const first = (await s.ok('configure', configure(c, { seed: 5 } as never))).snapshot;
    expect(Array.from(first.ids)).toEqual(Array.from(core.taskSample('copy', 16, 9, 5)));
    const next = (await s.ok('sample', { sample: { seed: 6 } })).snapshot;
    expect(Array.from(next.ids)).toEqual(Array.from(core.taskSample('copy', 16, 9, 6)));
    expect(next.ids).not.toEqual(first.ids);
    const e = await s.fails('sample', { sample: { seed: -1 } });
    expect([e.kind, e.message]).toEqual(['input', expect.stringMatching(/seed/)]);
    expect(Array.from((await s.ok('pause', {})).snapshot.ids)).toEqual(Array.from(next.ids));
  });

  test('predictions: the core\'s probabilities of its logits, the top 3 of each position, and the task\'s answers', async () => {
    const s = open();
    const c = config({ task: 'shift', nHeads: 2, seed: 7 });
    await s.ok('configure', configure(c));
    await s.ok('step', { n: 30 });
    const r = await s.call(predictionsRequest);
    // The same run again, by hand: training is deterministic for a config.
    const t = new core.Trainer(c);
    try {
      t.step(30);
      const { logits, vocabSize: V } = t.attention(Int32Array.from(SAMPLE));
      expect([r.step, r.task, r.k, Array.from(r.ids)]).toEqual([30, 'shift', 3, SAMPLE]);
      expect(Array.from(r.answers)).toEqual(Array.from(core.taskTargets('shift', Int32Array.from(SAMPLE))));
      SAMPLE.forEach((_, i) => {
        const row = Array.from(logits.subarray(i * V, (i + 1) * V));
        const max = Math.max(...row);
        const sum = row.reduce((a, x) => a + Math.exp(x - max), 0);
        const p = row.map((x) => Math.exp(x - max) / sum);
        const order = p.map((_, v) => v).sort((a, b) => p[b] - p[a] || a - b);
        expect(Array.from(r.top.subarray(i * 3, i * 3 + 3))).toEqual(order.slice(0, 3));
        // The core's float32 probabilities: the sampler's distribution exactly, a double softmax
        // to their rounding.
        const dist = core.nextTokenDistribution(Float32Array.from(row), {});
        for (let j = 0; j < 3; ++j) {
          expect(r.probs[i * 3 + j]).toBe(dist[order[j]]);
          expect(Math.abs(r.probs[i * 3 + j] - p[order[j]])).toBeLessThanOrEqual(1e-7);
        }
        const a = r.answers[i];
        if (a >= 0) expect(r.answerProbs[i]).toBe(dist[a]);
        else expect(r.answerProbs[i]).toBeNaN();
      });
    } finally {
      t.delete();
    }
    expect((await open().callFails(predictionsRequest)).kind).toBe('state');
  });
});

describe('length extrapolation', () => {
  test('lengths: the live model at 1x, 2x, 4x; a learned table too short is that row\'s problem', async () => {
    const s = open();
    await s.ok('configure', configure(config({ task: 'shift', residual: true, positions: 'rope' })));
    await s.ok('step', { n: 20 });
    const report = await s.call(lengthsRequest, { lengths: [12, 24, 48], batches: 2 });
    expect([report.step, report.config.positions]).toEqual([20, 'rope']);
    expect(report.rows.map((r) => [r.length, r.evaluation?.accuracyPerPosition.length, r.problem])).toEqual([[12, 12, null], [24, 24, null], [48, 48, null]]);
    for (const r of report.rows) expect(Number.isFinite(r.evaluation!.loss)).toBe(true);
    await s.ok('configure', configure(config({ task: 'shift', residual: true, positions: 'learned' })));
    const learned = (await s.call(lengthsRequest, { lengths: [12, 24], batches: 1 })).rows;
    expect(learned[0].evaluation).not.toBeNull();
    expect(learned[1].evaluation).toBeNull();
    expect(learned[1].problem).toMatchObject({ kind: 'config', key: 'maxSeqLen' });
    expect((await s.callFails(lengthsRequest, { lengths: [], batches: 1 })).kind).toBe('input');
    expect((await s.callFails(lengthsRequest, { lengths: [0], batches: 1 })).key).toBe('seqLen');
  });

  test('the comparison trainer: apart from the run, stepped, measured, freed', async () => {
    const s = open();
    await s.ok('configure', configure());
    expect((await s.callFails(comparisonStepRequest, { n: 1 })).kind).toBe('state');
    await s.call(comparisonStartRequest, config({ task: 'shift', residual: true, positions: 'alibi', seqLen: 16 }));
    expect(await s.call(comparisonStepRequest, { n: 30 })).toMatchObject({ step: 30 });
    const r = await s.call(comparisonLengthsRequest, { lengths: [16, 32, 64], batches: 1 });
    expect([r.step, r.config.positions, r.rows.map((x) => x.evaluation?.accuracyPerPosition.length)]).toEqual([30, 'alibi', [16, 32, 64]]);
    // The run is untouched.
    expect((await s.ok('step', { n: 1 })).snapshot.step).toBe(1);
    expect((await s.callFails(comparisonStartRequest, config({ nHeads: 3 }))).kind).toBe('config');
    await s.call(comparisonEndRequest);
    expect((await s.callFails(comparisonLengthsRequest, { lengths: [16], batches: 1 })).kind).toBe('state');
  });
});

describe('length extrapolation: memory', () => {
  test('a length whose attention would not fit the page\'s budget is that row\'s problem, not measured', async () => {
    const s = open();
    await s.ok('configure', configure(config({ seqLen: 128, batchSize: 64, nHeads: 4 }), [1, 2, 3]));
    const rows = (await s.call(lengthsRequest, { lengths: [128, 512], batches: 1 })).rows;
    expect(rows[0].evaluation).not.toBeNull();
    expect(rows[1].evaluation).toBeNull();
    expect(rows[1].problem).toMatchObject({ kind: 'input' });
    expect(rows[1].problem!.message).toMatch(/lower batch or seq_len/);
  });
});

describe('look inside', () => {
  test('inspect: the core\'s trainer.inspect on the sample, with the default corrupted input per task, the learner\'s own, and one that does not fit', async () => {
    const s = open();
    // Induction, a sample with a repeat: the core's inductionCorruption.
    const ind = [3, 9, 4, 7, 1, 8, 5, 4, 7, 1, 8, 2];
    const c = config({ task: 'induction', nLayers: 2, residual: true, nHeads: 2, vocabSize: 16 });
    await s.ok('configure', configure(c, ind));
    await s.ok('step', { n: 5 });
    const r = await s.call(inspectRequest, {});
    const def = core.inductionCorruption(Int32Array.from(ind), 16);
    expect([r.step, r.task, Array.from(r.ids), Array.from(r.corrupted!), r.changed, r.patchingNote]).toEqual([5, 'induction', ind, Array.from(def.ids), def.changed, '']);
    expect(r.inspection.patching).toMatchObject({ position: def.position, answerClean: def.answerClean, answerCorrupt: def.answerCorrupt });
    expect([r.inspection.lens.applies, r.inspection.attribution.applies, r.inspection.circuits.length]).toEqual([true, true, 4]);
    // The learner's own corrupted input, then one token changed at a position they picked.
    const own = ind.map((t, i) => (i === 1 ? 0 : t));
    expect(Array.from((await s.call(inspectRequest, { corrupted: own })).corrupted!)).toEqual(own);
    const changed = await s.call(inspectRequest, { change: 4 });
    expect([changed.changed, Array.from(changed.corrupted!)]).toEqual([4, ind.map((t, i) => (i === 4 ? 0 : t))]);
    // Another length, a token outside the vocabulary: one sentence, kind input; the run goes on.
    for (const bad of [ind.slice(1), ind.map((t, i) => (i === 0 ? 16 : t))]) {
      const e = await s.callFails(inspectRequest, { corrupted: bad });
      expect(e.kind).toBe('input');
      expect(e.message.split('. ').length).toBe(1);
    }
    expect((await s.ok('step', { n: 1 })).snapshot.step).toBe(6);
    // No repeat in the sample: no default, and the note says why.
    await s.ok('sample', { sample: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] });
    const none = await s.call(inspectRequest, {});
    expect([none.corrupted, none.inspection.patching]).toEqual([null, null]);
    expect(none.patchingNote).toMatch(/^No default corrupted input: the sequence holds no repeated segment.*, or pick a token to change\.$/);
    // Another task: the token the last answer copies (shift: the one before the last position).
    await s.ok('configure', configure(config({ task: 'shift', nHeads: 2 })));
    const shift = await s.call(inspectRequest, {});
    expect(shift.changed).toBe(SAMPLE.length - 2);
    expect(shift.inspection.lens).toMatchObject({ applies: false });
    expect((await open().callFails(inspectRequest, {})).kind).toBe('state');
  });
});

describe('fill in the blanks, the receptive field', () => {
  /** A small text model: the default corpus, T 16. */
  const text = { task: 'text', seqLen: 16, dModel: 16, nHeads: 2, batchSize: 4 } as const;

  test('fill: a causal text run guesses from the left only and is kept; a masked run of the same text fills both ways beside it', async () => {
    const s = open();
    const { snapshot } = await s.ok('configure', configure(config(text), { seed: 1 }));
    const vocab = [...snapshot.text!.corpus.vocab];
    const sentence = Array.from(snapshot.ids.slice(0, 10), (id) => vocab[id]).join('');
    await s.ok('step', { n: 3 });
    const left = await s.call(fillRequest, { text: sentence, blanks: [4, 0] });
    expect([left.objective, left.blanks, left.text]).toEqual(['causal', [], sentence]);
    expect(left.causal?.step).toBe(3);
    expect(left.causal?.blanks.map((b) => [b.position, b.truth, b.top.length])).toEqual([[0, sentence[0], 0], [4, sentence[4], 5]]);
    expect(left.causal?.blanks[0].why).toMatch(/nothing to its left/);
    // A masked model of the same text, trained later in the same session: the causal copy is beside it.
    await s.ok('configure', configure(config({ ...text, objective: 'mlm' }), { seed: 1 }));
    const both = await s.call(fillRequest, { text: sentence, blanks: [4] });
    expect(both.blanks.map((b) => [b.position, b.truth, b.top.length])).toEqual([[4, sentence[4], 5]]);
    const probs = both.blanks[0].top.map((g) => g.prob);
    for (const p of probs) expect(p > 0 && p <= 1).toBe(true);
    expect(probs.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1 + 1e-6);
    expect(both.causal?.step).toBe(3);
    expect(both.causal?.blanks.map((b) => b.position)).toEqual([4]);
    // Bad input: one sentence each, and the session keeps working.
    expect((await s.callFails(fillRequest, { text: sentence, blanks: [] })).message).toMatch(/^No blank yet/);
    expect((await s.callFails(fillRequest, { text: sentence.slice(0, 2), blanks: [0, 1] })).message).toMatch(/^Every character is blank/);
    expect((await s.callFails(fillRequest, { text: sentence.repeat(2), blanks: [1] })).message).toMatch(/at most 16 \(its seq_len\)/);
    expect((await s.callFails(fillRequest, { text: `${sentence.slice(0, 3)}☃`, blanks: [1] })).kind).toBe('input');
    expect((await s.call(fillRequest, { text: sentence, blanks: [2] })).blanks.length).toBe(1);
    // Another task: a state error saying the panel works on characters.
    await s.ok('configure', configure());
    const other = await s.callFails(fillRequest, { text: 'abc', blanks: [1] });
    expect([other.kind, other.message]).toEqual(['state', expect.stringMatching(/text task/)]);
  });

  test('receptive field: 3 layers of a window of 3 keys reach exactly L (W - 1) = 6 back; every cell beyond is 0', async () => {
    const s = open();
    await s.ok('configure', configure(config({ task: 'copy', vocabSize: 16, nLayers: 3, residual: true, positions: 'rope', attention: 'window', window: 3 })));
    const r = await s.call(receptiveRequest);
    expect([r.T, r.nLayers, r.window, r.attention]).toEqual([12, 3, 3, 'window']);
    expect(reachBound(r)).toBe(6);
    const m = reach(r);
    expect(m.farthest).toBe(6);
    expect(m.beyondNonzero).toBe(0);
    expect(m.beyondZero).toBe(2 * (1 + 2 + 3 + 4 + 5));  // |i - j| > 6 at T 12, both triangles
  });
});
