// The postMessage API of embed.html: the commands a parent page may send, their schema check,
// and the origin allowlist. Pure functions, so the rules are in one place.
import { MAX_STEPS_PER_REQUEST } from '../model/protocol';
import { ATTRIBUTES } from './attributes';

/** Tag of every message embed.html posts, and optional tag of the commands it accepts. */
export const MESSAGE_SOURCE = 'attention-playground';

/** A command from the parent page. */
export type Command =
  | { type: 'play' }
  | { type: 'pause' }
  | { type: 'reset' }
  | { type: 'step'; n: number }
  | { type: 'configure'; config: Record<string, string | null> };

/** Event names posted to the parent, mirroring the element's. */
export const EVENT_TYPES = ['ready', 'step', 'solved', 'error'] as const;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/**
 * Checks a message against the command schema. Returns the command, or why it is malformed.
 * Schema: {type: 'play'|'pause'|'reset'} | {type: 'step', n?: integer 1..1000} |
 * {type: 'configure', config: {<attribute>: string|number|boolean|null}}, plus an optional
 * source: 'attention-playground'; no other keys.
 */
export function parseCommand(data: unknown): { ok: true; command: Command } | { ok: false; why: string } {
  if (!isPlainObject(data)) return { ok: false, why: 'not a plain object' };
  const { type, source, ...rest } = data;
  if (source !== undefined && source !== MESSAGE_SOURCE) return { ok: false, why: `source must be "${MESSAGE_SOURCE}"` };
  const keys = Object.keys(rest);
  const only = (allowed: string[]) => keys.every((k) => allowed.includes(k));
  switch (type) {
    case 'play':
    case 'pause':
    case 'reset':
      return only([]) ? { ok: true, command: { type } } : { ok: false, why: `${type} takes no fields` };
    case 'step': {
      if (!only(['n'])) return { ok: false, why: 'step takes only n' };
      const n = rest.n ?? 1;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_STEPS_PER_REQUEST) {
        return { ok: false, why: `step: n must be a whole number in [1, ${MAX_STEPS_PER_REQUEST}]` };
      }
      return { ok: true, command: { type: 'step', n } };
    }
    case 'configure': {
      if (!only(['config']) || !isPlainObject(rest.config)) return { ok: false, why: 'configure takes config: {attribute: value}' };
      const config: Record<string, string | null> = {};
      const entries = Object.entries(rest.config);
      if (entries.length > ATTRIBUTES.length) return { ok: false, why: 'configure: too many keys' };
      for (const [k, v] of entries) {
        if (!ATTRIBUTES.includes(k)) return { ok: false, why: `configure: unknown attribute ${JSON.stringify(k.slice(0, 24))}` };
        if (v === null) config[k] = null;
        else if (typeof v === 'string' && v.length <= 1024) config[k] = v;
        else if (typeof v === 'number' && Number.isFinite(v)) config[k] = String(v);
        else if (typeof v === 'boolean') config[k] = v ? 'true' : 'false';
        else return { ok: false, why: `configure: ${k} must be a string, number, boolean or null` };
      }
      return { ok: true, command: { type: 'configure', config } };
    }
    default:
      return { ok: false, why: 'type must be one of play, pause, step, reset, configure' };
  }
}

/**
 * The allowlist from the hash's origin= (comma separated, e.g. "https://course.example"). Entries
 * that are not plain http(s) origins are dropped and reported. Empty: same origin only.
 */
export function parseOrigins(raw: string | null, self: string): { origins: string[]; rejected: string[] } {
  const origins: string[] = [];
  const rejected: string[] = [];
  for (const part of (raw ?? '').slice(0, 2048).split(',').slice(0, 16)) {
    const text = part.trim();
    if (text === '') continue;
    let origin = '';
    try {
      const u = new URL(text);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.origin === text.replace(/\/$/, '')) origin = u.origin;
    } catch {
      origin = '';
    }
    if (origin) {
      if (!origins.includes(origin)) origins.push(origin);
    } else rejected.push(text.slice(0, 60));
  }
  if (origins.length === 0) origins.push(self);
  return { origins, rejected };
}
