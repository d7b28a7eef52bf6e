// The training view's additions for depth that are not panels of their own: the
// sentence under the loss chart on the phase change (the core's trainer.phaseChange()), and the
// preset links (settings/presets.ts) under the controls.
import { PRESETS, presetHash, presetState } from '../settings/presets';
import type { Snapshot } from '../model/protocol';
import type { TaskName } from '../settings/settings';
import type { Store } from '../settings/store';
import { h } from './dom';

/** The sentence on the phase change for a snapshot (empty: nothing to say for this run). */
export function phaseChangeText(s: Pick<Snapshot, 'phaseChange' | 'step' | 'L'>, task: TaskName): string {
  if (s.phaseChange >= 0) {
    return (
      `Phase change at step ${s.phaseChange} (the dashed line): the loss had sat on a plateau, and there its 25-step mean fell to half the plateau's level within a few hundred steps (the core's rule). ` +
      'This is when the previous-token head of one layer and the induction head of the next lock together; the timeline below shows their scores rising at the same step.'
    );
  }
  if (task !== 'induction') return '';
  if (s.L < 2) {
    return 'One layer cannot solve this task (no key knows its previous token), so expect the loss to stay on its plateau: no phase change will come. Try 2 layers with the residual stream.';
  }
  return `No phase change yet (step ${s.step}): the loss sits on a plateau while the heads search. When the two layers' heads lock together it drops within a few hundred steps, and a dashed line marks the step here.`;
}

/** Shows the phase-change sentence in el (hidden when there is nothing to say). */
export function phaseChangeNote(el: HTMLElement, s: Snapshot, task: TaskName): void {
  const text = phaseChangeText(s, task);
  if (el.textContent !== text) el.textContent = text;
  el.hidden = text === '';
  el.dataset.phaseChange = String(s.phaseChange);
}

/** The preset links: each a real link (its hash can be copied into a lesson page) that, clicked,
 * sets the Store to exactly what the link opens. */
export function mountPresets(store: Store): HTMLElement {
  const links = PRESETS.map((p) => {
    const a = h('a', { href: `#${presetHash(p)}`, class: 'preset-link', 'data-preset': p.id, text: p.title });
    a.addEventListener('click', (ev) => {
      // In the page the hash would do the same; in the element the link must not move the host page.
      ev.preventDefault();
      store.set(presetState(p));
    });
    return h('li', {}, a);
  });
  return h(
    'nav',
    { class: 'presets', 'aria-label': 'Presets' },
    h('h2', { class: 'presets-title', text: 'Presets' }),
    h('ul', {}, ...links),
    h('p', {
      class: 'hint',
      text:
        'Induction: two layers of two heads with the residual stream, on the induction task. Press Play: the loss sits on a plateau for a few hundred steps, then drops as an induction head forms. ' +
        'Find the induction circuit opens the same run with the "Look inside" panel, to find its two heads once it has trained. ' +
        'GPT on text: two pre-norm blocks with RoPE and a GELU feed-forward network, one character per token, on our own English sentences. Press Play: within a few hundred steps the validation loss falls below the unigram line, and the heatmaps label each key with its character.',
    }),
  );
}
