// The worker's requests as a table, typed over model/protocol.ts: each request type maps to the Session
// call that answers it and the reply it names (ReplyFor), and to the error kind it reports when
// what failed carries no kind of its own. The panels' requests are one type, `call`, answered from
// the panel registry (panels/handlers.ts). One wrapper, respond(), turns a handler's result into
// the reply, or its error into an `error` reply, and transfers the reply's typed arrays.
import type { ErrorKind, ReplyFor, Request } from '../model/protocol';
import { PANEL_HANDLERS } from '../panels/handlers';
import { errorReply, isTrap, send, type Post } from './post';
import type { Session } from './session';

/** Every request but init, which makes the session (worker.ts). */
export type SessionRequest = Exclude<Request, { type: 'init' }>;
type RequestOf<K extends Request['type']> = Extract<Request, { type: K }>;

/** What answers request type K. */
export type Handler<K extends SessionRequest['type']> = (s: Session, req: RequestOf<K>) => ReplyFor[K] | Promise<ReplyFor[K]>;

/** The handler of every request type; `call` answers a panel's request through the Session. */
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
  importRun: (s, r) => ({ type: 'configured', replyTo: r.id, snapshot: s.importRun(r.run) }),
  call: async (s, r) => ({ type: 'answer', replyTo: r.id, output: await s.call(r.request, r.input) }),
};

/** The kind of an error that carries none (not from the core, not a RequestFailure), per request
 * type; a `call` reports its request's own (RequestDef.fallback). */
export const fallbackKind: { [K in Request['type']]: ErrorKind } = {
  init: 'internal',
  configure: 'config',
  useCorpus: 'input',
  reset: 'config',
  step: 'internal',
  play: 'internal',
  pause: 'internal',
  sample: 'input',
  importRun: 'input',
  call: 'input',
};

/** The fallback kind of req: its type's, or for a `call` its request's. */
function fallbackOf(req: { type: Request['type']; request?: unknown }): ErrorKind {
  if (req.type === 'call' && typeof req.request === 'string') return PANEL_HANDLERS.get(req.request)?.request.fallback ?? fallbackKind.call;
  return fallbackKind[req.type];
}

/**
 * Answers request req with what answer() returns, or with an error reply (its kind: the error's
 * own, else fallbackKind); a wasm trap also goes to crash. Resolves once the reply is posted.
 */
export async function respond<K extends Request['type']>(
  post: Post,
  req: { type: K; id: number; request?: unknown },
  answer: () => ReplyFor[K] | Promise<ReplyFor[K]>,
  crash: (err: unknown) => void,
): Promise<void> {
  let reply: ReplyFor[K];
  try {
    reply = await answer();
  } catch (e) {
    if (isTrap(e)) crash(e);
    send(post, errorReply(req.id, fallbackOf(req), e));
    return;
  }
  send(post, reply);
}

/** Answers one request with the session's handler for it. */
export function handle(s: Session, post: Post, req: SessionRequest): Promise<void> {
  return dispatch(req.type, req);
  function dispatch<K extends SessionRequest['type']>(type: K, r: RequestOf<K>): Promise<void> {
    const handler: Handler<K> = handlers[type];
    return respond(post, r, () => handler(s, r), (e) => s.reportTrap(e));
  }
}
