// The mask you can draw (view 2): a T x T grid of toggle buttons, one per (query, key) cell.
// A click, or Enter/Space on a focused cell, flips it; the new mask goes to the store as drawn
// rows (settings/lesson-mask.ts). Arrow keys move between cells.
import { h, scrollBox } from '../../ui/dom';
import { maskValue, type MaskPreset } from '../../settings/lesson-mask';

/** What the editor shows and whom it tells. */
export interface MaskEditorOptions {
  /** Row and column labels ("0 the"). */
  tokens: string[];
  /** The cells in force (T*T, 1 = masked). */
  cells: Uint8Array;
  preset: MaskPreset | 'drawn';
  /** The sliding window's k (for the caption). */
  k: number;
  /** Called with the new mask value and the flipped cell. */
  onChange: (value: string, i: number, j: number) => void;
}

const PRESET_WORDS: Record<MaskPreset | 'drawn', (k: number) => string> = {
  none: () => 'No cell is masked: every query reads every key.',
  causal: () => 'Causal: query i reads keys 0 to i, never a later one.',
  window: (k) => `Sliding window of ${k}: query i reads keys i−${k - 1} to i, its ${k} latest tokens.`,
  blocks: () => 'Block-diagonal: each sentence reads only itself (with one sentence, the block is the whole sentence).',
  drawn: () => 'Drawn by hand.',
};

/** The editor: a table of toggle buttons, rows = queries, columns = keys. */
export function maskEditor(o: MaskEditorOptions): HTMLElement {
  const T = o.tokens.length;
  const table = h('table', { class: 'mask-editor' });
  table.createCaption().textContent = 'Mask: rows are queries, columns are keys; a pressed cell is masked';
  const head = table.createTHead().insertRow();
  head.appendChild(h('td'));
  for (const t of o.tokens) head.appendChild(h('th', { scope: 'col', text: t }));
  const body = table.createTBody();
  for (let i = 0; i < T; ++i) {
    const tr = body.insertRow();
    tr.appendChild(h('th', { scope: 'row', text: o.tokens[i] }));
    for (let j = 0; j < T; ++j) {
      const masked = o.cells[i * T + j] !== 0;
      const b = h('button', {
        type: 'button',
        class: 'mask-cell',
        'data-i': i,
        'data-j': j,
        'aria-pressed': masked ? 'true' : 'false',
        'aria-label': `query ${o.tokens[i]}, key ${o.tokens[j]}`,
        title: `${masked ? 'masked' : 'open'}: query ${o.tokens[i]}, key ${o.tokens[j]}`,
        text: masked ? '×' : '',
      });
      tr.insertCell().appendChild(b);
    }
  }
  table.addEventListener('click', (e) => {
    const b = (e.target as Element).closest<HTMLButtonElement>('button.mask-cell');
    if (!b) return;
    const i = Number(b.dataset.i);
    const j = Number(b.dataset.j);
    const cells = o.cells.slice();
    cells[i * T + j] = cells[i * T + j] ? 0 : 1;
    o.onChange(maskValue(cells, T), i, j);
  });
  table.addEventListener('keydown', (e) => {
    const b = (e.target as Element).closest<HTMLButtonElement>('button.mask-cell');
    const step = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
    if (!b || !step) return;
    const i = Math.min(T - 1, Math.max(0, Number(b.dataset.i) + step[0]));
    const j = Math.min(T - 1, Math.max(0, Number(b.dataset.j) + step[1]));
    table.querySelector<HTMLButtonElement>(`button[data-i="${i}"][data-j="${j}"]`)?.focus();
    e.preventDefault();
  });
  return h(
    'div',
    { class: 'mask-editor-box' },
    h('p', { class: 'hint', text: `${PRESET_WORDS[o.preset](o.k)} Click a cell (or press Enter or Space on it; arrows move) to mask or unmask it.` }),
    scrollBox('mask editor (scrolls sideways)', table),
  );
}
