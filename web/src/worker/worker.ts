/// <reference lib="webworker" />
// The training worker: it loads the wasm core (init), then answers the requests of model/protocol.ts
// with one Session (worker/session.ts), through the handler table (worker/handlers.ts). While
// playing, the session trains in ~15 ms chunks, one per turn of the event loop, so requests are
// answered in between. The session is the only state here.
import type { Request } from '../model/protocol';
import { detectSimd, instantiateCore } from '../core/load-core.js';
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

self.onmessage = (ev: MessageEvent<Request>) => {
  const req = ev.data;
  if (req.type === 'init') {
    void respond(
      post,
      req,
      async () => {
        const simd = !(req.forceScalar ?? false) && detectSimd();
        const core = await instantiateCore(simd ? req.core.simd : req.core.scalar);
        session?.dispose();
        session = new Session(core, post, { defer: channelDefer() });
        return { type: 'ready', replyTo: req.id, simd };
      },
      rethrowLater,
    );
  } else if (!session) {
    send(post, errorReply(req.id, 'state', new Error('the core is not loaded yet')));
  } else {
    void handle(session, post, req);
  }
};
