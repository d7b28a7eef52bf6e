// The worker's half of the panel registry: the handlers of every panel's requests, each found at
// its panel's place (panels/<name>/handler.ts, which exports them as `handlers`), and those of the
// lesson and block views' requests (views/<name>/handler.ts), as one table by request name. The
// Session answers a `call` from it; a name declared twice is an error at load.
import type { RequestHandler } from '../worker/context';

/** Every handler.ts under panels/ and views/, bundled into the worker (never into the page). */
const modules = {
  ...import.meta.glob<{ handlers: readonly RequestHandler[] }>('./*/handler.ts', { eager: true }),
  ...import.meta.glob<{ handlers: readonly RequestHandler[] }>('../views/*/handler.ts', { eager: true }),
};

/** The table of handlers, keyed by request name; throws on a name declared twice. */
export function handlerTable(handlers: readonly RequestHandler[]): ReadonlyMap<string, RequestHandler> {
  const table = new Map<string, RequestHandler>();
  for (const h of handlers) {
    if (table.has(h.request.name)) throw new Error(`two handlers answer the request ${h.request.name}`);
    table.set(h.request.name, h);
  }
  return table;
}

/** The handler of every panel's (and view's) request, by name. */
export const PANEL_HANDLERS = handlerTable(Object.values(modules).flatMap((m) => m.handlers));
