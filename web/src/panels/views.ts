// The page's half of the panel registry: every panel's view, found at its panel's place
// (panels/<name>/view.ts, which exports `mount`), by the panel's name. One chunk, loaded by the
// training view once the first heatmap is drawn, so the panels' code is not on the page's
// critical path; the worker's handlers are never part of it.
import type { MountPanel } from '../ui/panel';
import { PANELS, type PanelId } from './registry';

const modules = import.meta.glob<{ mount: MountPanel }>('./*/view.ts', { eager: true });

/** The mount function of each registered panel; throws when a line of the registry has no view. */
export function viewsOf(found: Record<string, { mount: MountPanel }>): Record<PanelId, MountPanel> {
  const views = {} as Record<PanelId, MountPanel>;
  for (const { name } of PANELS) {
    const m = found[`./${name}/view.ts`];
    if (!m) throw new Error(`the panel ${name} has no view: web/src/panels/${name}/view.ts is missing`);
    views[name] = m.mount;
  }
  return views;
}

/** Every panel's mount function, by name. */
export const VIEWS = viewsOf(modules);
