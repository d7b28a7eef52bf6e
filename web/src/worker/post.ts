// How the worker's messages leave it: every typed array in a message is transferred (the page owns
// what it receives, nothing is shared), and a failure becomes an `error` reply whose kind and key
// are the error's own `.kind` and `.key` (a CoreError, or a RequestFailure raised here) or else
// the request's own kind. No message text is ever read.
import type { ErrorKind, ErrorReply, WorkerMessage } from '../model/protocol';

/** The shape of DedicatedWorkerGlobalScope.postMessage (a test passes its own). */
export type Post = (msg: WorkerMessage, transfer: Transferable[]) => void;

/** An error the worker raises itself, with the kind (and key) the reply carries. */
export class RequestFailure extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly key?: string,
  ) {
    super(message);
  }
}

/** The buffers of every typed array in msg (plain objects and arrays walked), each once. */
export function transferList(msg: unknown): ArrayBuffer[] {
  const found = new Set<ArrayBuffer>();
  const walk = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) return;
    if (ArrayBuffer.isView(v)) {
      if (v.buffer instanceof ArrayBuffer) found.add(v.buffer);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x);
    } else {
      for (const x of Object.values(v)) walk(x);
    }
  };
  walk(msg);
  return [...found];
}

/** Posts msg, transferring its typed arrays. */
export function send(post: Post, msg: WorkerMessage): void {
  post(msg, transferList(msg));
}

/** The kind an error carries (a CoreError's or a RequestFailure's), or fallback. */
export function kindOf(err: unknown, fallback: ErrorKind): ErrorKind {
  const kind = err instanceof Error ? (err as { kind?: unknown }).kind : undefined;
  return typeof kind === 'string' ? (kind as ErrorKind) : fallback;
}

/** The key an error names, if any. */
export function keyOf(err: unknown): string | undefined {
  const key = err instanceof Error ? (err as { key?: unknown }).key : undefined;
  return typeof key === 'string' ? key : undefined;
}

/** The text of any thrown value. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The error reply to request replyTo for err (fallback: the request's own kind). */
export function errorReply(replyTo: number, fallback: ErrorKind, err: unknown): ErrorReply {
  return { type: 'error', replyTo, kind: kindOf(err, fallback), message: messageOf(err), key: keyOf(err) };
}

/** Runs f; an error without a kind of its own leaves with `kind` (a step that has its own kind,
 * within a request of another). */
export function withKind<T>(kind: ErrorKind, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof Error && !isTrap(e) && (e as { kind?: unknown }).kind === undefined) {
      throw new RequestFailure(kind, e.message, keyOf(e));
    }
    throw e;
  }
}

/** A wasm trap (abort, out of memory) leaves the module unusable: rethrown outside the request,
 * it reaches the page's worker.onerror as a crash (Restart). */
export function isTrap(err: unknown): boolean {
  return typeof WebAssembly !== 'undefined' && err instanceof WebAssembly.RuntimeError;
}

/** Rethrows err outside the current call, so that it reaches the worker's onerror: the page
 * shows a crash and Restart (for a wasm trap). */
export function rethrowLater(err: unknown): void {
  setTimeout(() => {
    throw err;
  });
}
