// The training view's panel picker: the loss and the heatmaps come first, and under them one panel
// at a time (or all of them, stacked), chosen by a row of tabs whose choice is the `panel` setting
// (hash `panel=`, attribute `panel`). A panel an embedding hides (ui/parts.ts) has no tab; when
// the chosen one is not there, the first one that is shows. A panel that cannot work on the current
// model (settings/panel-needs.ts) is marked in its tab, and when chosen says what to set, with a button
// that sets it.
import type { PanelName, State } from '../settings/settings';
import type { Store } from '../settings/store';
import { panelNeeds } from '../settings/panel-needs';
import { h, uniqueId } from './dom';
import type { PartGroup, Parts } from './parts';

/** One panel of the picker: its tab's words, its section and the part group that holds it. */
export interface PickerEntry {
  name: Exclude<PanelName, 'all'>;
  label: string;
  section: HTMLElement;
  group: PartGroup;
}

/** The tab row and its cleanup; `onShow` runs after a change of what is shown. */
export function mountPanelPicker(store: Store, parts: Parts, entries: PickerEntry[], onShow: () => void): { element: HTMLElement; destroy(): void } {
  const tablist = h('div', { class: 'panel-picker', role: 'tablist', 'aria-label': 'Panels' });
  const hint = h('p', {
    class: 'hint picker-hint',
    text: 'Each panel looks at the model you are training from another side; pick one, or "All panels" to stack them. Your choice goes in the link.',
  });
  // The chosen panel's need: what to set, and a button that sets it.
  const needsText = h('span', {});
  const needsFix = h('button', { type: 'button', class: 'needs-fix', text: 'Set it' });
  const needsNote = h('p', { class: 'needs-note', role: 'status', hidden: true }, needsText, ' ', needsFix);
  let fix: Partial<State> = {};
  needsFix.addEventListener('click', () => store.set(fix));
  const tabs = new Map<PanelName, HTMLButtonElement>();
  const all: { name: 'all'; label: string } = { name: 'all', label: 'All panels' };
  for (const e of [...entries, all]) {
    const tab = h('button', { type: 'button', role: 'tab', id: uniqueId(`panel-tab-${e.name}`), 'data-panel': e.name, text: e.label });
    if ('section' in e) {
      if (!e.section.id) e.section.id = uniqueId(`panel-${e.name}`);
      tab.setAttribute('aria-controls', e.section.id);
    }
    tab.addEventListener('click', () => store.set({ panel: e.name }));
    tab.addEventListener('keydown', (ev) => {
      if (ev.key !== 'ArrowLeft' && ev.key !== 'ArrowRight') return;
      const shown = [...tabs.values()].filter((t) => !t.hidden);
      const i = shown.indexOf(tab);
      const next = shown[(i + (ev.key === 'ArrowRight' ? 1 : shown.length - 1)) % shown.length];
      store.set({ panel: next.dataset.panel as PanelName });
      next.focus();
    });
    tabs.set(e.name, tab);
    tablist.append(tab);
  }

  function show(): void {
    const present = entries.filter((e) => !parts.isHidden(e.group));
    const wanted = store.state.panel;
    const current: PanelName = wanted === 'all' || present.some((e) => e.name === wanted) ? wanted : (present[0]?.name ?? 'all');
    for (const e of entries) {
      const tab = tabs.get(e.name)!;
      tab.hidden = parts.isHidden(e.group);
      e.section.hidden = current !== 'all' && current !== e.name;
      const need = panelNeeds(e.name, store.state);
      tab.classList.toggle('needs', !!need);
      if (need) tab.title = need.message;
      else tab.removeAttribute('title');
      tab.dataset.needs = need ? need.message : '';
    }
    const need = current === 'all' ? null : panelNeeds(current, store.state);
    needsNote.hidden = !need;
    if (need) {
      needsText.textContent = need.message;
      needsFix.textContent = need.action;
      fix = need.fix;
    }
    tabs.get('all')!.hidden = present.length < 2;
    for (const [name, tab] of tabs) {
      tab.setAttribute('aria-selected', String(name === current));
      tab.tabIndex = name === current ? 0 : -1;
    }
    element.hidden = present.length < 2;
    onShow();
  }

  const element = h('div', { class: 'picker' }, tablist, hint, needsNote);
  const unsub = [store.subscribe((_s, changed) => (changed.has('panel') || changed.has('task') || changed.has('nLayers')) && show()), parts.onChange(show)];
  show();
  return { element, destroy: () => unsub.forEach((f) => f()) };
}
