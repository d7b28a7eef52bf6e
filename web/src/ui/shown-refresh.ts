// What views 2 and 3 (web/src/views) share: their numbers come from the worker while the view is shown, and again
// when it is shown after a change. A hidden view asks for nothing, so the training view's first
// heatmap never waits behind it.
import type { State } from '../settings/settings';
import type { Store } from '../settings/store';

export interface ShownRefresh {
  /** Asks again now if the view is shown; otherwise marks it stale. */
  refresh(): Promise<void>;
  /** Whether the view is the one on screen. */
  shown(): boolean;
  /** A change that calls for a refresh of a view not yet drawn for the current settings: the
   * view became visible while stale. */
  cameIntoView(changed: ReadonlySet<keyof State>): boolean;
}

/** load(isLatest) asks the worker and draws; once a newer refresh has started, isLatest() is false
 * and the older reply (or its error) is dropped. A failure of the latest is shown in `problem`
 * (`describe` words it). */
export function shownRefresh(
  store: Store,
  view: State['view'],
  problem: HTMLElement,
  load: (isLatest: () => boolean) => Promise<void>,
  describe: (message: string) => string = (m) => m,
): ShownRefresh {
  let request = 0;
  let stale = true;
  const shown = () => store.state.view === view;
  async function refresh(): Promise<void> {
    stale = !shown();
    if (stale) return;
    const mine = ++request;
    const isLatest = () => mine === request;
    try {
      await load(isLatest);
    } catch (e) {
      if (!isLatest()) return;
      problem.textContent = describe(e instanceof Error ? e.message : String(e));
      problem.hidden = false;
    }
  }
  return { refresh, shown, cameIntoView: (changed) => changed.has('view') && shown() && stale };
}
