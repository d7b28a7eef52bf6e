// What the training view hands each learning panel (ablation, timeline, backward, self-test).
import type { Store } from '../store';

export interface PanelOptions {
  /** The page asked for reduced motion: slower live updates, no animation. */
  reducedMotion: boolean;
  /** Settles after the first heatmap is drawn (or shortly after the first snapshot when the
   * heatmaps are not shown): a panel talks to the worker only from then on. */
  started: Promise<void>;
  /** The page's state (the ablation panel keeps its settings there, and so in the URL). */
  store: Store;
}

/** Gives the training view's placeholder section its attributes and content; returns it. */
export function fillPanel(slot: HTMLElement, attrs: Record<string, string>, ...children: (Node | string | null | undefined)[]): HTMLElement {
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') slot.className = v;
    else slot.setAttribute(k, v);
  }
  slot.replaceChildren(...children.filter((c): c is Node | string => c != null));
  return slot;
}
