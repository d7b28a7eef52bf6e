// The sample sequence above the heatmaps: by default a sequence drawn from the current task's
// generator (the core's taskSample, with the Store's sampleSeed; "New sample" takes the next
// seed), or token ids the learner types (kept in the Store's sample, and so in the URL). Clearing
// the box goes back to the generator. The ids shown for a drawn sample are the worker's (the
// snapshot's), so they are the core's. For the text task the box takes and shows characters: the
// core encodes what is typed with the run's vocabulary (a character outside it gets the core's
// sentence, as a bad prompt of the Generate panel does), and the Store keeps the ids.
import { plural } from '../model/format';
import { tokenLabels } from '../model/text';
import type { Controller } from '../client/controller';
import { CONFIG_KEYS, LIMITS, type State } from '../settings/settings';
import { generatedSample, sampleOf } from '../settings/state';
import type { Store } from '../settings/store';
import { h, uniqueId } from './dom';

/** How the box writes a new line and a tab, which a one-line box cannot hold. */
const SIGNS: readonly [string, string][] = [
  ['\n', '⏎'],
  ['\t', '⇥'],
];

/** Characters as the box shows them: a new line and a tab as their signs. */
export function charsToBox(text: string): string {
  return SIGNS.reduce((t, [c, sign]) => t.split(c).join(sign), text);
}

/** What the learner typed in the box as characters: the signs back to what they stand for. */
export function boxToChars(box: string): string {
  return SIGNS.reduce((t, [c, sign]) => t.split(sign).join(c), box);
}

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
  const label = h('label', { for: id, text: 'sample sequence (token ids)' });
  const element = h(
    'div',
    { class: 'field sample-field' },
    label,
    h('div', { class: 'sample-row' }, input, button),
    msg,
    note,
  );

  // What the learner types becomes the Store's sample; an empty box (or the drawn ids unchanged)
  // means the task's generator.
  let editing = false; // typed into and not yet committed (Enter or leaving the box)
  /** Task text: characters the core refused, kept in the box beside the sentence until the next change. */
  let refused: string | null = null;
  input.addEventListener('input', () => (editing = true));
  input.addEventListener('blur', () => {
    editing = false;
    show(store.state, false);
  });
  input.addEventListener('change', () => {
    editing = false;
    const s = store.state;
    const text = input.value.slice(0, LIMITS.sampleChars);
    refused = null;
    if (text.trim() === '') {
      store.set({ sample: '' });
    } else if (vocab()) {
      if (text !== shown()) void useChars(boxToChars(text));
      return;
    } else {
      if (generatedSample(s) && text.trim() === shown()) return;
      store.set({ sample: text });
    }
    show(store.state, false);
  });
  button.addEventListener('click', () => {
    refused = null;
    store.set({ sample: '', sampleSeed: nextSampleSeed(store.state.sampleSeed) });
  });

  /** Task text: shows these characters (the core encodes them); one sentence when it cannot. */
  async function useChars(chars: string): Promise<void> {
    const n = [...chars].length;
    const T = store.state.seqLen;
    try {
      if (n > T) throw new Error(`${n} characters, more than seq_len (${T}); type at most ${T}`);
      await ctl.setSampleText(chars);
      problem('');
    } catch (e) {
      refused = charsToBox(chars);
      problem(`sample sequence: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** The sentence under the box ('' clears it). */
  function problem(text: string): void {
    msg.textContent = text;
    if (text) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }

  /** Task text: the run's characters (token id i is the i-th); null for the other tasks. */
  function vocab(): string | null {
    return store.state.task === 'text' ? (ctl.snapshot?.text?.corpus.vocab ?? null) : null;
  }

  /** The sequence the heatmaps show now (the worker's), as the box writes it: its ids, or for the
   * text task its characters. */
  function shown(): string {
    const snap = ctl.snapshot;
    if (!snap) return '';
    const chars = vocab();
    if (!chars) return Array.from(snap.ids).join(' ');
    const list = [...chars];
    return charsToBox(Array.from(snap.ids, (i) => list[i] ?? '').join(''));
  }

  function show(s: Readonly<State>, check: boolean): void {
    const generated = generatedSample(s);
    element.dataset.source = generated ? 'task' : 'typed';
    element.dataset.seed = String(s.sampleSeed);
    const chars = vocab();
    label.textContent = chars ? 'sample sequence (characters)' : 'sample sequence (token ids)';
    element.dataset.unit = chars ? 'characters' : 'ids';
    const value = refused ?? (generated || chars ? shown() : s.sample);
    if (input.value !== value && !editing) input.value = value;
    const text = ctl.snapshot?.text;
    note.textContent = chars && text
      ? `${generated ? `The first ${ctl.snapshot!.T === 1 ? 'character' : `${ctl.snapshot!.T} characters`} of the held-out 10% of the text (ids ${tokenLabels(ctl.snapshot!.ids, null).join(' ')})` : `Your own characters (ids ${tokenLabels(ctl.snapshot!.ids, null).join(' ')})`}. Type up to ${plural(s.seqLen, 'character')} of the text's ${text.corpus.vocabSize} (⏎ is a new line) to see the heatmaps on them; empty the box to come back.`
      : generated
      ? `Drawn from the ${s.task} task's generator (sample ${s.sampleSeed}), so it is the kind of sequence the model trains on. Type your own token ids to replace it; empty the box to come back.`
      : 'Your own token ids. "New sample" draws a sequence from the task\'s generator instead.';
    if (!check) return;
    const problems = generated ? [] : sampleOf(s).problems;
    problem(problems.length ? `sample sequence: ${problems.join('; ')}` : '');
  }
  const unsubscribe = store.subscribe((s, changed) => {
    const sampleChanged = changed.has('sample') || changed.has('sampleSeed') || CONFIG_KEYS.some((k) => changed.has(k));
    if (sampleChanged) refused = null;
    show(s, sampleChanged);
  });
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
