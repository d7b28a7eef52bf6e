// A key table with old names added, for the tests of alias resolution: no public name has changed
// yet, so the shipped table has none.
import { SETTING_LIST, type Setting } from '../../web/src/settings';

/** The table plus the old hash keys `zero` (headsOff) and `nheads`, and the attribute `n-heads`. */
export function withAliases(): Setting[] {
  return SETTING_LIST.map((s) =>
    s.key === 'headsOff'
      ? { ...s, aliases: { hash: ['zero'], attribute: [] } }
      : s.key === 'nHeads'
        ? { ...s, aliases: { hash: ['nheads'], attribute: ['n-heads'] } }
        : s,
  );
}
