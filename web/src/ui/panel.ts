// What the training view hands each panel (web/src/panels/<name>/view.ts), and how a panel fills
// the section the training view placed for it.
import type { Controller } from '../client/controller';
import type { Store } from '../settings/store';
import { h } from './dom';
import type { PanelView } from './panel-model';

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

/** The words a panel's data-state takes once an answer is shown, or once a request failed. */
export interface AnswerStates {
  done: string;
  failed: string;
}

/**
 * The view's side of a panel model as most panels show it: on the page while the section is;
 * `data-state` 'loading', then states.done or states.failed (none when states is null); an answer
 * rendered, the problem box emptied and `data-refreshes` counting the answers; a failure's sentence
 * (why) in the problem box.
 */
export function answerView<T>(panel: HTMLElement, problem: HTMLElement, render: (answer: T) => void, why: (reason: string) => string, states: AnswerStates | null): PanelView<T> {
  let answers = 0;
  return {
    visible: () => panel.offsetParent !== null,
    loading: () => {
      if (states) panel.dataset.state = 'loading';
    },
    done: (answer) => {
      problem.textContent = '';
      problem.hidden = true;
      render(answer);
      if (states) panel.dataset.state = states.done;
      panel.dataset.refreshes = String(++answers);
    },
    failed: (reason) => {
      problem.textContent = why(reason);
      problem.hidden = false;
      if (states) panel.dataset.state = states.failed;
    },
  };
}

/** Follows the panel being shown again (a ResizeObserver: the picker, the other view, an
 * embedding's hide) so that model catches up then; returns the panel's unmount: the observer off,
 * the model destroyed, `also` run, the section emptied. */
export function mountModel(panel: HTMLElement, model: { shown(): void; destroy(): void }, also: () => void = () => {}): () => void {
  const ro = new ResizeObserver(() => model.shown());
  ro.observe(panel);
  return () => {
    ro.disconnect();
    model.destroy();
    also();
    panel.replaceChildren();
  };
}

/** Fills the training view's section for a panel (which carries its class and aria-label) with
 * the panel's own attributes, its heading and its content; returns it. */
export function fillPanel(slot: HTMLElement, attrs: Record<string, string>, heading: string, ...children: (Node | string | null | undefined)[]): HTMLElement {
  for (const [k, v] of Object.entries(attrs)) slot.setAttribute(k, v);
  slot.replaceChildren(h('div', { class: 'panel-head' }, h('h2', { text: heading })), ...children.filter((c): c is Node | string => c != null));
  return slot;
}
