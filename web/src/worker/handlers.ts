// The worker's requests as a table, typed over model/protocol.ts: each request type maps to the Session
// call that answers it and the reply it names (ReplyFor), and to the error kind it reports when
// what failed carries no kind of its own. One wrapper, respond(), turns a handler's result into
// the reply, or its error into an `error` reply, and transfers the reply's typed arrays.
import type { ErrorKind, ReplyFor, Request } from '../model/protocol';
import { errorReply, isTrap, send, type Post } from './post';
import type { Session } from './session';

/** Every request but init, which makes the session (worker.ts). */
export type SessionRequest = Exclude<Request, { type: 'init' }>;
type RequestOf<K extends Request['type']> = Extract<Request, { type: K }>;

/** What answers request type K. */
export type Handler<K extends SessionRequest['type']> = (s: Session, req: RequestOf<K>) => ReplyFor[K] | Promise<ReplyFor[K]>;

/** The handler of every request type. */
export const handlers: { [K in SessionRequest['type']]: Handler<K> } = {
  configure: (s, r) => ({ type: 'configured', replyTo: r.id, snapshot: s.configure(r.config, r.sample, r.ablation, r.corpus) }),
  useCorpus: (s, r) => ({ type: 'configured', replyTo: r.id, snapshot: s.useCorpus(r.corpus) }),
  reset: (s, r) => ({ type: 'configured', replyTo: r.id, snapshot: s.reset() }),
  step: (s, r) => ({ type: 'stepped', replyTo: r.id, snapshot: s.step(r.n) }),
  play: (s, r) => {
    s.play(r.intervalMs);
    return { type: 'playing', replyTo: r.id };
  },
  pause: (s, r) => ({ type: 'paused', replyTo: r.id, snapshot: s.pause() }),
  sample: (s, r) => ({ type: 'sampled', replyTo: r.id, snapshot: s.setSample(r.sample) }),
  selfAttention: (s, r) => ({ type: 'selfAttentionDone', replyTo: r.id, stages: s.selfAttention(r.input) }),
  transformerBlock: (s, r) => ({ type: 'transformerBlockDone', replyTo: r.id, stages: s.transformerBlock(r.input) }),
  scalingDemo: (s, r) => ({ type: 'scalingDemoDone', replyTo: r.id, demo: s.scalingDemo(r.dk, r.keys, r.seed) }),
  softmaxSteps: (s, r) => ({ type: 'softmaxStepsDone', replyTo: r.id, comparison: s.softmaxSteps(r.logits) }),
  exportWeights: (s, r) => ({ type: 'exported', replyTo: r.id, ...s.exportWeights() }),
  importRun: (s, r) => ({ type: 'configured', replyTo: r.id, snapshot: s.importRun(r.run) }),
  ablate: (s, r) => ({ type: 'ablated', replyTo: r.id, ...s.ablate(r.ablation) }),
  timeline: (s, r) => ({ type: 'timelineDone', replyTo: r.id, timeline: s.timeline(r.since) }),
  rowBackward: (s, r) => ({ type: 'rowBackwardDone', replyTo: r.id, report: s.rowBackward(r.head, r.query, r.target) }),
  selfTest: async (s, r) => ({ type: 'selfTestDone', replyTo: r.id, report: await s.selfTest(r.reference) }),
  headScores: (s, r) => ({ type: 'headScoresDone', replyTo: r.id, report: s.headScores() }),
  predictions: (s, r) => ({ type: 'predictionsDone', replyTo: r.id, report: s.predictions() }),
  lengths: (s, r) => ({ type: 'lengthsDone', replyTo: r.id, report: s.lengths(r.lengths, r.batches) }),
  comparisonStart: (s, r) => {
    s.comparisonStart(r.config);
    return { type: 'comparisonStarted', replyTo: r.id };
  },
  comparisonStep: (s, r) => ({ type: 'comparisonStepped', replyTo: r.id, ...s.comparisonStep(r.n) }),
  comparisonLengths: (s, r) => ({ type: 'comparisonLengthsDone', replyTo: r.id, report: s.comparisonLengths(r.lengths, r.batches) }),
  comparisonEnd: (s, r) => {
    s.comparisonEnd();
    return { type: 'comparisonEnded', replyTo: r.id };
  },
  generateStart: (s, r) => ({ type: 'generateStarted', replyTo: r.id, started: s.generateStart(r.spec) }),
  generateNext: (s, r) => ({ type: 'generateChunk', replyTo: r.id, chunk: s.generateNext(r.n) }),
  generateEnd: (s, r) => {
    s.generateEnd();
    return { type: 'generateEnded', replyTo: r.id };
  },
  textSample: (s, r) => ({ type: 'textSampled', replyTo: r.id, sample: s.textSample(r.spec) }),
  cacheSpeed: (s, r) => ({ type: 'cacheSpeedDone', replyTo: r.id, speed: s.cacheSpeed(r.prompt, r.tokens) }),
  inspect: (s, r) => ({ type: 'inspectDone', replyTo: r.id, report: s.inspect(r.corrupted, r.change) }),
};

/** The kind of an error that carries none (not from the core, not a RequestFailure), per request. */
export const fallbackKind: { [K in Request['type']]: ErrorKind } = {
  init: 'internal',
  configure: 'config',
  useCorpus: 'input',
  reset: 'config',
  step: 'internal',
  play: 'internal',
  pause: 'internal',
  sample: 'input',
  selfAttention: 'input',
  transformerBlock: 'config',
  scalingDemo: 'input',
  softmaxSteps: 'input',
  exportWeights: 'internal',
  importRun: 'input',
  ablate: 'input',
  timeline: 'internal',
  rowBackward: 'input',
  selfTest: 'internal',
  headScores: 'internal',
  predictions: 'internal',
  lengths: 'input',
  comparisonStart: 'config',
  comparisonStep: 'internal',
  comparisonLengths: 'input',
  comparisonEnd: 'internal',
  generateStart: 'input',
  generateNext: 'input',
  generateEnd: 'internal',
  textSample: 'input',
  cacheSpeed: 'input',
  inspect: 'input',
};

/**
 * Answers request req with what answer() returns, or with an error reply (its kind: the error's
 * own, else fallbackKind); a wasm trap also goes to crash. Resolves once the reply is posted.
 */
export async function respond<K extends Request['type']>(
  post: Post,
  req: { type: K; id: number },
  answer: () => ReplyFor[K] | Promise<ReplyFor[K]>,
  crash: (err: unknown) => void,
): Promise<void> {
  let reply: ReplyFor[K];
  try {
    reply = await answer();
  } catch (e) {
    if (isTrap(e)) crash(e);
    send(post, errorReply(req.id, fallbackKind[req.type], e));
    return;
  }
  send(post, reply);
}

/** Answers one request with the session's handler for it. */
export function handle(s: Session, post: Post, req: SessionRequest): Promise<void> {
  return dispatch(req.type, req.id, req);
  function dispatch<K extends SessionRequest['type']>(type: K, id: number, r: RequestOf<K>): Promise<void> {
    const handler: Handler<K> = handlers[type];
    return respond(post, { type, id }, () => handler(s, r), (e) => s.reportTrap(e));
  }
}
