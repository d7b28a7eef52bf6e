/// <reference lib="webworker" />
// The worker owns the wasm core and the model. It answers the requests of protocol.ts and, while
// playing, trains in small chunks (~15 ms) so that it stays responsive to pause/step/reset and
// posts a progress snapshot at most every intervalMs. Every number it reports comes from the core.
import type {
  Ablation,
  AblationReport,
  ErrorKind,
  HeadStats,
  ImportRun,
  RowBackwardReport,
  SelfTestReport,
  Timeline,
  TimelineEntry,
  Matrix,
  ReferenceFiles,
  ReplyFor,
  Request,
  SelfAttentionRequest,
  SelfAttentionStages,
  Snapshot,
  TrainerConfigMsg,
  WorkerMessage,
} from './protocol';
import { MAX_STEPS_PER_REQUEST, noAblation, snapshotTransfer } from './protocol';
import { addSnapshot, emptyTimeline, isSnapshotStep, stepsToNextSnapshot, timelineBytes } from './timeline';
import { seededInputs } from './seeded';
import { detectSimd, instantiateCore } from './core/load-core.js';
import type { AttentionCore as AttentionCoreModule, CoreError, Trainer } from './core/attention-core';

declare const self: DedicatedWorkerGlobalScope;


/** How long one training chunk should take, so pause/step requests wait at most this long. */
const CHUNK_MS = 15;

let core: AttentionCoreModule | null = null;
let trainer: Trainer | null = null;
let config: TrainerConfigMsg | null = null;
let sample = new Int32Array(0);
let lastLoss = NaN;
/** Steps and losses of an imported run before this Trainer (importRun's `past`), or null. */
let past: ImportRun['past'] | null = null;
let initLoss = NaN;
let playing = false;
let intervalMs = 50;
let stepsPerChunk = 1;
let lastPost = 0;
/** (time ms, steps) samples of the last second, for steps/s. */
let rate: Array<[number, number]> = [];
/** The interventions the learner set; applied to every new Trainer with the same head count. */
let ablation: Ablation | null = null;

/** Attention snapshots on the timeline policy's grid (timeline.ts). */
let timeline = emptyTimeline<TimelineEntry>(1, 1);

function post(msg: WorkerMessage, transfer: Transferable[] = []): void {
  self.postMessage(msg, transfer);
}

function reply<K extends keyof ReplyFor>(msg: ReplyFor[K]): void {
  const snap = (msg as { snapshot?: Snapshot }).snapshot;
  post(msg, snap ? snapshotTransfer(snap) : []);
}

/** A wasm trap (abort, out of memory) leaves the module unusable: report it as a crash. */
function crashIfTrap(err: unknown): void {
  if (err instanceof WebAssembly.RuntimeError) {
    setTimeout(() => {
      throw err;
    });
  }
}

/** The kind the core put on err (a CoreError), or fallback for any other error. */
function kindOf(err: unknown, fallback: ErrorKind): ErrorKind {
  return err instanceof Error && typeof (err as CoreError).kind === 'string' ? (err as CoreError).kind : fallback;
}

function fail(replyTo: number, kind: ErrorKind, err: unknown): void {
  crashIfTrap(err);
  const message = err instanceof Error ? err.message : String(err);
  const key = err instanceof Error ? (err as CoreError).key : undefined;
  post({ type: 'error', replyTo, kind: kindOf(err, kind), message, key });
}

function stepsPerSec(): number {
  if (!playing || rate.length < 2) return 0;
  const [t0, s0] = rate[0];
  const [t1, s1] = rate[rate.length - 1];
  return t1 > t0 ? ((s1 - s0) * 1000) / (t1 - t0) : 0;
}

function snapshot(): Snapshot {
  const t = trainer!;
  const att = t.attention(sample);
  const own = t.lossHistory();
  const T = sample.length;
  const steps = t.stepsDone() + (past?.step ?? 0);
  let history = own;
  if (past && past.history.length > 0) {
    history = new Float32Array(past.history.length + own.length);
    history.set(past.history);
    history.set(own, past.history.length);
  }
  const ownSteps = t.stepsDone();
  const loss = ownSteps > 0 ? lastLoss : steps > 0 && history.length > 0 ? history[history.length - 1] : initLoss;
  return {
    step: steps,
    loss,
    lossAtInit: steps === 0,
    initLoss,
    stepsPerSec: stepsPerSec(),
    history,
    historyStride: past ? past.historyStride : t.historyStride(),
    ids: sample.slice(),
    weights: att.weights,
    H: att.nHeads,
    T,
    mask: ablation?.mask ?? 'causal',
  };
}

/** The step count the learner sees (imported steps included). */
function stepNow(): number {
  return trainer!.stepsDone() + (past?.step ?? 0);
}

/** Starts an empty timeline for the current Trainer and takes the first snapshot. */
function resetTimeline(): void {
  timeline = emptyTimeline(config!.nHeads, config!.seqLen);
  try {
    capture();
  } catch {
    // The sample does not fit this model (configure reports that); the timeline starts empty.
  }
}

/** Adds the current attention of the sample and the head statistics to the timeline. */
function capture(): void {
  const t = trainer!;
  const att = t.attention(sample);
  const st = t.attentionStats();
  timeline = addSnapshot(timeline, {
    step: stepNow(),
    loss: t.stepsDone() > 0 ? lastLoss : initLoss,
    ids: sample.slice(),
    weights: att.weights,
    H: att.nHeads,
    T: att.seqLen,
    mask: ablation?.mask ?? 'causal',
    entropy: st.entropy,
    answerMass: st.answerMass,
  });
}

/** Trains n steps, stopping at each multiple of the timeline interval to take a snapshot. */
function train(n: number): void {
  let left = n;
  while (left > 0) {
    const k = Math.min(left, stepsToNextSnapshot(stepNow(), timeline.every));
    runSteps(k);
    left -= k;
    if (isSnapshotStep(stepNow(), timeline.every)) capture();
  }
}

/** The per-head statistics as the page gets them. */
function headStats(t: Trainer): HeadStats {
  const s = t.attentionStats();
  return { entropy: s.entropy, maxWeight: s.maxWeight, answerMass: s.answerMass };
}

/** Sets the interventions and measures the run with and without them (on fixed eval batches). */
function ablate(a: Ablation): AblationReport {
  const t = trainer!;
  const intactAblation = noAblation(config!.nHeads);
  t.setAblation(intactAblation);
  const intact = t.evaluate(EVAL_BATCHES);
  const intactStats = headStats(t);
  try {
    t.setAblation(a);
  } catch (e) {
    if (ablation) t.setAblation(ablation);
    throw e;
  }
  ablation = t.ablation();
  return { ablation, intact, ablated: t.evaluate(EVAL_BATCHES), intactStats, ablatedStats: headStats(t), step: stepNow(), task: config!.task };
}

/** Batches the ablation panel's loss and accuracy are measured on. */
const EVAL_BATCHES = 4;

/** The default target of the one-row backward: the task's answer, else the next token, else the token itself. */
function rowBackward(head: number, query: number, chosen: number | undefined): RowBackwardReport {
  const t = trainer!;
  let target: number;
  let targetSource: RowBackwardReport['targetSource'];
  if (chosen !== undefined) {
    target = chosen;
    targetSource = 'chosen';
  } else {
    const answers = core!.taskTargets(config!.task, sample);
    const answer = answers[query];
    if (answer !== undefined && answer >= 0) {
      target = answer;
      targetSource = 'task';
    } else if (query + 1 < sample.length) {
      target = sample[query + 1];
      targetSource = 'next';
    } else {
      target = sample[query] ?? 0;
      targetSource = 'last';
    }
  }
  return { ids: sample.slice(), head, query, target, targetSource, row: t.rowBackward(sample, head, query, target) };
}

/** The shipped PyTorch case, fetched once. */
let referenceBytes: Promise<{ weights: Uint8Array; input: Uint8Array; expected: Uint8Array }> | null = null;

function loadReference(files: ReferenceFiles): Promise<{ weights: Uint8Array; input: Uint8Array; expected: Uint8Array }> {
  const get = async (kind: keyof ReferenceFiles) => {
    const url = files[kind];
    const r = await fetch(url);
    if (!r.ok) throw new Error(`${url} answered ${r.status}`);
    return new Uint8Array(await r.arrayBuffer());
  };
  referenceBytes ??= Promise.all([get('weights'), get('input'), get('expected')]).then(([weights, input, expected]) => ({ weights, input, expected }));
  referenceBytes.catch(() => (referenceBytes = null));
  return referenceBytes;
}

async function selfTest(files: ReferenceFiles): Promise<SelfTestReport> {
  let reference = null;
  let loadError = '';
  try {
    reference = await loadReference(files);
  } catch (e) {
    loadError = e instanceof Error ? e.message : String(e);
  }
  const t0 = performance.now();
  const results = trainer!.selfTest(reference);
  const ms = performance.now() - t0;
  if (loadError) {
    const last = results[results.length - 1];
    last.detail = `The PyTorch reference case could not be loaded: ${loadError}.`;
  }
  return { results, ms };
}

/** Replaces the trainer; the loss at init is the loss the first step will see (peekLoss). */
function configure(cfg: TrainerConfigMsg): void {
  const next = new core!.Trainer(cfg);
  install(next, cfg, lossAtInit(next), null);
}

/** The loss the first step will see (peekLoss), or NaN if the core cannot tell. */
function lossAtInit(t: Trainer): number {
  try {
    return t.peekLoss();
  } catch {
    return NaN;
  }
}

/** Makes next the current Trainer (the old one is freed), at its step 0 or after an import. */
function install(next: Trainer, cfg: TrainerConfigMsg, init: number, history: ImportRun['past'] | null): void {
  trainer?.delete();
  trainer = next;
  config = cfg;
  initLoss = init;
  lastLoss = NaN;
  past = history;
  rate = [];
  if (ablation && ablation.zeroed.length !== cfg.nHeads) ablation = null;  // per-head flags no longer fit
  if (ablation) next.setAblation(ablation);
  resetTimeline();
}

/** importRun: a new Trainer with the weights loaded; replaces the current one only on success. */
function importRun(run: ImportRun): void {
  const cfg = run.config ?? config!;
  const ids = run.sample ? Int32Array.from(run.sample) : sample;
  let next: Trainer | null = null;
  let init = NaN;
  try {
    next = new core!.Trainer(cfg);
    init = lossAtInit(next);
    if (run.weights) next.importWeights(run.weights);
    if (run.ablation) next.setAblation(run.ablation); // checks it fits this model
    next.attention(ids); // the sample must fit this model
  } catch (e) {
    next?.delete();
    throw e;
  }
  playing = false;
  sample = ids;
  if (run.ablation) ablation = next.ablation();
  install(next, cfg, init, run.weights && run.past ? run.past : null);
}

/** Runs n steps; on a non-finite loss the core keeps the last good weights and throws. */
function runSteps(n: number): void {
  try {
    lastLoss = trainer!.step(n);
  } catch (e) {
    const h = trainer!.lossHistory();
    if (h.length > 0) lastLoss = h[h.length - 1];
    throw e;
  }
}

function loop(): void {
  if (!playing || !trainer) return;
  const t0 = performance.now();
  try {
    train(stepsPerChunk);
  } catch (e) {
    playing = false;
    crashIfTrap(e);
    const message = e instanceof Error ? e.message : String(e);
    const snap = snapshot();
    post({ type: 'stopped', kind: kindOf(e, 'internal'), message, snapshot: snap }, snapshotTransfer(snap));
    return;
  }
  const t1 = performance.now();
  // Aim the next chunk at CHUNK_MS, growing at most 2x at a time.
  const perStep = Math.max((t1 - t0) / stepsPerChunk, 1e-3);
  stepsPerChunk = Math.max(1, Math.min(MAX_STEPS_PER_REQUEST, Math.round(CHUNK_MS / perStep), stepsPerChunk * 2));
  rate.push([t1, trainer.stepsDone()]);
  while (rate.length > 2 && t1 - rate[0][0] > 1000) rate.shift();
  if (t1 - lastPost >= intervalMs) {
    lastPost = t1;
    const snap = snapshot();
    post({ type: 'progress', snapshot: snap }, snapshotTransfer(snap));
  }
  yieldThen(loop);
}

// Yield to the event loop (so requests get handled) without setTimeout's 4 ms clamp.
const channel = new MessageChannel();
let pending: (() => void) | null = null;
channel.port1.onmessage = () => {
  const f = pending;
  pending = null;
  f?.();
};
function yieldThen(f: () => void): void {
  pending = f;
  channel.port2.postMessage(null);
}

function matrix(data: Float32Array, rows: number, cols: number): Matrix {
  if (data.length !== rows * cols) throw new Error(`expected ${rows}x${cols} values, got ${data.length}`);
  return { rows, cols, data };
}

function selfAttention(input: SelfAttentionRequest): SelfAttentionStages {
  const T = input.tokens.length;
  const { dModel: D, dk, dv } = input;
  const { X, Wq, Wk, Wv } = seededInputs(input.tokens, D, dk, dv, input.seed);
  const r = core!.selfAttention({
    X: { rows: T, cols: D, data: X },
    Wq: { rows: D, cols: dk, data: Wq },
    Wk: { rows: D, cols: dk, data: Wk },
    Wv: { rows: D, cols: dv, data: Wv },
    causal: input.causal,
  });
  return {
    tokens: input.tokens,
    causal: input.causal,
    X: matrix(X, T, D),
    Wq: matrix(Wq, D, dk),
    Wk: matrix(Wk, D, dk),
    Wv: matrix(Wv, D, dv),
    Q: matrix(r.Q.data, T, dk),
    K: matrix(r.K.data, T, dk),
    V: matrix(r.V.data, T, dv),
    scores: matrix(r.scores.data, T, T),
    scaledScores: matrix(r.scaledScores.data, T, T),
    maskedScores: matrix(r.maskedScores.data, T, T),
    weights: matrix(r.weights.data, T, T),
    output: matrix(r.output.data, T, dv),
  };
}

async function init(files: Extract<Request, { type: 'init' }>['core'], forceScalar: boolean): Promise<boolean> {
  const simd = !forceScalar && detectSimd();
  core = await instantiateCore(simd ? files.simd : files.scalar);
  return simd;
}

async function handle(req: Request): Promise<void> {
  if (req.type === 'init') {
    try {
      const simd = await init(req.core, req.forceScalar ?? false);
      reply<'init'>({ type: 'ready', replyTo: req.id, simd });
    } catch (e) {
      fail(req.id, 'internal', e);
    }
    return;
  }
  if (!core) return fail(req.id, 'state', new Error('the core is not loaded yet'));
  if (req.type === 'selfAttention') {
    try {
      const stages = selfAttention(req.input);
      const bufs = Object.values(stages)
        .filter((m): m is Matrix => typeof m === 'object' && m !== null && 'data' in m)
        .map((m) => m.data.buffer as ArrayBuffer);
      post({ type: 'selfAttentionDone', replyTo: req.id, stages }, bufs);
    } catch (e) {
      fail(req.id, 'input', e);
    }
    return;
  }
  if (req.type === 'configure') {
    playing = false;
    const kept = ablation;
    try {
      sample = Int32Array.from(req.sample);
      if (req.ablation) ablation = req.ablation;
      configure(req.config);
    } catch (e) {
      ablation = kept;  // the old run goes on as it was
      return fail(req.id, 'config', e);
    }
    try {
      return reply<'configure'>({ type: 'configured', replyTo: req.id, snapshot: snapshot() });
    } catch (e) {
      return fail(req.id, 'input', e);
    }
  }
  if (!trainer || !config) return fail(req.id, 'state', new Error('no trainer: send configure first'));
  switch (req.type) {
    case 'exportWeights':
      try {
        const bytes = trainer.exportWeights();
        const snap = snapshot();
        post({ type: 'exported', replyTo: req.id, bytes, snapshot: snap }, [bytes.buffer as ArrayBuffer, ...snapshotTransfer(snap)]);
      } catch (e) {
        fail(req.id, 'internal', e);
      }
      return;
    case 'importRun':
      try {
        importRun(req.run);
      } catch (e) {
        return fail(req.id, 'input', e);
      }
      return reply<'importRun'>({ type: 'configured', replyTo: req.id, snapshot: snapshot() });
    case 'reset':
      playing = false;
      try {
        configure(config);
        reply<'reset'>({ type: 'configured', replyTo: req.id, snapshot: snapshot() });
      } catch (e) {
        fail(req.id, 'config', e);
      }
      return;
    case 'step': {
      const n = Math.floor(req.n);
      if (!(n >= 1 && n <= MAX_STEPS_PER_REQUEST)) {
        return fail(req.id, 'input', new Error(`step count (${req.n}) must be in [1, ${MAX_STEPS_PER_REQUEST}]`));
      }
      try {
        train(n);
      } catch (e) {
        return fail(req.id, 'internal', e);
      }
      return reply<'step'>({ type: 'stepped', replyTo: req.id, snapshot: snapshot() });
    }
    case 'play':
      intervalMs = Math.max(16, Math.min(1000, req.intervalMs ?? 50));
      reply<'play'>({ type: 'playing', replyTo: req.id });
      if (!playing) {
        playing = true;
        rate = [];
        lastPost = 0;
        yieldThen(loop);
      }
      return;
    case 'pause':
      playing = false;
      return reply<'pause'>({ type: 'paused', replyTo: req.id, snapshot: snapshot() });
    case 'ablate':
      try {
        const report = ablate(req.ablation);
        const snap = snapshot();
        const bufs = [report.intactStats, report.ablatedStats].flatMap((st) => [st.entropy.buffer, st.maxWeight.buffer, st.answerMass.buffer]);
        post({ type: 'ablated', replyTo: req.id, report, snapshot: snap }, [...(bufs as ArrayBuffer[]), ...snapshotTransfer(snap)]);
      } catch (e) {
        fail(req.id, 'input', e);
      }
      return;
    case 'timeline': {
      const entries = timeline.entries.filter((e) => e.step > req.since);
      const copies = entries.map((e) => ({ ...e, ids: e.ids.slice(), weights: e.weights.slice(), entropy: e.entropy.slice(), answerMass: e.answerMass.slice() }));
      const tl: Timeline = { steps: timeline.entries.map((e) => e.step), entries: copies, every: timeline.every, capacity: timeline.capacity, bytes: timelineBytes(timeline.entries) };
      const bufs = copies.flatMap((e) => [e.ids.buffer, e.weights.buffer, e.entropy.buffer, e.answerMass.buffer]);
      post({ type: 'timelineDone', replyTo: req.id, timeline: tl }, bufs as ArrayBuffer[]);
      return;
    }
    case 'rowBackward':
      try {
        const report = rowBackward(req.head, req.query, req.target);
        const r = report.row;
        const bufs = [r.q, r.scores, r.weights, r.out, r.dOut, r.dWeights, r.dScores, r.dQ, r.k.data, r.v.data, r.dK.data, r.dV.data, report.ids].map((a) => a.buffer);
        post({ type: 'rowBackwardDone', replyTo: req.id, report }, bufs as ArrayBuffer[]);
      } catch (e) {
        fail(req.id, 'input', e);
      }
      return;
    case 'selfTest':
      try {
        const report = await selfTest(req.reference);
        reply<'selfTest'>({ type: 'selfTestDone', replyTo: req.id, report });
      } catch (e) {
        fail(req.id, 'internal', e);
      }
      return;
    case 'sample':
      try {
        const ids = Int32Array.from(req.sample);
        const prev = sample;
        sample = ids;
        try {
          return reply<'sample'>({ type: 'sampled', replyTo: req.id, snapshot: snapshot() });
        } catch (e) {
          sample = prev;
          throw e;
        }
      } catch (e) {
        return fail(req.id, 'input', e);
      }
  }
}

self.onmessage = (ev: MessageEvent<Request>) => {
  void handle(ev.data);
};
