// Small DOM helpers. Text is only ever set with textContent: nothing from a URL or an input is
// parsed as HTML.

/** Creates an element with attributes and children (strings become text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') el.className = String(v);
    else if (k === 'text') el.textContent = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c != null) el.append(c);
  return el;
}

/** A box that scrolls its wide content sideways. It is a focusable, named region, so a keyboard
 * can reach and scroll it (WCAG's scrollable-region-focusable). */
export function scrollBox(label: string, ...children: (Node | string | null | undefined)[]): HTMLDivElement {
  return h('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': label }, ...children);
}

let uid = 0;
/** A document-unique id with a readable prefix. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${++uid}`;
}

/** The sticky stage bar covers the top of whatever scrolls under it: its height, kept in the
 * view's --stage-nav-h, is the scroll margin of the stages (style.css), so a stage scrolled into
 * view, or a cell focused, lands below the bar. */
export function keepClearOfStageBar(stagesEl: HTMLElement, nav: HTMLElement): ResizeObserver | null {
  const view = stagesEl.parentElement;
  if (!view || typeof ResizeObserver === 'undefined') return null;
  const set = () => view.style.setProperty('--stage-nav-h', `${Math.ceil(nav.getBoundingClientRect().height)}px`);
  const ro = new ResizeObserver(set);
  ro.observe(nav);
  set();
  return ro;
}
