// Helpers of the lesson view's e2e tests: what the page shows (every table's exact values and
// texts), the core called in the page on those numbers, and the page's rounding.

/**
 * Every matrix the page shows, by name: `Q` for head 0 (or a table without a head), `Q@1` for
 * head 1, `weights@0#s2` for sentence 2 of the side-by-side panel. Each: rows, cols, exact values
 * (data-value) and cell texts.
 */
export function shownMatrices(page) {
  return page.$$eval('table[data-matrix]', (tables) =>
    Object.fromEntries(
      tables.map((t) => {
        const rows = [...t.tBodies[0].rows];
        const cells = rows.flatMap((r) => [...r.cells].filter((c) => c.tagName === 'TD'));
        const head = t.dataset.head && t.dataset.head !== '0' ? `@${t.dataset.head}` : '';
        const sentence = t.dataset.sentence ? `${head || '@0'}#s${t.dataset.sentence}` : head;
        return [`${t.dataset.matrix}${sentence}`, { rows: rows.length, cols: cells.length / rows.length, values: cells.map((c) => Number(c.dataset.value)), texts: cells.map((c) => c.textContent) }];
      }),
    ),
  );
}

/** A shown matrix as the core takes it. */
export const asMatrix = (m) => ({ data: Float32Array.from(m.values), rows: m.rows, cols: m.cols });

/** Loads the SIMD core in the page as window.__core (the page needs bypassCSP), for tests that
 * compare what the page shows with the core called on the same inputs; window.__plain(v) turns a
 * core result's typed arrays into plain arrays, so it can leave the page. */
export async function loadCoreInPage(page) {
  await page.evaluate(async () => {
    window.__core ??= await (await import(new URL('wasm/attention-core-relaxed.js', document.baseURI).href)).default();
    const plain = (v) => (ArrayBuffer.isView(v) ? Array.from(v) : Array.isArray(v) ? v.map(plain) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)])) : v);
    window.__plain = plain;
  });
}

/** The page's rounding: 3 decimals, typographic minus (none on a value that rounds to 0), −∞ for masked. */
export function fmt(v) {
  if (v === -Infinity) return '−∞';
  const s = v.toFixed(3);
  if (Number(s) === 0) return s.replace('-', '');
  return s.startsWith('-') ? `−${s.slice(1)}` : s;
}

/** The stage names, in order. */
export const STAGES = ['tokens', 'X', 'QKV', 'scores', 'scaled', 'masked', 'weights', 'output', 'concat', 'projection'];
