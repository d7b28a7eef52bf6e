// The anywidget front-end module contract (Jupyter, marimo, the MyST / Jupyter Book {anywidget}
// directive): render({model, el}) mounts one <attention-playground> into el. The model's traits are
// the element's attributes with `_` for `-` (vocab_size, solved_at, ...), plus `corpus` (the text
// task's text, the element's `corpus` property: too large for an attribute); the element writes
// step, loss, solved and error back. The returned cleanup removes the element, which ends its worker.
import { ATTRIBUTES } from './attributes';
import type { ErrorDetail, StepDetail } from './element';

/** The part of an anywidget model that render uses (anywidget's AnyModel). */
export interface WidgetModel {
  get(name: string): unknown;
  set(name: string, value: unknown): void;
  on(event: string, callback: () => void): void;
  off(event: string, callback: () => void): void;
  save_changes(): void;
}

/** Trait name -> attribute name, for every attribute of the element. */
export const TRAITS: Readonly<Record<string, string>> = Object.fromEntries(ATTRIBUTES.map((a) => [a.replaceAll('-', '_'), a]));

/** A trait's value as an attribute value: null removes it, false too, true is present. */
function attributeValue(v: unknown): string | null {
  if (v === null || v === undefined || v === false) return null;
  if (v === true) return '';
  return String(v);
}

/** Mounts the element into el, following the model's traits; returns the cleanup. */
export function render({ model, el }: { model: WidgetModel; el: HTMLElement }): () => void {
  const pg = document.createElement('attention-playground');
  const listeners: [string, () => void][] = [];
  for (const [trait, attribute] of Object.entries(TRAITS)) {
    const apply = () => {
      const value = attributeValue(model.get(trait));
      if (value === null) pg.removeAttribute(attribute);
      else pg.setAttribute(attribute, value);
    };
    apply();
    listeners.push([`change:${trait}`, apply]);
  }
  // The text task's corpus: a property, not an attribute. Unset or empty: the default text.
  const applyCorpus = () => {
    const v = model.get('corpus');
    const text = typeof v === 'string' && v !== '' ? v : v instanceof DataView ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : null;
    if (text !== null || pg.corpus !== null) pg.corpus = text;
  };
  applyCorpus();
  listeners.push(['change:corpus', applyCorpus]);
  for (const [event, f] of listeners) model.on(event, f);

  const write = (values: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(values)) model.set(k, v);
    model.save_changes();
  };
  pg.addEventListener('step', (e) => {
    const { step, loss } = (e as CustomEvent<StepDetail>).detail;
    // A reset or a new model starts a new run, which is not solved yet.
    write(step === 0 ? { step, loss, solved: false } : { step, loss });
  });
  pg.addEventListener('solved', (e) => {
    const { step, loss } = (e as CustomEvent<StepDetail>).detail;
    write({ step, loss, solved: true });
  });
  pg.addEventListener('error', (e) => write({ error: (e as unknown as CustomEvent<ErrorDetail>).detail.message }));
  el.append(pg);

  return () => {
    for (const [event, f] of listeners) model.off(event, f);
    pg.remove();
  };
}
