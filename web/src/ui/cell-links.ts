// View 2's cell links: pointing at or focusing a cell of the scores, the weights or the output
// lights up the rows and columns it was made from. Scores (i, j) come from row i of Q and row j of
// K (column j of Kᵀ); a weight (i, j) from the same two rows, normalised over row i of the masked
// scores; an output cell (i, j) from row i of the weights and column j of V. The tables are found
// by their data-matrix names, among the tables of the same head (data-head) when there are
// several, so the module works whatever lays the stages out. Each linked table is one tab stop:
// the arrow keys, Home and End move between its cells (a roving tabindex; cellAfterKey, the moves
// over any grid, also serves the canvas heatmaps).

/** A row or column of another table. */
export interface Link {
  matrix: string;
  row?: number;
  col?: number;
}

/** The tables a cell (i, j) of each linked matrix is made from. */
export const CELL_LINKS: Readonly<Record<string, (i: number, j: number) => Link[]>> = {
  scores: (i, j) => [{ matrix: 'Q', row: i }, { matrix: 'K', row: j }],
  scaledScores: (i, j) => [{ matrix: 'Q', row: i }, { matrix: 'K', row: j }, { matrix: 'scores', row: i, col: j }],
  maskedScores: (i, j) => [{ matrix: 'Q', row: i }, { matrix: 'K', row: j }, { matrix: 'scaledScores', row: i, col: j }],
  weights: (i, j) => [{ matrix: 'Q', row: i }, { matrix: 'K', row: j }, { matrix: 'maskedScores', row: i }],
  output: (i, j) => [{ matrix: 'weights', row: i }, { matrix: 'V', col: j }],
};

const LINKED = 'linked';
const SOURCE = 'link-source';

/** The data cells of a matrix table, by row. */
function cellsOf(table: HTMLTableElement): HTMLTableCellElement[][] {
  return [...table.tBodies[0].rows].map((r) => [...r.cells].filter((c) => c.tagName === 'TD'));
}

/** (i, j) of a data cell. */
function positionOf(td: HTMLTableCellElement): [number, number] {
  const tr = td.parentElement as HTMLTableRowElement;
  const i = tr.sectionRowIndex;
  const j = [...tr.cells].filter((c) => c.tagName === 'TD').indexOf(td);
  return [i, j];
}

function linkedTableOf(el: EventTarget | null): { table: HTMLTableElement; td: HTMLTableCellElement } | null {
  if (!(el instanceof Element)) return null;
  const td = el.closest('td');
  const table = td?.closest<HTMLTableElement>('table[data-matrix]');
  if (!td || !table || !(table.dataset.matrix! in CELL_LINKS) || td.parentElement?.parentElement !== table.tBodies[0]) return null;
  return { table, td };
}

/** The data cells of a table (by row) and the position of one of them: for tables whose cells the
 * arrow keys move between (here, and the "Look inside" panel's). */
export { cellsOf, positionOf };

/** The cell a key moves to from (i, j) in a rows x cols grid (the arrows, Home and End, clamped to
 * the grid); null for any other key. */
export function cellAfterKey(key: string, [i, j]: readonly [number, number], rows: number, cols: number): [number, number] | null {
  switch (key) {
    case 'ArrowUp': return [Math.max(0, i - 1), j];
    case 'ArrowDown': return [Math.min(rows - 1, i + 1), j];
    case 'ArrowLeft': return [i, Math.max(0, j - 1)];
    case 'ArrowRight': return [i, Math.min(cols - 1, j + 1)];
    case 'Home': return [i, 0];
    case 'End': return [i, cols - 1];
    default: return null;
  }
}

/** Moves the focus from td to the cell the key names (arrows, Home, End); other keys do nothing. */
export function moveCellFocus(e: KeyboardEvent, cells: HTMLTableCellElement[][], td: HTMLTableCellElement): void {
  const to = cellAfterKey(e.key, positionOf(td), cells.length, cells[0].length);
  if (!to) return;
  e.preventDefault();
  cells[to[0]][to[1]].focus();
}

/** Gives every linked table under root one tab stop (its first cell, or the cell focused last). */
export function markLinkable(root: HTMLElement): void {
  for (const table of root.querySelectorAll<HTMLTableElement>('table[data-matrix]')) {
    if (!(table.dataset.matrix! in CELL_LINKS)) continue;
    table.classList.add('linkable');
    const cells = cellsOf(table).flat();
    if (cells.some((c) => c.tabIndex === 0)) continue;
    cells.forEach((c, k) => (c.tabIndex = k === 0 ? 0 : -1));
  }
}

/** Installs the links on root (event delegation); returns the uninstaller. */
export function linkCells(root: HTMLElement): () => void {
  let lit: Element[] = [];
  const clear = () => {
    for (const el of lit) el.classList.remove(LINKED, SOURCE);
    lit = [];
  };
  const light = (table: HTMLTableElement, td: HTMLTableCellElement) => {
    clear();
    const [i, j] = positionOf(td);
    // A table of one head links to the tables of the same head, whichever stage holds them.
    const head = table.dataset.head ?? table.closest<HTMLElement>('[data-head]')?.dataset.head;
    const sameHead = head === undefined ? '' : `[data-head="${head}"]`;
    td.classList.add(SOURCE);
    lit.push(td);
    for (const link of CELL_LINKS[table.dataset.matrix!](i, j)) {
      const other = root.querySelector<HTMLTableElement>(`table[data-matrix="${link.matrix}"]${sameHead}`);
      if (!other) continue;
      const cells = cellsOf(other);
      const heads = [...other.tBodies[0].rows].map((r) => r.cells[0]);
      const colHeads = other.tHead ? [...other.tHead.rows[0].cells].slice(1) : [];
      if (link.row !== undefined && link.col !== undefined) {
        const c = cells[link.row]?.[link.col];
        if (c) lit.push(c);
      } else if (link.row !== undefined) {
        lit.push(...(cells[link.row] ?? []));
        if (heads[link.row]) lit.push(heads[link.row]);
      } else if (link.col !== undefined) {
        for (const r of cells) if (r[link.col]) lit.push(r[link.col]);
        if (colHeads[link.col]) lit.push(colHeads[link.col]);
      }
    }
    for (const el of lit) if (el !== td) el.classList.add(LINKED);
  };

  const over = (e: Event) => {
    const hit = linkedTableOf(e.target);
    if (hit) light(hit.table, hit.td);
  };
  const out = (e: Event) => {
    const to = (e as FocusEvent | MouseEvent).relatedTarget;
    if (!linkedTableOf(to)) clear();
  };
  const focusIn = (e: Event) => {
    const hit = linkedTableOf(e.target);
    if (!hit) return;
    for (const c of cellsOf(hit.table).flat()) c.tabIndex = c === hit.td ? 0 : -1;
    light(hit.table, hit.td);
  };
  const key = (e: KeyboardEvent) => {
    const hit = linkedTableOf(e.target);
    if (!hit) return;
    moveCellFocus(e, cellsOf(hit.table), hit.td);
  };
  root.addEventListener('mouseover', over);
  root.addEventListener('mouseout', out);
  root.addEventListener('focusin', focusIn);
  root.addEventListener('focusout', out);
  root.addEventListener('keydown', key);
  return () => {
    clear();
    root.removeEventListener('mouseover', over);
    root.removeEventListener('mouseout', out);
    root.removeEventListener('focusin', focusIn);
    root.removeEventListener('focusout', out);
    root.removeEventListener('keydown', key);
  };
}
