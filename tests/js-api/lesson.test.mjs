// The lesson's numbers are the same in the terminal and on the page: `attn demo self-attention
// --seed N` (native) prints, table by table, the numbers the JS API computes from lessonInputs for
// the same sentence and seed, the inputs the page's lesson view shows (web/src/worker/
// self-attention.ts passes them on; tests/e2e/lesson.test.mjs checks the page against the core).
// The CLI prints 3 decimals, so a number agrees when it is within the printing's rounding.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, runCli, variants } from './core.mjs';

/** The first table whose title line starts with `title` (the title, a line of column labels, then
 * rows "label | numbers") in the CLI's output: its rows of numbers. */
function table(out, title) {
  const lines = out.split('\n');
  const at = lines.findIndex((l, i) => l.startsWith(`   ${title}`) && lines[i + 2]?.includes('|'));
  assert.ok(at >= 0, `the CLI prints a table "${title}"`);
  const rows = [];
  for (const line of lines.slice(at + 2)) {
    const bar = line.indexOf('|');
    const cells = bar < 0 ? [] : line.slice(bar + 1).trim().split(/\s+/);
    if (!cells.length || !cells.every((c) => /^(-?inf|nan|-?[0-9.]+(e[-+][0-9]+)?)$/.test(c))) break;  // the next title
    rows.push(cells.map((c) => (c === '-inf' ? -Infinity : c === 'inf' ? Infinity : Number(c))));
  }
  return rows;
}

/** Checks that the CLI's table shows m (a core matrix) to its printed precision. */
function same(out, title, m) {
  const shown = table(out, title);
  assert.deepEqual([shown.length, shown[0].length], [m.rows, m.cols], `${title}: shape`);
  shown.forEach((row, i) =>
    row.forEach((p, j) => {
      const v = m.data[i * m.cols + j];
      if (!Number.isFinite(p)) return assert.equal(p, v, `${title}[${i}][${j}]`);
      // %8.3f rounds to 0.0005; %8.1e (|v| < 0.0005 or >= 1000) to 5% of the value.
      const tol = Math.abs(p) >= 1000 || (p !== 0 && Math.abs(p) < 0.0005) ? 0.05 * Math.abs(p) : 0.0005 + 1e-6;
      assert.ok(Math.abs(p - v) <= tol, `${title}[${i}][${j}]: the CLI prints ${p}, the JS API has ${v}`);
    }),
  );
}

const CASES = [
  { sentence: 'The cat sat on the mat', seed: 42, dk: 4, dv: 4, heads: 2, positions: true },
  { sentence: 'a dog saw a cat', seed: 7, dk: 3, dv: 5, heads: 3, positions: false, causal: true },
];

for (const variant of variants) {
  describe(`the lesson's numbers (${variant})`, async () => {
    const core = await loadCore(variant);

    for (const c of CASES) {
      test(`attn demo self-attention --seed ${c.seed} prints the JS API's numbers for "${c.sentence}"`, () => {
        const flags = ['--sentence', c.sentence, '--seed', String(c.seed), '--d-model', '8', '--dk', String(c.dk), '--dv', String(c.dv), '--heads', String(c.heads)];
        if (!c.positions) flags.push('--no-positions');
        if (c.causal) flags.push('--causal');
        const out = runCli(['demo', 'self-attention', ...flags]);
        // The page lower-cases the words the same way (views/lesson/handler.ts).
        const tokens = c.sentence.split(' ').map((w) => w.toLowerCase());
        const inputs = core.lessonInputs({ tokens, dModel: 8, dk: c.dk, dv: c.dv, heads: c.heads, seed: c.seed });
        assert.equal(inputs.Wq.length, c.heads);
        const X = c.positions ? core.addPositions(inputs.E).X : inputs.E;
        same(out, 'X', X);
        // One head: head 0 of the inputs.
        const one = core.selfAttention({ X, Wq: inputs.Wq[0], Wk: inputs.Wk[0], Wv: inputs.Wv[0], causal: !!c.causal });
        for (const [title, m] of [['Q', one.Q], ['K', one.K], ['V', one.V], ['scores', one.scores], ['weights', one.weights], ['output', one.output]]) same(out, title, m);
        same(out, c.causal ? 'scaled and masked scores' : 'scaled scores', one.maskedScores);
        // Every head, the concatenation and W_o.
        const mh = core.multiHeadSelfAttention({ X, Wq: inputs.Wq, Wk: inputs.Wk, Wv: inputs.Wv, Wo: inputs.Wo, causal: !!c.causal });
        mh.heads.forEach((h, i) => {
          for (const [name, m] of [['Q', h.Q], ['K', h.K], ['V', h.V], ['weights', h.weights], ['output', h.output]]) same(out, `${name}_${i + 1}`, m);
        });
        same(out, 'concat (T, H*dv)', mh.concat);
        same(out, 'output = concat W_o', mh.output);
      });
    }

    test('lessonInputs: a word keeps its row whatever the sentence; bad arguments are named', () => {
      const a = core.lessonInputs({ tokens: ['the', 'cat', 'the'], dModel: 8, dk: 4, dv: 4, seed: 3 });
      const b = core.lessonInputs({ tokens: ['cat'], dModel: 8, dk: 4, dv: 4, seed: 3 });
      assert.deepEqual([a.E.rows, a.E.cols, a.Wq.length, a.Wo.rows, a.Wo.cols], [3, 8, 1, 4, 8]);
      assert.deepEqual(a.E.data.slice(0, 8), a.E.data.slice(16, 24));
      assert.deepEqual(a.E.data.slice(8, 16), b.E.data);
      assert.throws(() => core.lessonInputs({ tokens: [], dModel: 8, dk: 4, dv: 4, seed: 3 }), /tokens has 0 words/);
      assert.throws(() => core.lessonInputs({ tokens: ['a', 2], dModel: 8, dk: 4, dv: 4, seed: 3 }), /tokens\[1\] must be a string/);
      assert.throws(() => core.lessonInputs({ tokens: ['a'], dModel: 8, dk: 4, dv: 4, heads: 9, seed: 3 }), /heads/);
      assert.throws(() => core.lessonInputs({ tokens: ['a'], dModel: 8, dk: 4, dv: 4, seed: 3, extra: 1 }), /extra/);
    });
  });
}
