// A key table with more old names added, for the tests of alias resolution beyond the shipped
// table's (the renames): an old attribute, and a second old hash key for one setting.
import { SETTING_LIST, type Setting } from '../../web/src/settings/settings';

/** The table plus the old hash keys `zero` (headsOff, after its `off`) and `nheads`, and the
 * attribute `n-heads`. */
export function withAliases(): Setting[] {
  return SETTING_LIST.map((s) =>
    s.key === 'headsOff'
      ? { ...s, aliases: { hash: [...s.aliases.hash, 'zero'], attribute: [...s.aliases.attribute] } }
      : s.key === 'nHeads'
        ? { ...s, aliases: { hash: ['nheads'], attribute: ['n-heads'] } }
        : s,
  );
}
