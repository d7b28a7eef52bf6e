// Entry of index.html: the state comes from the URL hash (validated; no hash: the Start here
// preset), is mirrored back to it on every change, and the app is mounted into #app.
import './style.css';
import { stateFromHash, stateToHash } from './settings/state';
import { presetHash, START_PRESET } from './settings/presets';
import { ASSETS } from './client/assets';
import { Store } from './settings/store';
import { mountApp } from './ui/app';

const root = document.getElementById('app')!;

if (typeof WebAssembly !== 'object') {
  root.textContent = 'This page needs WebAssembly, which this browser does not provide.';
} else {
  // A first visit (no hash) opens on the Start here preset; any hash, even `#view=train`, reads
  // against the key table's defaults, so every link keeps its meaning.
  const first = stateFromHash(location.hash.replace(/^#/, '') ? location.hash : `#${presetHash(START_PRESET)}`);
  const store = new Store(first.state);
  const app = mountApp(root, store, {
    assets: ASSETS,
    // ?core=scalar skips SIMD detection (to compare the builds, or work around a SIMD bug);
    // ?threads=N runs at most N threads (1: the one-thread build on an isolated page).
    forceScalar: new URLSearchParams(location.search).get('core') === 'scalar',
    maxThreads: Number(new URLSearchParams(location.search).get('threads')) || undefined,
  });
  app.showCorrections(first.corrections);

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
