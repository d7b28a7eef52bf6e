/// <reference lib="webworker" />
// The training worker: it loads the wasm core (init), then answers the requests of model/protocol.ts
// with one Session (worker/session.ts), through the handler table (worker/handlers.ts). While
// playing, the session trains in ~15 ms chunks, one per turn of the event loop, so requests are
// answered in between. The session is the only state here.
import type { Request } from '../model/protocol';
import type { AttentionCore } from '../core/attention-core';
import { instantiateCore, instantiateThreaded, pickBuild, threadsAvailable } from '../core/load-core.js';
import { handle, respond } from './handlers';
import { errorReply, rethrowLater, send, type Post } from './post';
import { Session } from './session';

declare const self: DedicatedWorkerGlobalScope;

const post: Post = (msg, transfer) => self.postMessage(msg, transfer);

/** A scheduler that runs f after the messages already queued, without setTimeout's 4 ms clamp
 * (the play loop's next chunk). */
function channelDefer(): (f: () => void) => void {
  const channel = new MessageChannel();
  const queue: Array<() => void> = [];
  channel.port1.onmessage = () => queue.shift()?.();
  return (f) => {
    queue.push(f);
    channel.port2.postMessage(null);
  };
}

let session: Session | null = null;

/** The core for an init request: the threads build where this worker is cross-origin isolated,
 * has more than one core and loads the build from its own origin (a pthread worker cannot start
 * from another), else the one-thread relaxed-SIMD build where the engine runs relaxed SIMD, else
 * the SIMD build (or the scalar one without SIMD); req.force caps the choice at the SIMD or the
 * scalar build. A threads build that fails to start falls back silently. */
async function loadCore(req: Extract<Request, { type: 'init' }>): Promise<{ core: AttentionCore; simd: boolean; relaxed: boolean; threads: number }> {
  const build = pickBuild(req.force);
  const simd = build !== 'scalar';
  const files = req.core.threads;
  const n = simd && files?.worker && new URL(files.worker).origin === self.location.origin ? Math.min(threadsAvailable(), req.maxThreads ?? Infinity) : 0;
  if (n > 1) {
    const core = await instantiateThreaded(files!, n);
    if (core) return { core, simd, relaxed: false, threads: n };
  }
  return { core: await instantiateCore(req.core[build]), simd, relaxed: build === 'relaxed', threads: 1 };
}

self.onmessage = (ev: MessageEvent<Request>) => {
  const req = ev.data;
  if (req.type === 'init') {
    void respond(
      post,
      req,
      async () => {
        const { core, simd, relaxed, threads } = await loadCore(req);
        session?.dispose();
        session = new Session(core, post, { defer: channelDefer() });
        return { type: 'ready', replyTo: req.id, simd, relaxed, threads };
      },
      rethrowLater,
    );
  } else if (!session) {
    send(post, errorReply(req.id, 'state', new Error('the core is not loaded yet')));
  } else {
    void handle(session, post, req);
  }
};
