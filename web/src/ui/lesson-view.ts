// View 2, "Self-attention from scratch": one head taken apart, stage by stage. The worker makes
// seeded inputs (X, Wq, Wk, Wv) and the core computes every stage; this module only lays them out.
import type { Controller } from '../controller';
import { formatCell, matrixTable } from '../draw/matrix-table';
import type { Matrix, SelfAttentionStages } from '../protocol';
import { checkField, LIMITS, tokenize, type State } from '../settings';
import type { Store } from '../store';
import { checkYourself, LESSON_QUESTIONS } from './check-yourself';
import { h, scrollBox, uniqueId } from './dom';
import { mountLessonPanels } from './lesson-panels';

/** Width of the seeded embeddings in this view. */
export const LESSON_D_MODEL = 8;

/** The stages, in order; `stage` in the state indexes this list. */
export const STAGES = ['tokens', 'X', 'QKV', 'scores', 'scaled', 'masked', 'weights', 'output'] as const;

/** What each stage shows and why it matters, in two or three sentences (our words). */
const STAGE_TEXT: Record<(typeof STAGES)[number], string> = {
  tokens: 'The sentence is cut at spaces and lower-cased, so "The" and "the" are one token. Every matrix below has one row per token, in this order.',
  X: 'Each token becomes a row of d_model numbers. Here the rows are seeded random vectors rather than learned ones, so the mechanism can be watched without any training; a repeated word gets the same row.',
  QKV: 'Three matrices turn each row of X into a query (what the token looks for), a key (what it offers to others) and a value (what it hands on). Queries and keys share the width dk because they are compared with each other.',
  scores: 'Entry (i, j) is the dot product of query i and key j: large when the two point the same way. Nothing is normalised yet, so a row can hold any numbers.',
  scaled: 'Dot products of dk numbers grow roughly like √dk, and large scores make the softmax put nearly all of a row on one key. Dividing by √dk keeps the spread the same whatever dk is.',
  masked: 'With the causal mask a query may not look at later tokens: their scores become −∞, which the softmax turns into exactly 0. Without it every token reads the whole sentence.',
  weights: 'The softmax turns each row into positive weights that sum to 1: how much each query reads from each key. A token\'s row is its attention pattern.',
  output: 'Each output row is the weighted sum of the value rows, with that query\'s weights. A token\'s new representation is a blend of the tokens it attends to.',
};

/** A mounted view 2. */
export interface LessonView {
  refresh(): Promise<void>;
  destroy(): void;
}

/** Mounts view 2 into root. */
export function mountLessonView(root: HTMLElement, store: Store, ctl: Controller): LessonView {
  const cleanups: (() => void)[] = [];
  const panels = mountLessonPanels(store, ctl); // √dk, softmax stability, the blend, cell links
  cleanups.push(() => panels.destroy());

  const sentId = uniqueId('sentence');
  const sentInput = h('input', { id: sentId, type: 'text', name: 'sentence', maxlength: LIMITS.sentenceChars, autocomplete: 'off', 'aria-describedby': `${sentId}-msg` });
  const sentMsg = h('p', { class: 'field-msg', id: `${sentId}-msg`, role: 'status' });
  const num = (key: 'dk' | 'dv', label: string) => {
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
  const dk = num('dk', 'dk (query/key width)');
  const dv = num('dv', 'dv (value width)');
  const causalId = uniqueId('causal');
  const causalBox = h('input', { id: causalId, type: 'checkbox', name: 'causal' });
  const prevBtn = h('button', { type: 'button', 'data-action': 'prev', text: '← Prev' });
  const nextBtn = h('button', { type: 'button', class: 'primary', 'data-action': 'next', text: 'Next →' });
  const stageLabel = h('p', { class: 'stage-label', 'aria-live': 'polite' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const stagesEl = h('div', { class: 'stages' });

  root.append(
    h(
      'form',
      { class: 'controls lesson-controls', 'aria-label': 'Self-attention inputs' },
      h('div', { class: 'field sentence-field' }, h('label', { for: sentId, text: 'sentence' }), sentInput, sentMsg),
      h('div', { class: 'fields' }, dk.el, dv.el, h('div', { class: 'field' }, h('label', { for: causalId, class: 'inline' }, causalBox, ' causal mask'))),
      h('p', { class: 'hint', text: `X holds one seeded ${LESSON_D_MODEL}-number embedding per lower-cased word (the seed is the training view's). Every other number is computed by the wasm core.` }),
    ),
    h('nav', { class: 'stage-nav', 'aria-label': 'Stages' }, prevBtn, stageLabel, nextBtn),
    problem,
    stagesEl,
    checkYourself(LESSON_QUESTIONS),
  );
  root.querySelector('form')!.addEventListener('submit', (e) => e.preventDefault());

  sentInput.addEventListener('change', () => {
    const { value, correction } = checkField('sentence', sentInput.value);
    sentMsg.textContent = correction?.message ?? '';
    sentInput.value = String(value);
    store.set({ sentence: String(value) });
  });
  causalBox.addEventListener('change', () => store.set({ causal: causalBox.checked }));
  prevBtn.addEventListener('click', () => store.set({ stage: Math.max(0, store.state.stage - 1) }));
  nextBtn.addEventListener('click', () => store.set({ stage: Math.min(STAGES.length - 1, store.state.stage + 1) }));

  let result: SelfAttentionStages | null = null;
  let request = 0;

  async function refresh(): Promise<void> {
    const s = store.state;
    const tokens = tokenize(s.sentence).slice(0, LIMITS.sentenceTokens);
    const mine = ++request;
    try {
      const r = await ctl.selfAttention({ tokens, dModel: LESSON_D_MODEL, dk: s.dk, dv: s.dv, seed: s.seed, causal: s.causal });
      if (mine !== request) return;
      result = r;
      problem.hidden = true;
      render();
    } catch (e) {
      if (mine !== request) return;
      problem.textContent = e instanceof Error ? e.message : String(e);
      problem.hidden = false;
    }
  }

  function sync(s: Readonly<State>): void {
    if (sentInput.value !== s.sentence) sentInput.value = s.sentence;
    if (dk.input.value !== String(s.dk)) dk.input.value = String(s.dk);
    if (dv.input.value !== String(s.dv)) dv.input.value = String(s.dv);
    causalBox.checked = s.causal;
    prevBtn.disabled = s.stage === 0;
    nextBtn.disabled = s.stage === STAGES.length - 1;
  }

  function table(name: string, m: Matrix, rowLabels: string[], colLabels: string[], colour = false, causal = false): HTMLElement {
    const t = matrixTable(m, { rowLabels, colLabels, caption: name, colour: colour ? 'weights' : 'signed', causal });
    t.dataset.matrix = name;
    return h('figure', { class: 'matrix-fig' }, h('figcaption', {}, h('strong', { text: name }), ` (${m.rows}, ${m.cols})`), scrollBox(`${name} (scrolls sideways)`, t));
  }

  function render(): void {
    const r = result;
    if (!r) return;
    const s = store.state;
    const T = r.tokens.length;
    const tokRows = r.tokens.map((t, i) => `${i} ${t}`);
    const cols = (n: number, p = '') => Array.from({ length: n }, (_, j) => `${p}${j}`);
    const keyCols = r.tokens.map((t, j) => `${j} ${t}`);
    const dkv = Math.sqrt(r.Q.cols);
    const sections: HTMLElement[] = [];
    const section = (idx: number, title: string, formula: string, shape: string, ...body: (Node | string)[]) =>
      h(
        'section',
        { class: 'stage', 'data-stage': STAGES[idx], 'aria-current': idx === s.stage ? 'step' : undefined },
        h('h3', {}, `${idx + 1}. ${title}`),
        h('p', { class: 'formula' }, h('code', { text: formula }), h('span', { class: 'shape', text: shape })),
        h('p', { class: 'stage-text', text: STAGE_TEXT[STAGES[idx]] }),
        ...body,
      );
    sections.push(
      section(0, 'Tokens', 'tokens = split(sentence)', `T = ${T}`, h('ol', { class: 'tokens', start: 0 }, ...r.tokens.map((t) => h('li', { text: t })))),
      section(1, 'Embeddings', 'X = embed(tokens)', `(T, d_model) = (${T}, ${r.X.cols})`, table('X', r.X, tokRows, cols(r.X.cols, 'd'))),
      section(
        2,
        'Queries, keys, values',
        'Q = X Wq,  K = X Wk,  V = X Wv',
        `Q, K: (T, dk) = (${T}, ${r.Q.cols});  V: (T, dv) = (${T}, ${r.V.cols})`,
        h('div', { class: 'matrix-row' }, table('Q', r.Q, tokRows, cols(r.Q.cols, 'k')), table('K', r.K, tokRows, cols(r.K.cols, 'k')), table('V', r.V, tokRows, cols(r.V.cols, 'v'))),
        h(
          'details',
          {},
          h('summary', { text: `The projections Wq, Wk (d_model, dk) = (${r.Wq.rows}, ${r.Wq.cols}) and Wv (${r.Wv.rows}, ${r.Wv.cols})` }),
          h('div', { class: 'matrix-row' }, table('Wq', r.Wq, cols(r.Wq.rows, 'd'), cols(r.Wq.cols, 'k')), table('Wk', r.Wk, cols(r.Wk.rows, 'd'), cols(r.Wk.cols, 'k')), table('Wv', r.Wv, cols(r.Wv.rows, 'd'), cols(r.Wv.cols, 'v'))),
        ),
      ),
      section(3, 'Scores', 'S = Q Kᵀ   (query i · key j)', `(T, T) = (${T}, ${T})`, table('scores', r.scores, tokRows, keyCols)),
      section(4, 'Scaled scores', `S / √dk = S / √${r.Q.cols} = S / ${formatCell(dkv, 3)}`, `(T, T) = (${T}, ${T})`, table('scaledScores', r.scaledScores, tokRows, keyCols)),
      section(
        5,
        'Causal mask',
        r.causal ? 'S′ = S / √dk, with −∞ where key j > query i' : 'mask off: S′ = S / √dk (every query sees every key)',
        `(T, T) = (${T}, ${T})`,
        table('maskedScores', r.maskedScores, tokRows, keyCols),
      ),
      section(
        6,
        'Softmax weights',
        'A = softmax(S′), row by row: each row sums to 1',
        `(T, T) = (${T}, ${T})`,
        table('weights', r.weights, tokRows, keyCols, true, r.causal),
        h('p', { class: 'hint', text: `Colour: weight from 0 (dark purple) to 1 (yellow), viridis.${r.causal ? ' Hatched: masked, so exactly 0.' : ''}` }),
      ),
      section(7, 'Output', 'O = A V   (each row mixes the values it attends to)', `(T, dv) = (${T}, ${r.output.cols})`, table('output', r.output, tokRows, cols(r.output.cols, 'v'))),
    );
    stagesEl.replaceChildren(...sections.slice(0, s.stage + 1));
    panels.update(stagesEl, r);
    stageLabel.textContent = `Stage ${s.stage + 1} of ${STAGES.length}: ${sections[s.stage].querySelector('h3')!.textContent!.replace(/^\d+\. /, '')}`;
  }

  cleanups.push(
    store.subscribe((s, changed) => {
      sync(s);
      if (changed.has('sentence') || changed.has('dk') || changed.has('dv') || changed.has('causal') || changed.has('seed')) void refresh();
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
