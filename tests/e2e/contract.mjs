// The public contract (tests/unit/public-contract.txt, held against the code by Vitest) for the
// browser tests: the settings with their hash keys and defaults, so that no test writes out the
// whole key list or URL again.
import { readFileSync } from 'node:fs';

const lines = readFileSync(new URL('../unit/public-contract.txt', import.meta.url), 'utf8').split('\n');

/** The config keys, in the core's order: JS name, URL hash key and default. */
export const CONFIG = lines.filter((l) => l.startsWith('config ')).map((l) => {
  const [, , js, , hash, , , value] = l.split(' ');
  return { js, hash, default: JSON.parse(value) };
});

/** The page's own settings, in the table's order (view first). */
const SETTINGS = lines.filter((l) => l.startsWith('setting ')).map((l) => {
  const [, js, , hash, , , ...value] = l.split(' ');
  return { js, hash, default: JSON.parse(value.join(' ')) };
});

/** Every setting in the order the page writes its hash: view, the config, then the rest. */
export const HASH_ORDER = [SETTINGS[0], ...CONFIG, ...SETTINGS.slice(1)];

/** The page's config: every key at its default, with over on top. */
export const configWith = (over = {}) => ({ ...Object.fromEntries(CONFIG.map((k) => [k.js, k.default])), ...over });

/** The training view's control values (as controlValues reads them: strings) for configWith(over). */
export const controlsWith = (over = {}) => Object.fromEntries(Object.entries(configWith(over)).map(([k, v]) => [k, String(v)]));

/** The canonical hash (without '#') the page writes for the defaults with over (by JS name) on top. */
export function hashWith(over = {}) {
  const params = new URLSearchParams();
  for (const s of HASH_ORDER) {
    const v = s.js in over ? over[s.js] : s.default;
    params.set(s.hash, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  return params.toString();
}
