// The training view's controls column: the Run box (Play/Pause, Step 1, Step 10, Reset, the
// step/rate/loss readout and the problem box) and the "Model and training" settings, one control
// per config setting of the key table, the transformer block's behind one disclosure. A control
// whose setting does not matter under the others (the window under full attention: the schema's
// applies_when) is hidden until it does. A control writes the Store (checked like a link); a core
// error that names a key shows next to that control.
import type { Controller, Problem } from '../client/controller';
import { count, lossUnitOf, num, perNat, plural } from '../model/format';
import { CONFIG_SCHEMA } from '../core/config-schema';
import { applies, appliesTo, CONFIG_KEYS, checkField, DEFAULTS, settingOf, type State } from '../settings/settings';
import { taskText } from '../settings/tasks';
import type { Store } from '../settings/store';
import { h, uniqueId } from './dom';
import type { Parts } from './parts';

/** One control of the "Model and training" box. */
export interface ControlSpec {
  key: keyof State;
  label: string;
  /** The core's name for the key, as in its errors' `key`. */
  coreKey: string;
  min?: number;
  max?: number;
  step?: string;
  options?: readonly string[];
  /** An on/off setting: a checkbox. */
  bool?: boolean;
  /** A setting of the transformer block (the schema's group block): behind the disclosure. */
  block?: boolean;
  /** The model families the key applies to; absent: every family. */
  families?: readonly string[];
}

/** The controls: the config settings of the key table, in its order. */
export const CONTROLS: readonly ControlSpec[] = CONFIG_KEYS.map((key) => {
  const s = settingOf(key);
  const block = CONFIG_SCHEMA.find((k) => k.js === key)?.group === 'block';
  return { key, label: s.label, coreKey: s.core ?? key, min: s.range?.[0], max: s.range?.[1], step: s.step ?? undefined, options: s.values ?? undefined, bool: s.type === 'bool' || undefined, block: block || undefined, families: s.families };
});

/** The controls shown for a model family: those of the keys that apply to it (the others are
 * hidden, as the core refuses them off their defaults). */
export const controlsFor = (family: string): readonly ControlSpec[] => CONTROLS.filter((c) => appliesTo(c, family));

/** The mounted controls. */
export interface TrainControls {
  form: HTMLFormElement;
  /** Shows a message under a control ('' clears it). */
  setMessage(key: keyof State, text: string): void;
  /** Clears the messages of every control. */
  clearMessages(): void;
  destroy(): void;
}

/** Builds the controls column; the caller places `form`. */
export function mountTrainControls(store: Store, ctl: Controller, parts: Parts): TrainControls {
  const cleanups: (() => void)[] = [];
  const inputs = new Map<keyof State, HTMLInputElement | HTMLSelectElement>();
  const messages = new Map<keyof State, HTMLElement>();
  const fieldOf = new Map<keyof State, HTMLElement>();
  // Task text: the vocabulary is the text's characters, so the vocab control shows their count.
  const vocabNote = h('p', { class: 'hint vocab-note', hidden: true });
  const field = (c: ControlSpec, ...children: (Node | null)[]) => {
    const el = h('div', { class: c.bool ? 'field field-check' : 'field', 'data-key': c.key }, ...children);
    fieldOf.set(c.key, el);
    return el;
  };
  const fields = CONTROLS.map((c) => {
    const id = uniqueId(`ctl-${c.key}`);
    const msgId = `${id}-msg`;
    let input: HTMLInputElement | HTMLSelectElement;
    if (c.bool) {
      const box = h('input', { id, name: c.key, type: 'checkbox', 'aria-describedby': msgId });
      box.addEventListener('change', () => onControl(c.key, box.checked ? '1' : '0'));
      inputs.set(c.key, box);
      const msg = h('p', { class: 'field-msg', id: msgId, role: 'status' });
      messages.set(c.key, msg);
      return field(c, h('label', { for: id, class: 'inline' }, box, ` ${c.label}`), msg);
    }
    if (c.options) {
      input = h('select', { id, name: c.key, 'aria-describedby': msgId });
      for (const o of c.options) input.append(h('option', { value: o, text: o }));
    } else {
      input = h('input', { id, name: c.key, type: 'number', inputmode: 'decimal', min: c.min, max: c.max, step: c.step, 'aria-describedby': msgId });
    }
    input.addEventListener('change', () => onControl(c.key, input.value));
    inputs.set(c.key, input);
    const msg = h('p', { class: 'field-msg', id: msgId, role: 'status' });
    messages.set(c.key, msg);
    return field(c, h('label', { for: id, text: c.label }), input, msg, c.key === 'vocabSize' ? vocabNote : null);
  });

  const playBtn = h('button', { type: 'button', class: 'primary', 'data-action': 'play', text: 'Play' });
  const step1Btn = h('button', { type: 'button', 'data-action': 'step1', text: 'Step 1' });
  const step10Btn = h('button', { type: 'button', 'data-action': 'step10', text: 'Step 10' });
  const resetBtn = h('button', { type: 'button', 'data-action': 'reset', text: 'Reset' });
  const stepOut = h('output', { class: 'step', text: '0' });
  const rateOut = h('output', { class: 'rate', text: '0' });
  const lossOut = h('output', { class: 'loss', text: '—' });
  const lossNote = h('span', { class: 'loss-note' });
  const readout = h(
    'p',
    { class: 'readout', 'data-step': '0', 'data-loss': '', 'data-status': 'loading' },
    h('span', {}, 'step ', stepOut),
    h('span', {}, rateOut, ' steps/s'),
    h('span', {}, 'loss ', lossOut, lossNote),
  );
  const problemText = h('p', { class: 'problem-text' });
  const restartBtn = h('button', { type: 'button', 'data-action': 'restart', text: 'Restart', hidden: true });
  const problem = h('div', { class: 'problem', role: 'alert', hidden: true }, problemText, restartBtn);

  const taskHelp = h('p', { class: 'hint task-help', 'aria-live': 'polite' });
  // The transformer block's settings, folded: open on request, or by itself once one is off its
  // default (a link or a preset that sets one), so no setting in effect is out of sight.
  const blockKeys = CONTROLS.filter((c) => c.block).map((c) => c.key);
  const blockSummary = h('summary', { text: 'Transformer block' });
  let blockOff = new Set<keyof State>();
  const block = h(
    'details',
    { class: 'block-settings' },
    blockSummary,
    h('p', { class: 'hint', text: 'Positions, norms, the feed-forward network, K/V heads and the attention pattern. At their defaults the model is the curriculum\'s: attention layers only.' }),
    h('div', { class: 'fields' }, ...fields.filter((_, i) => CONTROLS[i].block)),
  );
  const form = h(
    'form',
    { class: 'controls', 'aria-label': 'Model and training controls' },
    parts.place(h('fieldset', { class: 'run' }, h('legend', { text: 'Run' }), h('div', { class: 'buttons' }, playBtn, step1Btn, step10Btn, resetBtn), readout, problem), 'run'),
    parts.place(h('fieldset', { class: 'config' }, h('legend', { text: 'Model and training' }), h('p', { class: 'hint first', text: 'Changing a value builds a new model (step 0).' }), h('div', { class: 'fields' }, ...fields.filter((_, i) => !CONTROLS[i].block)), taskHelp, block), 'model'),
  );
  form.addEventListener('submit', (e) => e.preventDefault());

  function setMessage(key: keyof State, text: string): void {
    const el = messages.get(key);
    if (!el) return;
    el.textContent = text;
    showIfApplies(key, store.state);
    const input = inputs.get(key)!;
    if (text) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }

  /** Hides a control whose setting does not matter in s, unless it has a message (the core may
   * still name it). */
  function showIfApplies(key: keyof State, s: Readonly<State>): void {
    fieldOf.get(key)!.hidden = !applies(key, s) && !messages.get(key)!.textContent;
  }

  function clearMessages(): void {
    for (const k of messages.keys()) setMessage(k, '');
  }

  /** The control the learner changed last: a core error across two keys goes on it. */
  let lastChanged: keyof State | null = null;

  function onControl(key: keyof State, raw: string): void {
    lastChanged = key;
    const { value, correction } = checkField(key, raw);
    clearMessages();
    if (correction) setMessage(key, correction.message);
    show(key, value);
    store.set({ [key]: value } as Partial<State>);
  }

  /** Shows a value in its control (a checkbox's state, else the text). */
  function show(key: keyof State, value: State[keyof State]): void {
    const el = inputs.get(key)!;
    if (el instanceof HTMLInputElement && el.type === 'checkbox') el.checked = value === true;
    else if (el.value !== String(value)) el.value = String(value);
  }

  /** The Store -> the controls. */
  function sync(s: Readonly<State>): void {
    for (const c of CONTROLS) {
      show(c.key, s[c.key]);
      showIfApplies(c.key, s);
    }
    // Opens when a block setting leaves its default (not on every change: the learner may close it).
    const changed = blockKeys.filter((k) => s[k] !== DEFAULTS[k]);
    if (changed.some((k) => !blockOff.has(k))) block.open = true;
    blockOff = new Set(changed);
    blockSummary.textContent = changed.length > 0 ? `Transformer block (${changed.length} changed)` : 'Transformer block';
    taskHelp.textContent = taskText(s.task, s.objective);
    showTextVocab();
  }

  /** Task text: the vocab control shows the corpus's vocabulary size and is off, with why. */
  function showTextVocab(): void {
    const input = inputs.get('vocabSize')!;
    const corpus = store.state.task === 'text' ? ctl.snapshot?.text?.corpus : undefined;
    input.disabled = corpus !== undefined;
    vocabNote.hidden = corpus === undefined;
    if (!corpus) return;
    input.value = String(corpus.vocabSize);
    vocabNote.textContent = `The text sets the vocabulary: its ${plural(corpus.vocabSize, 'distinct character')}, so this setting is not used.`;
  }
  cleanups.push(
    store.subscribe((s, _changed, source) => {
      sync(s);
      // An imported run's settings replace what the controls said.
      if (source === 'run') clearMessages();
    }),
  );

  playBtn.addEventListener('click', () => void ctl.toggle());
  step1Btn.addEventListener('click', () => void ctl.step(1));
  step10Btn.addEventListener('click', () => void ctl.step(10));
  resetBtn.addEventListener('click', () => void ctl.reset());
  restartBtn.addEventListener('click', () => void ctl.restart());

  // ---- Problems: a core message that names a key goes next to that control.
  cleanups.push(
    ctl.onProblem((p: Problem | null) => {
      if (!p) {
        problem.hidden = true;
        problemText.textContent = '';
        restartBtn.hidden = true;
        for (const c of CONTROLS) if (messages.get(c.key)!.dataset.core) (messages.get(c.key)!.dataset.core = ''), setMessage(c.key, '');
        return;
      }
      const spec = p.key ? controlFor(p.key, p.message, lastChanged) : undefined;
      if (spec) {
        const words = inLabels(p.message);
        setMessage(spec.key, words);
        messages.get(spec.key)!.dataset.core = '1';
        problemText.textContent = `The core rejected this config: ${words}`;
      } else {
        problemText.textContent = p.message;
      }
      problem.dataset.kind = p.kind;
      problem.hidden = false;
      restartBtn.hidden = p.kind !== 'crash';
    }),
  );

  // ---- Controller -> readout and buttons
  function updateUI(): void {
    const s = ctl.snapshot;
    const st = ctl.status;
    const busy = st === 'loading' || st === 'crashed' || st === 'invalid';
    playBtn.textContent = st === 'playing' ? 'Pause' : 'Play';
    playBtn.disabled = busy;
    step1Btn.disabled = step10Btn.disabled = busy;
    resetBtn.disabled = st === 'loading' || st === 'crashed';
    readout.dataset.status = st;
    if (s) {
      stepOut.textContent = String(s.step);
      rateOut.textContent = st === 'playing' ? count(s.stepsPerSec) : '0';
      const unit = lossUnitOf(store.state.task);
      lossOut.textContent = `${num(s.loss * perNat(unit), 4)} ${unit}`;
      lossNote.textContent = s.lossAtInit ? ' (at init: first batch, before any update)' : '';
      readout.dataset.step = String(s.step);
      readout.dataset.loss = String(s.loss);
    }
    showTextVocab();
  }
  cleanups.push(ctl.subscribe(updateUI));

  sync(store.state);
  updateUI();
  return {
    form,
    setMessage,
    clearMessages,
    destroy: () => {
      for (const f of cleanups) f();
    },
  };
}

/** A control's name in the page's words: its label without the parenthesised note. */
function labelWord(c: ControlSpec): string {
  return c.label.replace(/\s*\(.*\)$/, '');
}

/** The control a core error belongs on: the one the learner changed last when the message names it
 * too (heads 3 with d_model 32: the heads control), else the one whose key the core names. */
export function controlFor(coreKey: string, message: string, lastChanged: keyof State | null): ControlSpec | undefined {
  const last = lastChanged ? CONTROLS.find((c) => c.key === lastChanged) : undefined;
  if (last && last.coreKey !== coreKey && new RegExp(`\\b${last.coreKey}\\b`).test(message)) return last;
  return CONTROLS.find((c) => c.coreKey === coreKey);
}

/** A core message with each key's JS name (dModel, nHeads) replaced by its control's label. */
export function inLabels(message: string): string {
  const byName = new Map(CONTROLS.map((c) => [String(c.coreKey), labelWord(c)]));
  const names = [...byName.keys()].sort((a, b) => b.length - a.length);
  return message.replace(new RegExp(`\\b(${names.join('|')})\\b`, 'g'), (n) => byName.get(n)!);
}
