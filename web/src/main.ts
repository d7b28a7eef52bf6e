// Entry of index.html: the state comes from the URL hash (validated; no hash: the Start here
// preset), is mirrored back to it on every change, and the app is mounted into #app.
import './style.css';
import { stateFromHash, stateToHash } from './settings/state';
import { presetHash, START_PRESET } from './settings/presets';
import { ASSETS } from './client/assets';
import { Store } from './settings/store';
import { coreQuery, mountApp } from './ui/app';

const root = document.getElementById('app')!;

if (typeof WebAssembly !== 'object') {
  root.textContent = 'This page needs WebAssembly, which this browser does not provide.';
} else {
  // A first visit (no hash) opens on the Start here preset; any hash, even `#view=train`, reads
  // against the key table's defaults, so every link keeps its meaning.
  const first = stateFromHash(location.hash.replace(/^#/, '') ? location.hash : `#${presetHash(START_PRESET)}`);
  const store = new Store(first.state);
  const query = new URLSearchParams(location.search);
  const build = coreQuery(query.get('core'));
  const app = mountApp(root, store, {
    assets: ASSETS,
    // ?core=simd loads the plain SIMD build where the relaxed-SIMD one would run, ?core=scalar the
    // scalar build (to compare the builds, or work around an engine's bug); ?threads=N runs at
    // most N threads (1: the one-thread build on an isolated page).
    force: build.force,
    maxThreads: Number(query.get('threads')) || undefined,
  });
  app.showCorrections([...build.corrections, ...first.corrections]);

  let written = stateToHash(store.state);
  history.replaceState(null, '', `#${written}`);
  store.subscribe((s) => {
    written = stateToHash(s);
    history.replaceState(null, '', `#${written}`);
  });
  // A hash typed or pasted by hand: validate it like the first one.
  window.addEventListener('hashchange', () => {
    if (location.hash.replace(/^#/, '') === written) return;
    const next = stateFromHash(location.hash);
    app.showCorrections(next.corrections);
    store.set(next.state);
    written = stateToHash(store.state);
    history.replaceState(null, '', `#${written}`);
  });
}
