// The sample sequence above the heatmaps: by default a sequence drawn from the current task's
// generator (the core's taskSample, with the Store's sampleSeed; "New sample" takes the next
// seed), or token ids the learner types (kept in the Store's sample, and so in the URL). Clearing
// the box goes back to the generator. The ids shown for a drawn sample are the worker's (the
// snapshot's), so they are the core's.
import { tokenLabels } from '../model/text';
import type { Controller } from '../client/controller';
import { CONFIG_KEYS, LIMITS, type State } from '../settings/settings';
import { generatedSample, sampleOf } from '../settings/state';
import type { Store } from '../settings/store';
import { h, uniqueId } from './dom';

/** The next seed of the generator (wrapping at the setting's maximum). */
export function nextSampleSeed(seed: number): number {
  return seed >= LIMITS.sampleSeed[1] ? 0 : seed + 1;
}

/** The mounted field. */
export interface SampleField {
  element: HTMLElement;
  destroy(): void;
}

/** Builds the sample field bound to the Store (settings) and the Controller (the ids drawn). */
export function mountSampleField(store: Store, ctl: Controller): SampleField {
  const id = uniqueId('sample');
  const msgId = `${id}-msg`;
  const noteId = `${id}-note`;
  const input = h('input', { id, type: 'text', name: 'sample', spellcheck: 'false', autocomplete: 'off', 'aria-describedby': `${msgId} ${noteId}` });
  const msg = h('p', { class: 'field-msg', id: msgId, role: 'status' });
  const note = h('p', { class: 'hint sample-note', id: noteId });
  const button = h('button', { type: 'button', 'data-action': 'new-sample', text: 'New sample' });
  const element = h(
    'div',
    { class: 'field sample-field' },
    h('label', { for: id, text: 'sample sequence (token ids)' }),
    h('div', { class: 'sample-row' }, input, button),
    msg,
    note,
  );

  // What the learner types becomes the Store's sample; an empty box (or the drawn ids unchanged)
  // means the task's generator.
  let editing = false; // typed into and not yet committed (Enter or leaving the box)
  input.addEventListener('input', () => (editing = true));
  input.addEventListener('blur', () => {
    editing = false;
    show(store.state, false);
  });
  input.addEventListener('change', () => {
    editing = false;
    const s = store.state;
    const text = input.value.slice(0, LIMITS.sampleChars);
    if (generatedSample(s) && text.trim() === shownIds()) return;
    store.set({ sample: text.trim() === '' ? '' : text });
    show(store.state, false);
  });
  button.addEventListener('click', () => store.set({ sample: '', sampleSeed: nextSampleSeed(store.state.sampleSeed) }));

  /** The ids of the sequence the heatmaps show now (the worker's), as text. */
  function shownIds(): string {
    return ctl.snapshot ? Array.from(ctl.snapshot.ids).join(' ') : '';
  }

  function show(s: Readonly<State>, check: boolean): void {
    const generated = generatedSample(s);
    element.dataset.source = generated ? 'task' : 'typed';
    element.dataset.seed = String(s.sampleSeed);
    const value = generated ? shownIds() : s.sample;
    if (input.value !== value && !editing) input.value = value;
    const text = ctl.snapshot?.text;
    note.textContent = generated && text
      ? `The first ${ctl.snapshot!.T} characters of the held-out 10% of the text, as token ids (the heatmaps label them with their characters: "${tokenLabels(ctl.snapshot!.ids, text.corpus.vocab).join('')}"). Type your own ids, each below ${text.corpus.vocabSize}, to replace it; empty the box to come back.`
      : generated
      ? `Drawn from the ${s.task} task's generator (sample ${s.sampleSeed}), so it is the kind of sequence the model trains on. Type your own token ids to replace it; empty the box to come back.`
      : 'Your own token ids. "New sample" draws a sequence from the task\'s generator instead.';
    if (!check) return;
    const problems = generated ? [] : sampleOf(s).problems;
    msg.textContent = problems.length ? `sample sequence: ${problems.join('; ')}` : '';
    if (problems.length) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }
  const unsubscribe = store.subscribe((s, changed) =>
    show(s, changed.has('sample') || changed.has('sampleSeed') || CONFIG_KEYS.some((k) => changed.has(k))),
  );
  const unfollow = ctl.subscribe(() => show(store.state, false));
  show(store.state, true);
  return {
    element,
    destroy: () => {
      unsubscribe();
      unfollow();
    },
  };
}
