// The attributes of <attention-playground>: their names (a public contract, see
// README.md, "Put it in a course site"), how each maps to the State, and the validation of the element-only ones
// (hide, height, solved-at, autoplay, theme). The settings' attributes come from the key table
// (settings/settings.ts), and their values are checked by it, exactly like the URL's.
import { checkField, DEFAULTS, quote, SETTING_LIST, SETTINGS, type Correction, type Setting, type State } from '../settings/settings';
import { fixConsistency } from '../settings/state';
import { PART_GROUPS, type PartGroup } from '../ui/parts';

/** Attribute name -> the State key it sets, for a table's attributes. */
export function attributeMap(table: readonly Setting[]): Readonly<Record<string, keyof State>> {
  return Object.fromEntries(table.flatMap((s) => (s.attribute === null ? [] : [[s.attribute, s.key]])));
}

/** Attributes that set a State key, with the key they set. */
export const CONFIG_ATTRIBUTES = attributeMap(SETTING_LIST);

/** An attribute that sets a State key. */
export type ConfigAttribute = string;

/** The attributes only the element has (no setting of the page). */
export const ELEMENT_ATTRIBUTES = ['autoplay', 'hide', 'height', 'solved-at', 'theme'] as const;

/** Every attribute, the one list the element watches. */
export const ATTRIBUTES = [...Object.keys(CONFIG_ATTRIBUTES), ...ELEMENT_ATTRIBUTES] as readonly string[];

/** The State key an attribute sets, if any. */
export function keyOfAttribute(name: string): keyof State | undefined {
  return Object.hasOwn(CONFIG_ATTRIBUTES, name) ? CONFIG_ATTRIBUTES[name] : undefined;
}

/** The control groups `hide` leaves out, with what each one is (the views place them: ui/parts.ts). */
export const HIDE_GROUPS = PART_GROUPS;
export type HideGroup = PartGroup;

/** The solved-at threshold when the attribute is absent. */
export const DEFAULT_SOLVED_AT = 0.1;
/** Bounds of the height attribute, CSS pixels. */
export const HEIGHT_RANGE = [160, 4000] as const;
/** Longest attribute value read (longer values are cut before parsing). */
const MAX_ATTRIBUTE_CHARS = 1024;

/** A problem with one attribute value, phrased with the attribute's name. */
export interface AttributeProblem {
  attribute: string;
  message: string;
}

/** Attribute name of a State key, if there is one. */
export function attributeOf(key: keyof State): string | undefined {
  return SETTINGS[key].attribute ?? undefined;
}

/** Rewrites a correction ("d_model: ...") to name the attribute ("d-model: ..."). */
export function problemOf(c: Correction, source: 'attribute' | 'state' = 'attribute'): AttributeProblem {
  const label = c.key === null ? 'null' : SETTINGS[c.key].label;
  const name = source === 'attribute' && c.key !== null ? (attributeOf(c.key) ?? `state.${String(c.key)}`) : `state.${String(c.key)}`;
  const why = c.message.startsWith(`${label}: `) ? c.message.slice(label.length + 2) : c.message;
  return { attribute: name, message: `${name}: ${why}` };
}

/**
 * The State for a set of config attributes (null = absent), starting from base; values checked and
 * clamped with the URL's rules, then made consistent (even d_model, heads dividing it...).
 */
export function stateFromAttributes(
  base: Readonly<State>,
  get: (name: ConfigAttribute) => string | null,
  table: readonly Setting[] = SETTING_LIST,
): { state: State; problems: AttributeProblem[] } {
  const state: State = { ...base };
  const corrections: Correction[] = [];
  for (const s of table) {
    if (s.attribute === null) continue;
    const raw = get(s.attribute);
    if (raw === null) continue;
    const key = s.key;
    // An on/off attribute present without a value (<… residual>) is on, as HTML's boolean attributes.
    const text = s.type === 'bool' && raw.trim() === '' ? '1' : raw.slice(0, MAX_ATTRIBUTE_CHARS);
    const { value, correction } = checkField(key, text);
    (state as unknown as Record<string, unknown>)[key] = value;
    if (correction) corrections.push(correction);
  }
  fixConsistency(state, corrections);
  return { state, problems: corrections.map((c) => problemOf(c)) };
}

/**
 * A patch of State keys (camelCase, as in settings/settings.ts) from script, e.g. `el.state = {seed: 7}`:
 * unknown keys are reported, values checked like the URL's. Returns the full next state.
 */
export function stateFromPatch(base: Readonly<State>, patch: unknown): { state: State; problems: AttributeProblem[] } {
  const state: State = { ...base };
  const problems: AttributeProblem[] = [];
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    return { state, problems: [{ attribute: 'state', message: 'state: expected an object of settings, e.g. {seed: 7}' }] };
  }
  const corrections: Correction[] = [];
  for (const [k, v] of Object.entries(patch).slice(0, 64)) {
    const f = Object.hasOwn(SETTINGS, k) ? SETTING_LIST.find((x) => x.key === k) : undefined;
    if (!f || !(typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) {
      problems.push({ attribute: 'state', message: `state: ${quote(k)} is not a setting with a string, number or boolean value; ignored` });
      continue;
    }
    const raw = typeof v === 'boolean' ? (v ? '1' : '0') : String(v).slice(0, MAX_ATTRIBUTE_CHARS);
    const { value, correction } = checkField(f.key, raw);
    (state as unknown as Record<string, unknown>)[f.key] = value;
    if (correction) corrections.push(correction);
  }
  fixConsistency(state, corrections);
  return { state, problems: [...problems, ...corrections.map((c) => problemOf(c, 'state'))] };
}

/** Parses `hide` ("run, model"): known group names; unknown ones are reported. */
export function parseHide(raw: string | null): { groups: Set<HideGroup>; problem?: AttributeProblem } {
  const groups = new Set<HideGroup>();
  if (raw === null) return { groups };
  const bad: string[] = [];
  for (const part of raw.slice(0, MAX_ATTRIBUTE_CHARS).split(/[\s,]+/)) {
    const name = part.trim().toLowerCase();
    if (name === '') continue;
    if (Object.hasOwn(HIDE_GROUPS, name)) groups.add(name as HideGroup);
    else if (bad.length < 3) bad.push(quote(part));
  }
  if (bad.length === 0) return { groups };
  return {
    groups,
    problem: { attribute: 'hide', message: `hide: ${bad.join(', ')} ${bad.length > 1 ? 'are not control groups' : 'is not a control group'} (known: ${Object.keys(HIDE_GROUPS).join(', ')}); ignored` },
  };
}

/** Parses `height`: CSS pixels ("480" or "480px") clamped to HEIGHT_RANGE; absent or "auto" = null. */
export function parseHeight(raw: string | null): { px: number | null; problem?: AttributeProblem } {
  if (raw === null) return { px: null };
  const text = raw.trim().toLowerCase();
  if (text === '' || text === 'auto') return { px: null };
  const m = /^(\d+(?:\.\d+)?)(px)?$/.exec(text.slice(0, 32));
  if (!m) return { px: null, problem: { attribute: 'height', message: `height: ${quote(raw)} is not a number of CSS pixels (e.g. 480) or auto; using auto` } };
  const n = Number(m[1]);
  const [lo, hi] = HEIGHT_RANGE;
  if (n < lo) return { px: lo, problem: { attribute: 'height', message: `height: ${n} is below the minimum ${lo}; using ${lo}` } };
  if (n > hi) return { px: hi, problem: { attribute: 'height', message: `height: ${n} is above the maximum ${hi}; using ${hi}` } };
  return { px: n };
}

/** Parses `solved-at`: the loss under which `solved` fires; absent = DEFAULT_SOLVED_AT; 0 = never. */
export function parseSolvedAt(raw: string | null): { value: number; problem?: AttributeProblem } {
  if (raw === null) return { value: DEFAULT_SOLVED_AT };
  const text = raw.trim();
  const n = text === '' ? NaN : Number(text.slice(0, 32));
  if (!Number.isFinite(n) || n < 0) {
    return { value: DEFAULT_SOLVED_AT, problem: { attribute: 'solved-at', message: `solved-at: ${quote(raw)} is not a loss >= 0; using ${DEFAULT_SOLVED_AT}` } };
  }
  return { value: n };
}

/** Parses `autoplay` as a boolean attribute (present = on), also accepting "false"/"0" as off. */
export function parseAutoplay(raw: string | null): { value: boolean; problem?: AttributeProblem } {
  if (raw === null) return { value: false };
  const text = raw.trim().toLowerCase();
  if (text === '' || text === 'true' || text === '1' || text === 'autoplay') return { value: true };
  if (text === 'false' || text === '0') return { value: false };
  return { value: false, problem: { attribute: 'autoplay', message: `autoplay: ${quote(raw)} is not true or false; autoplay is off` } };
}

/** The element's colour themes: auto follows the system's preference, light and dark fix it. */
export const THEMES = ['auto', 'light', 'dark'] as const;
export type Theme = (typeof THEMES)[number];

/** Parses `theme` (case-insensitive): auto, light or dark; absent or empty = auto. */
export function parseTheme(raw: string | null): { value: Theme; problem?: AttributeProblem } {
  const text = (raw ?? '').trim().toLowerCase();
  if (text === '') return { value: 'auto' };
  if ((THEMES as readonly string[]).includes(text)) return { value: text as Theme };
  return { value: 'auto', problem: { attribute: 'theme', message: `theme: ${quote(raw!)} is not auto, light or dark; using auto` } };
}

/** The State an element starts from before any attribute is read. */
export const ELEMENT_DEFAULTS: Readonly<State> = DEFAULTS;
