// View 2, "Self-attention from scratch": H heads taken apart, stage by stage. The core makes
// the inputs from the seed (embeddings, every head's Wq, Wk, Wv, and Wo) and computes every stage;
// this module only lays them out. Tables carry data-matrix (the matrix's name) and data-head (its
// head, from 0); each stage's section carries data-stage.
import type { Controller } from '../../client/controller';
import { matrixTable } from '../../draw/matrix-table';
import { cell } from '../../model/format';
import type { Matrix } from '../../model/protocol';
import { selfAttentionRequest, type SelfAttentionStages } from './request';
import { checkField, LIMITS, tokenize, type State } from '../../settings/settings';
import type { Store } from '../../settings/store';
import { checkYourself, LESSON_QUESTIONS } from '../../ui/check-yourself';
import { h, scrollBox, uniqueId } from '../../ui/dom';
import { maskEditor } from './mask-editor';
import { fullyMaskedRows, MASK_PRESETS, maskCells, presetOf } from '../../settings/lesson-mask';
import { mountLessonPanels } from './panels';
import { shownRefresh } from '../../ui/shown-refresh';
import type { Parts } from '../../ui/parts';

/** Width of the seeded embeddings in this view. */
export const LESSON_D_MODEL = 8;

/** The stages, in order; `stage` in the state indexes this list. */
export const STAGES = ['tokens', 'X', 'QKV', 'scores', 'scaled', 'masked', 'weights', 'output', 'concat', 'projection'] as const;

/** What each stage shows and why it matters, in two or three sentences (our words). */
const STAGE_TEXT: Record<(typeof STAGES)[number], string> = {
  tokens:
    'The sentence is split into words (runs of letters, digits and apostrophes) and single punctuation marks. Each token is lower-cased before its embedding is looked up, so "The" and "the" share one row of E; every matrix below has one row per token, in this order.',
  X: 'Each token becomes a row of d_model numbers: here seeded random vectors rather than learned ones, so the mechanism can be watched without training. With positions on, row p also gets the sinusoidal code of position p added, so a repeated word gets a different row at each place.',
  QKV: 'Three matrices per head turn each row of X into a query (what the token looks for), a key (what it offers) and a value (what it hands on). Every head has its own three, so each can look for something different.',
  scores: 'Entry (i, j) is the dot product of query i and key j: large when the two point the same way. Nothing is normalised yet, so a row can hold any numbers.',
  scaled: 'Dot products of dk numbers grow roughly like √dk, and large scores make the softmax put nearly all of a row on one key. Dividing by √dk keeps the spread the same whatever dk is.',
  masked: 'A masked cell means query i may not read key j: its score becomes −∞, which the softmax turns into exactly 0. Click a cell of the mask to flip it, or pick a preset; every head uses the same mask.',
  weights: 'The softmax turns each row into weights that are at least 0 and sum to 1: how much each query reads from each key. A token\'s row is its attention pattern in that head.',
  output: 'Each head\'s output row is the weighted sum of its value rows, with that query\'s weights. A token\'s new representation is a blend of the tokens it attends to.',
  concat: 'The heads\' outputs are laid side by side, head 1\'s columns first. Each token now carries what every head found for it.',
  projection: 'One more matrix, W_o, mixes the concatenated heads back to d_model numbers per token, without a bias. This is where the heads\' findings are combined.',
};

/** A mounted view 2. */
export interface LessonView {
  refresh(): Promise<void>;
  destroy(): void;
}

/** The lesson's tokens: the first sentence's, then the second's (each at most sentenceTokens). */
export function lessonTokens(s: Readonly<State>): { tokens: string[]; split: number } {
  const first = tokenize(s.sentence).slice(0, LIMITS.sentenceTokens);
  const second = tokenize(s.secondSentence).slice(0, LIMITS.sentenceTokens);
  return { tokens: [...first, ...second], split: first.length };
}

/** Mounts view 2 into root. */
export function mountLessonView(root: HTMLElement, store: Store, ctl: Controller, parts: Parts): LessonView {
  const cleanups: (() => void)[] = [];
  const panels = mountLessonPanels(store, ctl); // √dk, softmax stability, the blend, cell links
  cleanups.push(() => panels.destroy());

  const text = (key: 'sentence' | 'secondSentence', label: string) => {
    const id = uniqueId(key);
    const input = h('input', { id, type: 'text', name: key, maxlength: LIMITS.sentenceChars, autocomplete: 'off', 'aria-describedby': `${id}-msg` });
    const msg = h('p', { class: 'field-msg', id: `${id}-msg`, role: 'status' });
    input.addEventListener('change', () => {
      const { value, correction } = checkField(key, input.value);
      msg.textContent = correction?.message ?? '';
      input.value = String(value);
      store.set({ [key]: String(value) });
    });
    return { input, msg, el: h('div', { class: 'field sentence-field' }, h('label', { for: id, text: label }), input, msg) };
  };
  const num = (key: 'dk' | 'dv' | 'lessonHeads' | 'lessonWindow', label: string) => {
    const id = uniqueId(key);
    const input = h('input', { id, type: 'number', name: key, min: LIMITS[key][0], max: LIMITS[key][1], step: 1, 'aria-describedby': `${id}-msg` });
    const msg = h('p', { class: 'field-msg', id: `${id}-msg`, role: 'status' });
    input.addEventListener('change', () => {
      const { value, correction } = checkField(key, input.value);
      msg.textContent = correction?.message ?? '';
      input.value = String(value);
      store.set({ [key]: value } as Partial<State>);
    });
    return { input, msg, el: h('div', { class: 'field' }, h('label', { for: id, text: label }), input, msg) };
  };
  const sent = text('sentence', 'sentence');
  const sent2 = text('secondSentence', 'second sentence (optional)');
  const dk = num('dk', 'dk (query/key width per head)');
  const dv = num('dv', 'dv (value width per head)');
  const heads = num('lessonHeads', 'heads');
  const win = num('lessonWindow', 'window k');
  const posId = uniqueId('lesson-positions');
  const posBox = h('input', { id: posId, type: 'checkbox', name: 'lessonPositions' });
  const maskId = uniqueId('mask');
  const maskSelect = h(
    'select',
    { id: maskId, name: 'lessonMask' },
    ...MASK_PRESETS.map((p) => h('option', { value: p, text: { none: 'none', causal: 'causal', window: 'sliding window of k', blocks: 'block-diagonal (two sentences)' }[p] })),
    h('option', { value: 'drawn', text: 'drawn by hand', disabled: true }),
  );
  const prevBtn = h('button', { type: 'button', 'data-action': 'prev', text: '← Prev' });
  const nextBtn = h('button', { type: 'button', class: 'primary', 'data-action': 'next', text: 'Next →' });
  const stageLabel = h('p', { class: 'stage-label', 'aria-live': 'polite' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const stagesEl = h('div', { class: 'stages' });
  const compareEl = h('div', { class: 'compare-slot' });

  const form = h(
    'form',
    { class: 'controls lesson-controls', 'aria-label': 'Self-attention inputs' },
      sent.el,
      sent2.el,
      h(
        'div',
        { class: 'fields' },
        heads.el,
        dk.el,
        dv.el,
        h('div', { class: 'field' }, h('label', { for: maskId, text: 'mask' }), maskSelect),
        win.el,
        h('div', { class: 'field' }, h('label', { for: posId, class: 'inline' }, posBox, ' add positions to X')),
      ),
    h('p', { class: 'hint', text: `X holds one ${LESSON_D_MODEL}-number embedding per lower-cased token, drawn by the wasm core from the seed (the training view's: attn demo self-attention --seed with the same sentence, dk, dv and heads prints the same numbers), plus its position's sinusoidal code when positions are on. Every other number is computed by the core too.` }),
  );
  form.addEventListener('submit', (e) => e.preventDefault());
  const stageNav = h('nav', { class: 'stage-nav', 'aria-label': 'Stages' }, prevBtn, stageLabel, nextBtn);
  root.append(
    parts.place(form, 'lesson-controls'),
    parts.place(stageNav, 'stage-nav'),
    problem,
    stagesEl,
    compareEl,
    parts.place(checkYourself(LESSON_QUESTIONS), 'questions'),
  );

  posBox.addEventListener('change', () => store.set({ lessonPositions: posBox.checked }));
  maskSelect.addEventListener('change', () => store.set({ lessonMask: maskSelect.value }));
  prevBtn.addEventListener('click', () => store.set({ stage: Math.max(0, store.state.stage - 1) }));
  nextBtn.addEventListener('click', () => store.set({ stage: Math.min(STAGES.length - 1, store.state.stage + 1) }));

  let result: SelfAttentionStages | null = null;
  let maskNote = '';
  /** The mask cell to focus again once the view is redrawn (it was flipped from the keyboard). */
  let refocus: [number, number] | null = null;
  // A link that opens at a later stage (stage=N) scrolls to it once it is drawn; in the page only,
  // never moving a host page around an embedded element.
  let scrollToStage = store.state.stage > 0;
  const view = shownRefresh(store, 'lesson', problem, async (isLatest) => {
    const s = store.state;
    const { tokens, split } = lessonTokens(s);
    const { cells, note } = maskCells(s.lessonMask, tokens.length, s.lessonWindow, split);
    const r = await ctl.call(selfAttentionRequest, { tokens, split, dModel: LESSON_D_MODEL, dk: s.dk, dv: s.dv, heads: s.lessonHeads, seed: s.seed, positions: s.lessonPositions, mask: cells });
    if (!isLatest()) return;
    result = r;
    maskNote = note ?? '';
    problem.hidden = true;
    render();
  });
  const { refresh, shown } = view;

  function sync(s: Readonly<State>): void {
    if (sent.input.value !== s.sentence) sent.input.value = s.sentence;
    if (sent2.input.value !== s.secondSentence) sent2.input.value = s.secondSentence;
    for (const [f, v] of [[dk, s.dk], [dv, s.dv], [heads, s.lessonHeads], [win, s.lessonWindow]] as const) if (f.input.value !== String(v)) f.input.value = String(v);
    posBox.checked = s.lessonPositions;
    maskSelect.value = presetOf(s.lessonMask);
    win.input.disabled = presetOf(s.lessonMask) !== 'window';
    prevBtn.disabled = s.stage === 0;
    nextBtn.disabled = s.stage === STAGES.length - 1;
  }

  /** A figure holding one matrix as a table, tagged with its name and head. */
  function table(name: string, m: Matrix, rowLabels: string[], colLabels: string[], opts: { head?: number; title?: string; colour?: boolean; masked?: Uint8Array; sentence?: number } = {}): HTMLElement {
    const title = opts.title ?? name;
    const t = matrixTable(m, { rowLabels, colLabels, caption: title, colour: opts.colour ? 'weights' : 'signed', masked: opts.masked });
    t.dataset.matrix = name;
    if (opts.head !== undefined) t.dataset.head = String(opts.head);
    if (opts.sentence !== undefined) t.dataset.sentence = String(opts.sentence);
    return h('figure', { class: 'matrix-fig' }, h('figcaption', {}, h('strong', { text: title }), ` (${m.rows}, ${m.cols})`), scrollBox(`${title} (scrolls sideways)`, t));
  }

  function render(): void {
    const r = result;
    if (!r) return;
    const s = store.state;
    const T = r.tokens.length;
    const H = r.heads.length;
    const D = r.X.cols;
    const dkN = r.heads[0].Q.cols;
    const dvN = r.heads[0].V.cols;
    const tokRows = r.tokens.map((t, i) => `${i} ${t}`);
    const cols = (n: number, p = '') => Array.from({ length: n }, (_, j) => `${p}${j}`);
    const headName = (hd: number) => (H > 1 ? ` (head ${hd + 1})` : '');
    /** One figure per head, side by side. */
    const perHead = (make: (hd: number) => HTMLElement[]) =>
      h('div', { class: 'lesson-heads' }, ...r.heads.map((_, hd) => h('div', { class: 'lesson-head', 'data-head': hd }, H > 1 ? h('h4', { text: `Head ${hd + 1}` }) : null, h('div', { class: 'matrix-row' }, ...make(hd)))));
    const square = (name: string, pick: 'scores' | 'scaledScores' | 'maskedScores' | 'weights', title: string, colour = false) =>
      perHead((hd) => [table(name, r.heads[hd][pick], tokRows, tokRows, { head: hd, title: `${title}${headName(hd)}`, colour, masked: pick === 'weights' ? r.mask : undefined })]);
    const empty = fullyMaskedRows(r.mask, T);
    const emptyNote = empty.length
      ? h('p', { class: 'note lesson-empty-rows', text: `${empty.length === 1 ? 'Row' : 'Rows'} ${empty.map((i) => tokRows[i]).join(', ')}: every key is masked. The softmax has nothing to share out (0/0), so the core gives ${empty.length === 1 ? 'that row' : 'those rows'} weights 0 and an output of 0 instead of NaN.` })
      : null;
    const sections: HTMLElement[] = [];
    const section = (idx: number, title: string, formula: string, shape: string, ...body: (Node | string | null)[]) =>
      h(
        'section',
        { class: 'stage', 'data-stage': STAGES[idx], 'aria-current': idx === s.stage ? 'step' : undefined },
        h('h3', {}, `${idx + 1}. ${title}`),
        h('p', { class: 'formula' }, h('code', { text: formula }), h('span', { class: 'shape', text: shape })),
        h('p', { class: 'stage-text', text: STAGE_TEXT[STAGES[idx]] }),
        ...body,
      );
    const tokenList = (from: number, to: number, label: string) => {
      const ol = h('ol', { class: 'tokens', start: from }, ...r.tokens.slice(from, to).map((t) => h('li', { text: t })));
      ol.style.counterReset = `tok ${from - 1}`; // the numbers go on across the two sentences
      return h('div', { class: 'token-list' }, label ? h('p', { class: 'token-list-label', text: label }) : null, ol);
    };
    const two = r.split < T;
    const xBody = r.P
      ? h('div', { class: 'matrix-row' }, table('E', r.E, tokRows, cols(D, 'd'), { title: 'E (token embeddings)' }), table('P', r.P, tokRows, cols(D, 'd'), { title: 'P (positions)' }), table('X', r.X, tokRows, cols(D, 'd'), { title: 'X = E + P' }))
      : table('X', r.X, tokRows, cols(D, 'd'));
    sections.push(
      section(0, 'Tokens', two ? 'tokens = split(sentence 1) + split(sentence 2)' : 'tokens = split(sentence)', `T = ${T}`, two ? tokenList(0, r.split, 'Sentence 1') : tokenList(0, T, ''), two ? tokenList(r.split, T, 'Sentence 2') : null),
      section(1, 'Embeddings', r.P ? 'X = E + P   (P[p, 2i] = sin(p / 10000^(2i/d)), P[p, 2i+1] = cos(…))' : 'X = embed(tokens)', `(T, d_model) = (${T}, ${D})`, xBody),
      section(
        2,
        'Queries, keys, values',
        'Q = X Wq,  K = X Wk,  V = X Wv   (per head)',
        `Q, K: (T, dk) = (${T}, ${dkN});  V: (T, dv) = (${T}, ${dvN})${H > 1 ? `;  ${H} heads` : ''}`,
        perHead((hd) => [table('Q', r.heads[hd].Q, tokRows, cols(dkN, 'k'), { head: hd, title: `Q${headName(hd)}` }), table('K', r.heads[hd].K, tokRows, cols(dkN, 'k'), { head: hd, title: `K${headName(hd)}` }), table('V', r.heads[hd].V, tokRows, cols(dvN, 'v'), { head: hd, title: `V${headName(hd)}` })]),
        h(
          'details',
          {},
          h('summary', { text: `The projections Wq, Wk (d_model, dk) = (${D}, ${dkN}) and Wv (${D}, ${dvN})${H > 1 ? ', per head' : ''}` }),
          perHead((hd) => [table('Wq', r.heads[hd].Wq, cols(D, 'd'), cols(dkN, 'k'), { head: hd, title: `Wq${headName(hd)}` }), table('Wk', r.heads[hd].Wk, cols(D, 'd'), cols(dkN, 'k'), { head: hd, title: `Wk${headName(hd)}` }), table('Wv', r.heads[hd].Wv, cols(D, 'd'), cols(dvN, 'v'), { head: hd, title: `Wv${headName(hd)}` })]),
        ),
      ),
      section(3, 'Scores', 'S = Q Kᵀ   (query i · key j)', `(T, T) = (${T}, ${T})`, square('scores', 'scores', 'scores')),
      section(4, 'Scaled scores', `S / √dk = S / √${dkN} = S / ${cell(Math.sqrt(dkN), 3)}`, `(T, T) = (${T}, ${T})`, square('scaledScores', 'scaledScores', 'scaled scores')),
      section(
        5,
        'Mask',
        'S′ = S / √dk, with −∞ where the mask is set',
        `(T, T) = (${T}, ${T})`,
        maskEditor({
          tokens: tokRows,
          cells: r.mask,
          preset: presetOf(s.lessonMask),
          k: s.lessonWindow,
          onChange: (value, i, j) => {
            refocus = [i, j];
            store.set({ lessonMask: value });
          },
        }),
        maskNote ? h('p', { class: 'note', text: maskNote }) : null,
        emptyNote,
        square('maskedScores', 'maskedScores', 'masked scores'),
      ),
      section(
        6,
        'Softmax weights',
        'A = softmax(S′), row by row: each row sums to 1 (or is all 0 when fully masked)',
        `(T, T) = (${T}, ${T})`,
        square('weights', 'weights', 'weights', true),
        h('p', { class: 'hint', text: 'Colour: weight from 0 (dark purple) to 1 (yellow), viridis. Hatched: masked, so exactly 0.' }),
        emptyNote?.cloneNode(true) ?? null,
      ),
      section(7, 'Head outputs', 'O = A V   (each row mixes the values it attends to)', `(T, dv) = (${T}, ${dvN})`, perHead((hd) => [table('output', r.heads[hd].output, tokRows, cols(dvN, 'v'), { head: hd, title: `output${headName(hd)}` })])),
      section(
        8,
        'Concatenation',
        H > 1 ? `C = [O₁ | … | O${subscript(H)}]` : 'C = O₁   (one head: nothing to join)',
        `(T, H·dv) = (${T}, ${H * dvN})`,
        table('concat', r.concat, tokRows, Array.from({ length: H * dvN }, (_, c) => `h${Math.floor(c / dvN) + 1} v${c % dvN}`)),
      ),
      section(
        9,
        'Output projection',
        'Y = C W_o   (no bias)',
        `W_o: (H·dv, d_model) = (${H * dvN}, ${D});  Y: (T, d_model) = (${T}, ${D})`,
        h('div', { class: 'matrix-row' }, table('Wo', r.Wo, Array.from({ length: H * dvN }, (_, c) => `h${Math.floor(c / dvN) + 1} v${c % dvN}`), cols(D, 'd'), { title: 'W_o' }), table('projected', r.projected, tokRows, cols(D, 'd'), { title: 'Y = C W_o' })),
      ),
    );
    stagesEl.replaceChildren(...sections.slice(0, s.stage + 1));
    // The blend takes head 1 apart (each head blends its own value rows the same way).
    panels.update(stagesEl, { tokens: r.tokens, head: H > 1 ? 0 : null, weights: r.heads[0].weights, V: r.heads[0].V, output: r.heads[0].output }, stageNav);
    stageLabel.textContent = `Stage ${s.stage + 1} of ${STAGES.length}: ${sections[s.stage].querySelector('h3')!.textContent!.replace(/^\d+\. /, '')}`;
    compareEl.replaceChildren(...(r.apart.length === 2 && s.stage >= STAGES.indexOf('weights') ? [compare(r)] : []));
    if (refocus) stagesEl.querySelector<HTMLButtonElement>(`button.mask-cell[data-i="${refocus[0]}"][data-j="${refocus[1]}"]`)?.focus();
    refocus = null;
    if (scrollToStage && shown() && stagesEl.getRootNode() === document) {
      scrollToStage = false;
      sections[s.stage].scrollIntoView({ block: 'start' });
    }
  }

  /** The two sentences, each run alone through the same weights, side by side. */
  function compare(r: SelfAttentionStages): HTMLElement {
    const H = r.heads.length;
    const labels = r.apart.map((a) => a.tokens.map((t, i) => `${i} ${t}`));
    return h(
      'section',
      { class: 'compare', 'data-compare': 'sentences' },
      h('h3', { text: 'Two sentences side by side' }),
      h('p', {
        class: 'stage-text',
        text: 'Each sentence alone, through the same weights and its own block of the mask, with positions counted from 0 in each. A word that both sentences share gets the same query and key, yet its row of weights differs, because the keys around it differ. With the block-diagonal mask and positions off, these are exactly the blocks of the weights above.',
      }),
      ...r.heads.map((_, hd) =>
        h(
          'div',
          { class: 'lesson-head', 'data-head': hd },
          H > 1 ? h('h4', { text: `Head ${hd + 1}` }) : null,
          h('div', { class: 'matrix-row' }, ...r.apart.map((a, n) => table('weights', a.weights[hd], labels[n], labels[n], { head: hd, sentence: n + 1, colour: true, title: `weights, sentence ${n + 1}${H > 1 ? ` (head ${hd + 1})` : ''}` }))),
        ),
      ),
    );
  }

  cleanups.push(
    store.subscribe((s, changed) => {
      sync(s);
      const inputs = ['sentence', 'secondSentence', 'dk', 'dv', 'lessonHeads', 'lessonMask', 'lessonWindow', 'lessonPositions', 'seed'] as const;
      if (inputs.some((k) => changed.has(k)) || view.cameIntoView(changed)) void refresh();
      else if (changed.has('stage')) {
        render();
        const cur = stagesEl.lastElementChild as HTMLElement | null;
        if (cur && changed.size === 1 && cur.getBoundingClientRect().top > window.innerHeight * 0.6) {
          const reduce = matchMedia('(prefers-reduced-motion: reduce)').matches;
          cur.scrollIntoView({ behavior: reduce ? 'auto' : 'smooth', block: 'start' });
        }
      }
    }),
  );
  sync(store.state);
  return {
    refresh,
    destroy: () => {
      for (const f of cleanups) f();
      root.replaceChildren();
    },
  };
}

/** n as subscript digits (O₁₂). */
function subscript(n: number): string {
  return String(n).replace(/\d/g, (d) => '₀₁₂₃₄₅₆₇₈₉'[Number(d)]);
}
