// The text task's corpus sources in the training view: a "Your text" box with "Use this text", an
// "Open .txt" file input that also takes a file dropped on the box, and "Default text". The core
// checks a text as the Trainer takes it (in the worker); only a text it accepts restarts the run,
// and a bad one shows the core's one sentence here while the current run goes on untouched.
import type { Controller } from '../client/controller';
import { MAX_CORPUS_BYTES, tooLargeMessage } from '../model/text';
import type { Store } from '../settings/store';
import { h, uniqueId } from './dom';

/** The mounted box. */
export interface CorpusBox {
  element: HTMLElement;
  destroy(): void;
}

/** A core message ("the text is empty") as the one sentence shown ("The text is empty."). */
export function asSentence(message: string): string {
  const m = message.trim();
  if (!m) return '';
  const s = m[0].toUpperCase() + m.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/** Builds the box, shown while the Store's task is text. */
export function mountCorpusBox(store: Store, ctl: Controller): CorpusBox {
  const cleanups: (() => void)[] = [];
  const textId = uniqueId('corpus-text');
  const fileId = uniqueId('corpus-file');
  const msgId = uniqueId('corpus-msg');
  const text = h('textarea', { id: textId, name: 'corpus', rows: 5, spellcheck: 'false', 'aria-describedby': msgId, placeholder: 'Paste any text: at least a few hundred characters, at most 256 distinct ones.' });
  const useBtn = h('button', { type: 'button', 'data-action': 'use-text', text: 'Use this text' });
  const file = h('input', { id: fileId, type: 'file', name: 'corpus-file', accept: '.txt,text/plain' });
  const defaultBtn = h('button', { type: 'button', 'data-action': 'default-text', text: 'Default text' });
  const message = h('p', { class: 'field-msg corpus-msg', id: msgId, role: 'alert' });
  const info = h('p', { class: 'hint corpus-info', 'aria-live': 'polite' });
  const element = h(
    'fieldset',
    { class: 'corpus', hidden: true },
    h('legend', { text: 'Text to train on' }),
    h('label', { for: textId, text: 'Your text' }),
    text,
    h('div', { class: 'buttons' }, useBtn, defaultBtn),
    h('label', { for: fileId, text: 'Open .txt (or drop a file on this box)' }),
    file,
    message,
    info,
  );

  /** Restarts the run on corpus; a text the core rejects leaves the run and shows why. */
  async function use(corpus: string | Uint8Array | null, source: string): Promise<void> {
    message.textContent = '';
    element.dataset.state = 'busy';
    try {
      await ctl.useCorpus(corpus);
      element.dataset.source = source;
      element.dataset.state = 'used';
    } catch (e) {
      message.textContent = asSentence(e instanceof Error ? e.message : String(e));
      element.dataset.state = 'rejected';
    }
  }

  /** A file: refused before reading when over the limit, else its bytes go to the core. */
  async function useFile(f: File): Promise<void> {
    if (f.size > MAX_CORPUS_BYTES) {
      message.textContent = tooLargeMessage(f.name, f.size);
      element.dataset.state = 'rejected';
      return;
    }
    await use(new Uint8Array(await f.arrayBuffer()), f.name);
  }

  useBtn.addEventListener('click', () => void use(text.value, 'your text'));
  defaultBtn.addEventListener('click', () => void use(null, 'default'));
  file.addEventListener('change', () => {
    const f = file.files?.[0];
    file.value = '';
    if (f) void useFile(f);
  });
  element.addEventListener('dragover', (e) => {
    e.preventDefault();
    element.classList.add('drop');
  });
  element.addEventListener('dragleave', () => element.classList.remove('drop'));
  element.addEventListener('drop', (e) => {
    e.preventDefault();
    element.classList.remove('drop');
    const f = e.dataTransfer?.files[0];
    if (f) void useFile(f);
  });

  function update(): void {
    element.hidden = store.state.task !== 'text';
    const t = ctl.snapshot?.text;
    if (!t) return;
    const c = t.corpus;
    const which = t.defaultCorpus ? 'the default text (sentences the project generates)' : element.dataset.source && element.dataset.source !== 'default' ? element.dataset.source : 'the given text';
    info.textContent = `Training on ${which}: ${c.trainChars + c.valChars} characters (${c.trainChars} train, ${c.valChars} validation), ${c.vocabSize} distinct.`;
    element.dataset.vocabSize = String(c.vocabSize);
  }
  cleanups.push(store.subscribe(update), ctl.subscribe(update));
  update();
  return {
    element,
    destroy: () => {
      for (const f of cleanups) f();
    },
  };
}
