// The training view's additions that are not panels of their own: the sentence under the loss
// chart on the phase change (the core's trainer.phaseChange()), and Start here, the preset links
// (settings/presets.ts) above the view.
import { LESSONS, PRESETS, presetHash, presetState, runsPreset, type Preset } from '../settings/presets';
import { keepPanel } from '../settings/panel-needs';
import type { Snapshot } from '../model/protocol';
import type { State, TaskName } from '../settings/settings';
import type { Store } from '../settings/store';
import { h, uniqueId } from './dom';

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

/** Start here: the presets as big buttons, grouped by the course's lessons, each with its sentence.
 * Each button is a real link (its hash can be copied into a lesson page) that, clicked, sets the
 * Store to exactly what the link opens; the preset the model runs is marked as current. */
export function mountPresets(store: Store): { element: HTMLElement; destroy(): void } {
  const cards: [Preset, HTMLAnchorElement][] = [];
  const card = (p: Preset) => {
    const sentenceId = uniqueId(`preset-${p.id}`);
    const a = h('a', { href: `#${presetHash(p)}`, class: 'preset-link', 'data-preset': p.id, 'aria-describedby': sentenceId, text: p.title });
    a.addEventListener('click', (ev) => {
      // In the page the hash would do the same; in the element the link must not move the host page.
      ev.preventDefault();
      // The open panel stays when the preset opens none and it works on the preset's model.
      store.set(keepPanel(p, presetState(p), store.state.panel));
    });
    cards.push([p, a]);
    return h('li', { class: 'start-card' }, a, h('p', { class: 'start-sentence', id: sentenceId, text: p.sentence }));
  };
  const groups = LESSONS.map((lesson) => {
    const presets = PRESETS.filter((p) => p.lesson === lesson);
    const group = h('li', { class: 'start-group' }, h('h3', { text: lesson }), h('ul', { class: 'start-cards' }, ...presets.map(card)));
    // A lesson spans one column per preset (style.css); set through the CSSOM, which a CSP allows.
    group.style.setProperty('--cards', String(presets.length));
    return group;
  });
  const element = h(
    'nav',
    { class: 'presets start-here', 'aria-label': 'Start here' },
    h('div', { class: 'start-head' }, h('h2', { class: 'presets-title', text: 'Start here' }), h('p', { class: 'hint', text: 'Pick an experiment, then press Play. Each one is a link you can copy into a lesson; the settings below show what it set.' })),
    h('ul', { class: 'start-groups' }, ...groups),
  );
  const mark = (s: Readonly<State>) => {
    for (const [p, a] of cards) {
      const current = runsPreset(p, s);
      if (current) a.setAttribute('aria-current', 'true');
      else a.removeAttribute('aria-current');
      a.parentElement!.classList.toggle('current', current);
    }
  };
  mark(store.state);
  return { element, destroy: store.subscribe((s) => mark(s)) };
}
