// The page: a header with the three view tabs, a banner for corrected URL values, and both views.
// Builds into any root element (document body today, a shadow root for the embeddable element).
import type { Assets } from '../client/assets';
import { Controller, RequestError, WorkerClient } from '../client/controller';
import type { Correction, State } from '../settings/settings';
import type { Store } from '../settings/store';
import { mountBlockView } from '../views/block/view';
import { h, uniqueId } from './dom';
import { mountLessonView } from '../views/lesson/view';
import { Parts, type PartGroup } from './parts';
import { mountTrainView } from './train-view';

/** A mounted page. */
export interface App {
  controller: Controller;
  /** Settles once the core is loaded and the first model built; never rejects (ok false: the
   * worker did not start, kind 'worker', or the core did not load, kind 'load'). */
  ready: Promise<{ ok: true; simd: boolean } | { ok: false; message: string; kind: 'worker' | 'load' }>;
  /** Shows what validation corrected (from a URL or attributes); empty hides the banner. */
  showCorrections(c: Correction[]): void;
  /** Redraws the canvases with the current colours (after a theme change). */
  restyle(): void;
  /** Leaves out the parts of these groups (and only these): an embedding's `hide`. */
  setHidden(groups: Iterable<PartGroup>): void;
  destroy(): void;
}

const TABS: { view: State['view']; label: string }[] = [
  { view: 'train', label: 'Multi-head attention, trained' },
  { view: 'lesson', label: 'Self-attention from scratch' },
  { view: 'block', label: 'The transformer block, step by step' },
];

/** Mounts the page into root; assets are the worker's and the core's files; the parts of the
 * `hidden` groups are left out. */
export function mountApp(root: HTMLElement, store: Store, opts: { assets: Assets; force?: 'simd' | 'scalar'; maxThreads?: number; hidden?: Iterable<PartGroup> }): App {
  const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)').matches;
  const client = new WorkerClient(opts.assets, opts.force, opts.maxThreads);
  const ctl = new Controller(client, store);
  if (reducedMotion) ctl.setProgressInterval(500);
  // Start the worker (and so the wasm download and compile) before building the page, so both
  // happen at once.
  const started = ctl.start();
  const parts = new Parts(opts.hidden);

  const bannerList = h('ul');
  const bannerClose = h('button', { type: 'button', class: 'link', text: 'Dismiss' });
  const banner = h('div', { class: 'banner', role: 'alert', hidden: true }, h('p', { text: 'Some values in the link were corrected:' }), bannerList, bannerClose);
  bannerClose.addEventListener('click', () => (banner.hidden = true));

  const tablist = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Views' });
  const panels = new Map<State['view'], HTMLElement>();
  const tabs = new Map<State['view'], HTMLButtonElement>();
  for (const t of TABS) {
    const tabId = uniqueId(`tab-${t.view}`);
    const panelId = uniqueId(`panel-${t.view}`);
    const tab = h('button', { type: 'button', role: 'tab', id: tabId, 'aria-controls': panelId, 'data-view': t.view, text: t.label });
    tab.addEventListener('click', () => store.set({ view: t.view }));
    tab.addEventListener('keydown', (ev) => {
      if (ev.key !== 'ArrowLeft' && ev.key !== 'ArrowRight') return;
      const i = TABS.findIndex((x) => x.view === t.view);
      const next = TABS[(i + (ev.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length].view;
      store.set({ view: next });
      tabs.get(next)!.focus();
    });
    tabs.set(t.view, tab);
    tablist.append(tab);
    panels.set(t.view, h('section', { class: `view view-${t.view}`, role: 'tabpanel', id: panelId, 'aria-labelledby': tabId }));
  }

  const loading = h('p', { class: 'loading', role: 'status', text: 'Loading the attention core…' });
  root.append(
    parts.place(h('header', { class: 'top' }, h('h1', { text: 'Attention Playground' }), tablist), 'header'),
    banner,
    parts.place(loading, 'status'),
    ...panels.values(),
  );

  // Canvases (heatmaps, charts) take their colours when drawn: a change of theme redraws them.
  const restylers = new Set<() => void>();
  const onRestyle = (f: () => void) => {
    restylers.add(f);
    return () => restylers.delete(f);
  };
  const restyle = () => restylers.forEach((f) => f());
  const scheme = matchMedia('(prefers-color-scheme: dark)');
  scheme.addEventListener('change', restyle);

  const train = mountTrainView(panels.get('train')!, store, ctl, { reducedMotion, onRestyle, parts });
  const lesson = mountLessonView(panels.get('lesson')!, store, ctl, parts);
  const block = mountBlockView(panels.get('block')!, store, ctl, parts);

  function showView(v: State['view']): void {
    for (const [view, panel] of panels) {
      panel.hidden = view !== v;
      const tab = tabs.get(view)!;
      tab.setAttribute('aria-selected', String(view === v));
      tab.tabIndex = view === v ? 0 : -1;
    }
  }
  const unsub = store.subscribe((s, changed) => {
    if (changed.has('view')) showView(s.view);
  });
  showView(store.state.view);

  const ready: App['ready'] = (async () => {
    try {
      await started;
      loading.textContent = `Core loaded (${coreBuildName(ctl.simd, ctl.threads, ctl.relaxed)}).`;
      loading.classList.add('done');
      await Promise.all([ctl.configure(), lesson.refresh(), block.refresh()]);
      return { ok: true as const, simd: ctl.simd };
    } catch (e) {
      const worker = e instanceof RequestError && e.kind === 'worker';
      const message = worker ? e.message : `Could not load the attention core: ${e instanceof Error ? e.message : String(e)}`;
      loading.textContent = message;
      loading.classList.add('error');
      return { ok: false as const, message, kind: worker ? ('worker' as const) : ('load' as const) };
    }
  })();

  return {
    controller: ctl,
    ready,
    showCorrections(c: Correction[]) {
      bannerList.replaceChildren(...c.map((x) => h('li', { text: x.message })));
      banner.hidden = c.length === 0;
    },
    restyle,
    setHidden: (groups) => parts.setHidden(groups),
    destroy() {
      unsub();
      scheme.removeEventListener('change', restyle);
      train.destroy();
      lesson.destroy();
      block.destroy();
      ctl.destroy();
      client.stop();
      root.replaceChildren();
    },
  };
}

/** The status line's name of the build that runs and its threads, e.g. "WebAssembly SIMD build, 1
 * thread", "WebAssembly relaxed SIMD build, 1 thread" or "WebAssembly SIMD + threads build, 2
 * threads". */
export function coreBuildName(simd: boolean, threads: number, relaxed = false): string {
  const build = threads > 1 ? 'WebAssembly SIMD + threads' : relaxed ? 'WebAssembly relaxed SIMD' : simd ? 'WebAssembly SIMD' : 'scalar WebAssembly';
  return `${build} build, ${threads} thread${threads === 1 ? '' : 's'}`;
}

/** The page's `?core=` query: `simd` (the plain SIMD build where the relaxed-SIMD one would run)
 * or `scalar` forces that build; absent, the best build for this engine loads; anything else is
 * ignored with one correction on the banner. */
export function coreQuery(value: string | null): { force?: 'simd' | 'scalar'; corrections: Correction[] } {
  if (value === null) return { corrections: [] };
  if (value === 'simd' || value === 'scalar') return { force: value, corrections: [] };
  const shown = value.length > 24 ? `${value.slice(0, 24)}…` : value;
  return { corrections: [{ key: null, message: `?core=${shown} names no build of the core (use simd or scalar), so the best build for this browser loads.` }] };
}
