// What the training view hands each panel (web/src/panels/<name>/view.ts), and how a panel fills
// the section the training view placed for it.
import type { Controller } from '../client/controller';
import type { Store } from '../settings/store';

export interface PanelOptions {
  /** The page asked for reduced motion: slower live updates, no animation. */
  reducedMotion: boolean;
  /** The page's state (the ablation panel keeps its settings there, and so in the URL). */
  store: Store;
  /** Calls f after the colours changed (theme), so canvases redraw; returns an unsubscribe. */
  onRestyle(f: () => void): () => void;
}

/** What a panel's view.ts exports as `mount`: fills slot (the panel's section, which carries its
 * class and aria-label) and returns the function that unmounts it. */
export type MountPanel = (slot: HTMLElement, ctl: Controller, opts: PanelOptions) => () => void;

/** Fills the training view's section for a panel (which carries its class and aria-label) with
 * the panel's own attributes and content; returns it. */
export function fillPanel(slot: HTMLElement, attrs: Record<string, string>, ...children: (Node | string | null | undefined)[]): HTMLElement {
  for (const [k, v] of Object.entries(attrs)) slot.setAttribute(k, v);
  slot.replaceChildren(...children.filter((c): c is Node | string => c != null));
  return slot;
}
