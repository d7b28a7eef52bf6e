// Entry of embed.html: one <attention-playground> filling the frame, configured by the hash
// (the page's state format, plus hide, autoplay, solved-at, height and origin), and driven by the
// parent window through postMessage (messages.ts). Only the parent may command it, only from an
// allowed origin; its events go to the parent with an explicit targetOrigin, never '*'.
import './embed.css';
import type { State } from '../settings/settings';
import { hashParams, paramsByKey } from '../settings/state';
import { ELEMENT_ATTRIBUTES } from './attributes';
import { defineAttentionPlayground } from './element';
import { EVENT_TYPES, MESSAGE_SOURCE, parseCommand, parseOrigins, type Command } from './messages';

defineAttentionPlayground();

const params = hashParams(location.hash);
const parentWindow = window.parent !== window ? window.parent : null;
const { origins, rejected } = parseOrigins(params.get('origin'), location.origin);

const warned = new Set<string>();
/** Logs one warning per kind of ignored message, so a chatty parent cannot flood the console. */
function warnOnce(kind: string, message: string): void {
  if (warned.has(kind)) return;
  warned.add(kind);
  console.warn(`attention-playground embed: ${message} (logged once; later ones are ignored silently)`);
}
if (rejected.length > 0) warnOnce('origin-param', `origin= entries that are not http(s) origins were dropped: ${rejected.map((r) => JSON.stringify(r)).join(', ')}`);

/**
 * The parent's origin, when the browser tells (location.ancestorOrigins, else the referrer); an
 * accepted message from the parent settles it. Events go only to an allowed parent origin: a
 * targetOrigin that does not match the parent would be refused by the browser with a console error.
 */
function parentOriginHint(): string | null {
  const ancestors = (location as Location & { ancestorOrigins?: DOMStringList }).ancestorOrigins;
  if (ancestors && ancestors.length > 0) return ancestors[0];
  try {
    return document.referrer ? new URL(document.referrer).origin : null;
  } catch {
    return null;
  }
}
let target: string | null = (() => {
  const hint = parentOriginHint();
  if (hint !== null) return origins.includes(hint) ? hint : null;
  return origins.length === 1 ? origins[0] : null;
})();
if (parentWindow && target === null) {
  warnOnce('target', `not sending events: the parent page's origin${parentOriginHint() ? ` ${JSON.stringify(parentOriginHint())}` : ''} is not among the allowed origins (${origins.join(', ')}); pass origin=<parent origin> in the hash`);
}

/** Posts an event to the parent, with the parent's (allowed) origin as targetOrigin, never '*'. */
function post(type: (typeof EVENT_TYPES)[number], detail: unknown): void {
  if (!parentWindow || target === null) return;
  parentWindow.postMessage({ source: MESSAGE_SOURCE, type, detail }, target);
}

const el = document.createElement('attention-playground');
for (const type of EVENT_TYPES) el.addEventListener(type, (e) => post(type, (e as CustomEvent).detail));
// The element's own attributes, then the settings under their hash keys,
// checked like the element's `state`.
for (const name of ELEMENT_ATTRIBUTES) {
  const v = params.get(name);
  if (v !== null) el.setAttribute(name, v);
}
const { raw } = paramsByKey(params);
if (Object.keys(raw).length > 0) el.state = raw as unknown as Partial<State>;
document.body.append(el);

function run(c: Command): void {
  switch (c.type) {
    case 'play':
      void el.play();
      return;
    case 'pause':
      void el.pause();
      return;
    case 'reset':
      void el.reset();
      return;
    case 'step':
      void el.step(c.n);
      return;
    case 'configure':
      for (const [name, value] of Object.entries(c.config)) {
        if (value === null) el.removeAttribute(name);
        else el.setAttribute(name, value);
      }
  }
}

window.addEventListener('message', (ev: MessageEvent) => {
  if (!parentWindow || ev.source !== parentWindow) {
    warnOnce('source', 'ignored a message that did not come from the parent window');
    return;
  }
  if (!origins.includes(ev.origin)) {
    warnOnce('origin', `ignored a message from ${JSON.stringify(ev.origin)}: not in the allowed origins (${origins.join(', ')}); pass origin=<your origin> in the hash`);
    return;
  }
  const parsed = parseCommand(ev.data);
  if (!parsed.ok) {
    warnOnce('malformed', `ignored a malformed message (${parsed.why})`);
    return;
  }
  target = ev.origin;
  run(parsed.command);
});
