// View 3, "The transformer block, step by step": one block of the model the settings describe
// (the training view's config, at its seeded init, on the training view's sample, or on random
// tokens where the task's own sample is one token repeated), taken apart
// stage by stage: norm -> attention -> add -> norm -> FFN -> add (pre-norm) or attention -> add
// -> norm -> FFN -> add -> norm (post-norm). The core computes every stage in the worker
// (transformerBlock); this module only lays them out. Each stage's section carries data-stage,
// each grid data-matrix (its name) and data-rows/data-cols (its shape).
import type { Controller } from '../../client/controller';
import { matrixSvg } from '../../draw/matrix-svg';
import type { Matrix, SampleSpec } from '../../model/protocol';
import { tiledAttentionRequest, transformerBlockRequest, type BlockStages, type TiledStep } from './request';
import { matrixTable } from '../../draw/matrix-table';
import { count, sci } from '../../model/format';
import { checkField, CONFIG_KEYS, keysOf, settingOf, type Correction, type State } from '../../settings/settings';
import { fixConsistency, generatedSample, sampleSpec, trainerConfig } from '../../settings/state';
import type { Store } from '../../settings/store';
import { alibiFigure, ropeFigure } from './figures';
import { h, keepClearOfStageBar, scrollBox, uniqueId } from '../../ui/dom';
import type { Parts } from '../../ui/parts';
import { CONTROLS } from '../../ui/train-controls';
import { shownRefresh } from '../../ui/shown-refresh';

/** The stages of each placement, in order. */
export const BLOCK_STAGES = {
  pre: ['x', 'norm1', 'attention', 'add1', 'norm2', 'ffn', 'add2'],
  post: ['x', 'attention', 'add1', 'norm1', 'ffn', 'add2', 'norm2'],
} as const;
type StageId = (typeof BLOCK_STAGES)['pre'][number];

/** The settings the view's controls set: the model's own keys, shared with the training view,
 * and the view's own norm and FFN (blockNorm, blockFfn). */
const BLOCK_CONTROL_KEYS = ['nHeads', 'kvHeads', 'positions', 'blockNorm', 'blockFfn', 'seed'] as const satisfies readonly (keyof State)[];

/** The block's model: the training view's config with view 3's own norm and FFN. */
export function blockConfig(s: Readonly<State>): ReturnType<typeof trainerConfig> {
  return { ...trainerConfig(s), norm: s.blockNorm, ffn: s.blockFfn };
}

/** The sample the block runs on: the training view's, except that the repeat task's own draw (one
 * token repeated, so the rows would differ only by their positions) gives way to random tokens of
 * the same seed (the shift task's generator). Ids the learner typed are always used as they are. */
export function blockSample(s: Readonly<State>): SampleSpec {
  return generatedSample(s) && s.task === 'repeat' ? { seed: s.sampleSeed, task: 'shift' } : sampleSpec(s);
}

/** A mounted view 3. */
export interface BlockView {
  refresh(): Promise<void>;
  destroy(): void;
}

/** Mounts view 3 into root. */
export function mountBlockView(root: HTMLElement, store: Store, ctl: Controller, parts: Parts): BlockView {
  const cleanups: (() => void)[] = [];
  const inputs = new Map<keyof State, HTMLInputElement | HTMLSelectElement>();
  const messages = new Map<keyof State, HTMLElement>();

  /** A control's value: checked like a link, then made consistent with the other settings (the
   * rules a URL goes through), each correction said under the control. */
  function onControl(key: keyof State, raw: string): void {
    const { value, correction } = checkField(key, raw);
    const next = { ...store.state, [key]: value } as State;
    const corrections: Correction[] = correction ? [correction] : [];
    fixConsistency(next, corrections);
    for (const m of messages.values()) m.textContent = '';
    messages.get(key)!.textContent = corrections.map((c) => c.message).join(' ');
    const patch: Partial<State> = {};
    for (const k of Object.keys(next) as (keyof State)[]) if (next[k] !== store.state[k]) (patch as Record<string, unknown>)[k] = next[k];
    store.set(patch);
    sync(store.state);
  }

  // Pre/post: a switch of two radio buttons.
  const placeName = uniqueId('block-norm-position');
  const placeMsg = h('p', { class: 'field-msg', role: 'status' });
  messages.set('normPosition', placeMsg);
  const radios = (['pre', 'post'] as const).map((v) => {
    const r = h('input', { type: 'radio', name: placeName, value: v, 'data-key': 'normPosition' });
    r.addEventListener('change', () => r.checked && onControl('normPosition', v));
    return r;
  });
  const placeField = h(
    'fieldset',
    { class: 'field block-switch', 'data-key': 'normPosition' },
    h('legend', { text: 'norm position' }),
    h('label', { class: 'inline' }, radios[0], ' pre-norm'),
    h('label', { class: 'inline' }, radios[1], ' post-norm'),
    placeMsg,
  );
  const fields = BLOCK_CONTROL_KEYS.map((key) => {
    // The view's own keys have no control in the training view: their row of the key table says it.
    const row = settingOf(key);
    const c = CONTROLS.find((x) => x.key === key) ?? { label: row.label, options: row.values ?? undefined, min: undefined, max: undefined, step: undefined };
    // Named block-<key> (the training view's control of the same setting is named <key>); the
    // view's own keys by their hash key, block-norm and block-ffn.
    const name = row.hash.startsWith('block-') ? row.hash : `block-${key}`;
    const id = uniqueId(name);
    const msg = h('p', { class: 'field-msg', id: `${id}-msg`, role: 'status' });
    messages.set(key, msg);
    let input: HTMLInputElement | HTMLSelectElement;
    if (c.options) {
      input = h('select', { id, name, 'aria-describedby': `${id}-msg` }, ...c.options.map((o) => h('option', { value: o, text: o })));
    } else {
      input = h('input', { id, name, type: 'number', min: c.min, max: c.max, step: c.step, 'aria-describedby': `${id}-msg` });
    }
    input.addEventListener('change', () => onControl(key, input.value));
    inputs.set(key, input);
    return h('div', { class: 'field', 'data-key': key }, h('label', { for: id, text: c.label }), input, msg);
  });
  const pairId = uniqueId('block-rope-pair');
  const pairSelect = h('select', { id: pairId, name: 'ropePair' });
  const pairField = h('div', { class: 'field', 'data-key': 'ropePair' }, h('label', { for: pairId, text: 'RoPE pair drawn' }), pairSelect);
  pairSelect.addEventListener('change', () => void refresh());

  const form = h(
    'form',
    { class: 'controls block-controls', 'aria-label': 'Transformer block settings' },
    h('div', { class: 'fields' }, placeField, ...fields, pairField),
    h('p', {
      class: 'hint',
      text: 'One block of the model the training view builds (its d_model, seq_len and the rest are the same settings), with the weights it starts from for this seed, run on the training view\'s sample (on the repeat task, whose sample is one token repeated, on random tokens instead). Changing heads, K/V heads, positions, the seed or the norm position here changes that model too; block norm and block FFN are this view\'s own (a LayerNorm and a GELU FFN unless you pick others), so the block has every stage even when the training view\'s model has no norm or FFN. Every number is computed by the wasm core.',
    }),
  );
  form.addEventListener('submit', (e) => e.preventDefault());
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const stagesEl = h('div', { class: 'stages block-stages' });
  const tiled = tiledStep();

  // Previous / next over the stages: the current stage is outlined, scrolled to and its heading
  // focused, so the keyboard and a screen reader follow it; every stage stays on the page.
  const prevBtn = h('button', { type: 'button', 'data-action': 'block-prev' }, h('span', { 'aria-hidden': 'true', text: '← ' }), 'Previous stage');
  const nextBtn = h('button', { type: 'button', class: 'primary', 'data-action': 'block-next' }, 'Next stage', h('span', { 'aria-hidden': 'true', text: ' →' }));
  // Styled as view 2's stage bar, under names of its own (view 2's tests and parts find theirs).
  const stageLabel = h('p', { class: 'block-stage-label', 'aria-live': 'polite' });
  const stageNav = h('nav', { class: 'block-nav', 'aria-label': 'Stages of the block' }, prevBtn, stageLabel, nextBtn);
  let current = 0;
  /** Marks stage i as the current one; with move, scrolls to it and focuses its heading. */
  function goTo(i: number, move: boolean): void {
    const sections = [...stagesEl.querySelectorAll<HTMLElement>('.block-stage')];
    if (sections.length === 0) return;
    current = Math.max(0, Math.min(sections.length - 1, i));
    sections.forEach((sec, k) => (k === current ? sec.setAttribute('aria-current', 'step') : sec.removeAttribute('aria-current')));
    const sec = sections[current];
    stagesEl.dataset.current = sec.dataset.stage;
    stageLabel.textContent = `Stage ${current + 1} of ${sections.length}: ${sec.querySelector('h3')!.textContent!.replace(/^\d+\. /, '')}`;
    prevBtn.disabled = current === 0;
    nextBtn.disabled = current === sections.length - 1;
    if (!move) return;
    const reduce = matchMedia('(prefers-reduced-motion: reduce)').matches;
    sec.scrollIntoView({ behavior: reduce ? 'auto' : 'smooth', block: 'start' });
    sec.querySelector<HTMLElement>('h3')!.focus({ preventScroll: true });
  }
  prevBtn.addEventListener('click', () => goTo(current - 1, true));
  nextBtn.addEventListener('click', () => goTo(current + 1, true));
  root.append(parts.place(form, 'block-controls'), stageNav, problem, stagesEl, tiled.section);
  const barObserver = keepClearOfStageBar(stagesEl, stageNav);
  cleanups.push(() => barObserver?.disconnect());

  function sync(s: Readonly<State>): void {
    for (const r of radios) r.checked = r.value === s.normPosition;
    for (const [key, el] of inputs) if (el.value !== String(s[key])) el.value = String(s[key]);
    pairField.hidden = s.positions !== 'rope';
  }

  const view = shownRefresh(
    store,
    'block',
    problem,
    async (isLatest) => {
      const s = store.state;
      const r = await ctl.call(transformerBlockRequest, { config: blockConfig(s), sample: blockSample(s), ropePair: Number(pairSelect.value || 0) });
      if (!isLatest()) return;
      problem.hidden = true;
      render(r);
      await tiled.refresh(r, isLatest);
    },
    (m) => `The block could not be built: ${m}`,
  );
  const refresh = view.refresh;

  function render(r: BlockStages): void {
    const T = r.seqLen, D = r.dModel, H = r.nHeads, KV = r.kvHeads, Dh = r.dHead, F = r.ffnWidth;
    const tokens = Array.from(r.ids, String);
    const pre = r.normPosition === 'pre';
    const normName = r.norm === 'rmsnorm' ? 'RMSNorm' : 'LayerNorm';
    const normFormula = r.norm === 'rmsnorm' ? 'x / √(mean(x²) + 1e-6) · w' : '(x − mean) / √(var + 1e-5) · w + b';
    // The pair select follows dHead.
    const pairs = Math.floor(Dh / 2);
    if (pairSelect.options.length !== pairs) {
      const keep = Math.min(Number(pairSelect.value || 0), pairs - 1);
      pairSelect.replaceChildren(...Array.from({ length: pairs }, (_, i) => h('option', { value: i, text: `${i} (dims ${2 * i}, ${2 * i + 1})` })));
      pairSelect.value = String(Math.max(0, keep));
    }
    const grid = (name: string, m: Matrix, opts: { colour?: 'signed' | 'weights'; title?: string; causal?: boolean; head?: number; width?: number } = {}) =>
      h(
        'figure',
        { class: 'matrix-fig', 'data-matrix': name, 'data-head': opts.head },
        h('figcaption', {}, h('strong', { text: opts.title ?? name }), ` (${m.rows}, ${m.cols})`),
        matrixSvg(m, { label: opts.title ?? name, colour: opts.colour ?? 'signed', width: opts.width, masked: opts.causal ? (i, j) => j > i : undefined }),
      );
    const headWeights = (hd: number): Matrix => ({ rows: T, cols: T, data: r.weights.data.slice(hd * T * T, (hd + 1) * T * T) });
    const kvNote = (hd: number) => (KV < H ? ` · K/V ${Math.floor(hd / (H / KV)) + 1}` : '');
    const shapeTD = `(T, d_model) = (${T}, ${D})`;
    const normStage = (which: 1 | 2, input: string, m: Matrix | null, text: string): HTMLElement =>
      m
        ? section(`norm${which}`, `${normName} ${which}`, `norm${which}(${input}) = ${normFormula}`, shapeTD, text, grid(`norm${which}`, m))
        : section(`norm${which}`, `Norm ${which}: none`, `${input} passes through`, shapeTD, r.norm === 'none' ? 'With block norm set to none there is no norm here: the next step reads the stream as it is. Pick layernorm or rmsnorm to see each row rescaled.' : 'Without an FFN there is no second sublayer, and so no second norm.', null, true);

    const sections: HTMLElement[] = [];
    const section = (id: StageId, title: string, formula: string, shape: string, text: string, body: Node | null, skipped = false): HTMLElement =>
      h(
        'section',
        { class: `stage block-stage${skipped ? ' skipped' : ''}`, 'data-stage': id, 'data-skipped': skipped ? 'true' : undefined },
        h('h3', { text: title }),
        h('p', { class: 'formula' }, h('code', { text: formula }), h('span', { class: 'shape', text: shape })),
        h('p', { class: 'stage-text', text }),
        body,
      );

    const posText: Record<BlockStages['positions'], string> = {
      sinusoidal: 'x = token_emb[ids] + P   (P: the fixed sinusoidal table)',
      learned: 'x = token_emb[ids] + pos_emb[0..T)   (a trained table)',
      rope: 'x = token_emb[ids]   (RoPE turns q and k inside attention)',
      alibi: 'x = token_emb[ids]   (ALiBi biases the scores inside attention)',
      none: 'x = token_emb[ids]   (no position information at all)',
    };
    const stage = (id: StageId): HTMLElement => {
      switch (id) {
        case 'x': {
          const same = new Set(tokens).size === 1 && T > 1 ? ' Every token of this sample is the same id, so rows can differ only through positions: type other ids in the training view\'s sample box to see more.' : '';
          const start = `One row per token of the sample (ids ${tokens.join(' ')}), d_model numbers each: the residual stream as it enters the block. Blue is negative, orange positive, white near 0; every grid is scaled to its own largest value.`;
          if (!r.xTokens || !r.xPositions) return section('x', 'Input x', posText[r.positions], shapeTD, `${start}${same}`, grid('x', r.x));
          const largest = (m: Matrix) => m.data.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
          // A repeated id, to point at: its rows of the token part are the same.
          const again = tokens.findIndex((t, i) => tokens.indexOf(t) < i);
          const example = again > 0 ? ` (here id ${tokens[again]} at positions ${tokens.indexOf(tokens[again])} and ${again})` : '';
          const ratio = largest(r.xPositions) / Math.max(largest(r.xTokens), 1e-30);
          return section(
            'x',
            'Input x',
            posText[r.positions],
            shapeTD,
            `${start} x is drawn in its two parts first: the token embedding's rows, where the same id always gives the same row${example} and different ids different rows, and what the positions add, the same for every sample. ` +
              `${ratio >= 3 ? `The positions' numbers are about ${Math.round(ratio)} times larger here, so in x itself their stripes hide the tokens; each part on its own scale shows both.` : 'Both parts are of a similar size here, so x shows them together.'}${same}`,
            h(
              'div',
              { class: 'matrix-row' },
              grid('xTokens', r.xTokens, { title: 'token_emb[ids]' }),
              grid('xPositions', r.xPositions, { title: r.positions === 'sinusoidal' ? 'P (positions)' : 'pos_emb[0..T)' }),
              grid('x', r.x, { title: 'x (their sum)' }),
            ),
          );
        }
        case 'norm1':
          return pre
            ? normStage(1, 'x', r.norm1, `Pre-norm rescales each row of x before attention reads it, so attention always sees rows of the same size. The stream itself, x, is left as it is and goes round the sublayer to the add.`)
            : normStage(1, 'x + attn(x)', r.norm1, `Post-norm rescales each row after the add, so the stream itself is normalised. Every row now has ${r.norm === 'rmsnorm' ? 'mean square 1' : 'mean 0 and variance 1'} (the weights start at 1), whatever size the sum had.`);
        case 'attention': {
          const input = pre && r.norm1 ? 'norm1(x)' : 'x';
          const figs = h(
            'div',
            { class: 'matrix-row' },
            grid('q', r.q, { title: r.positions === 'rope' ? 'q (after RoPE)' : 'q' }),
            grid('k', r.k, { title: r.positions === 'rope' ? 'k (after RoPE)' : 'k' }),
            ...Array.from({ length: H }, (_, hd) => grid('weights', headWeights(hd), { colour: 'weights', causal: true, head: hd, width: 150, title: `weights, head ${hd + 1}${kvNote(hd)}` })),
            grid('attnOut', r.attnOut, { title: 'attn out' }),
          );
          const extra = r.rope ? ropeFigure(r.rope, tokens) : r.alibi ? alibiFigure(r.alibi, T) : null;
          return section(
            'attention',
            'Attention',
            `attn(${input}) = out_proj(concat_h softmax(q_h k_hᵀ / √${Dh}${r.alibi ? ' + bias_h' : ''} + mask) v_h)`,
            `q: (T, H·d_head) = (${T}, ${H * Dh});  k, v: (T, KV·d_head) = (${T}, ${KV * Dh});  weights: ${H} × (${T}, ${T});  out: (${T}, ${D})`,
            `Each head compares its queries with the keys of earlier tokens and blends their values with the resulting weights (yellow: most of the row, dark: little; grey: the future, masked). ${KV < H ? `With ${KV} K/V head${KV > 1 ? 's' : ''} for ${H} query heads, heads that share a K/V head read the same keys and values and differ only in their queries.` : 'Every head has its own keys and values.'}`,
            h('div', {}, figs, extra),
          );
        }
        case 'add1':
          return section('add1', 'Add (residual)', 'x + attn(…)', shapeTD, 'The attention output is added to the stream, not put in its place: whatever attention did not change reaches the next step untouched. This shortcut is also the path the gradient takes straight back to the embedding.', grid('sum1', r.sum1, { title: 'x + attn' }));
        case 'norm2':
          return pre
            ? normStage(2, 'h', r.norm2, 'The second pre-norm rescales the rows of the stream h = x + attn before the FFN reads them; the stream goes round the FFN unchanged to the second add.')
            : normStage(2, 'h + ffn(h)', r.norm2, 'The second post-norm rescales the stream after the FFN\'s add: this is what the next block (or lm_head) receives.');
        case 'ffn': {
          const input = pre ? (r.norm2 ? 'norm2(h)' : 'h') : r.norm1 ? 'norm1(x + attn)' : 'x + attn';
          if (!r.ffnOut) return section('ffn', 'FFN: none', 'no feed-forward network', shapeTD, 'With block FFN set to none the block is attention alone. Pick relu, gelu or swiglu to add the position-wise network that works on each token by itself.', null, true);
          const hidden = `(T, F) = (${T}, ${F})`;
          const figs = h(
            'div',
            { class: 'matrix-row' },
            r.ffnGate ? grid('ffnGate', r.ffnGate, { title: 'gate(x)' }) : null,
            r.ffnUp ? grid('ffnUp', r.ffnUp, { title: 'up(x)' }) : null,
            r.ffnHidden ? grid('ffnHidden', r.ffnHidden, { title: r.ffn === 'swiglu' ? 'silu(gate) · up' : `${r.ffn}(up)` }) : null,
            grid('ffnOut', r.ffnOut, { title: 'ffn out' }),
          );
          const formula = r.ffn === 'swiglu' ? `ffn(${input}) = down(silu(gate(·)) ⊙ up(·))` : `ffn(${input}) = down(${r.ffn}(up(·)))`;
          const text =
            r.ffn === 'swiglu'
              ? `Each token is widened to F = ${F} numbers twice: the gate, squashed by SiLU, decides how much of the up branch gets through, cell by cell. down brings the product back to d_model. No token looks at another here.`
              : `Each token is widened to F = ${F} numbers, passed through ${r.ffn === 'relu' ? 'ReLU, which zeroes every negative cell (white in relu(up))' : 'GELU, which keeps positive cells and shrinks negative ones towards 0'}, and brought back to d_model by down. No token looks at another here.`;
          return section('ffn', `FFN (${r.ffn})`, formula, `hidden: ${hidden};  out: ${shapeTD}`, text, figs);
        }
        case 'add2':
          if (!r.sum2) return section('add2', 'Add: none', 'no FFN, nothing to add', shapeTD, 'Without an FFN there is no second add: the stream after attention is the block\'s output.', null, true);
          return section(
            'add2',
            'Add (residual)',
            `${pre ? 'h' : r.norm1 ? 'norm1(…)' : 'h'} + ffn(…)`,
            shapeTD,
            `The FFN's output joins the stream the same way attention's did. ${pre ? 'This sum is the block\'s output' : 'In post-norm it still has to go through norm 2'}${pre && r.finalOut ? '; with pre-norm the model also applies one final norm after its last block, before lm_head.' : '.'}`,
            h('div', { class: 'matrix-row' }, grid('sum2', r.sum2, { title: 'h + ffn' }), pre && r.finalOut ? grid('finalOut', r.finalOut, { title: 'final_norm (after the block)' }) : null),
          );
      }
    };
    for (const id of BLOCK_STAGES[r.normPosition]) sections.push(stage(id));
    sections.forEach((s, i) => {
      const h3 = s.querySelector('h3')!;
      h3.textContent = `${i + 1}. ${h3.textContent}`;
      h3.tabIndex = -1;
    });
    stagesEl.dataset.order = r.normPosition;
    stagesEl.dataset.ids = tokens.join(' ');
    stagesEl.replaceChildren(...sections);
    goTo(current, false);
  }

  /** The step aside after the stages: one head's attention computed tile by tile (the core's
   * tiledAttention), its own head and tile size. */
  function tiledStep() {
    const headId = uniqueId('block-tiled-head');
    const tileId = uniqueId('block-tiled-tile');
    const headSelect = h('select', { id: headId, name: 'tiledHead' });
    const tileSelect = h('select', { id: tileId, name: 'tiledTile' });
    const body = h('div', { class: 'tiled-body' });
    const tiledProblem = h('p', { class: 'problem', role: 'alert', hidden: true });
    const section = h(
      'section',
      { class: 'block-tiled', 'data-step': 'tiled' },
      h('h3', { text: 'Aside: one head\'s attention, tile by tile' }),
      h('p', { class: 'formula' }, h('code', { text: 'per key tile: m ← max(m, max s),  l ← l·e^(m_old − m) + Σ e^(s − m),  o ← o·e^(m_old − m) + Σ e^(s − m) v;  at the end o / l' })),
      h('p', {
        class: 'stage-text',
        text: 'The same head as above, computed the way FlashAttention does: the keys come in tiles, and each query row keeps only a running max m and a running sum l of exp(score − m). When a tile brings a larger score, what was summed so far is scaled down by exp(old m − new m), so nothing has to be recomputed. The full row of T weights never exists at once: memory grows with T, not T².',
      }),
      h('div', { class: 'fields' }, h('div', { class: 'field' }, h('label', { for: headId, text: 'head' }), headSelect), h('div', { class: 'field' }, h('label', { for: tileId, text: 'keys per tile' }), tileSelect)),
      tiledProblem,
      body,
    );
    let last: { r: BlockStages; current: () => boolean } | null = null;
    const again = () => last && void refreshTiled(last.r, last.current);
    headSelect.addEventListener('change', again);
    tileSelect.addEventListener('change', again);

    function options(select: HTMLSelectElement, values: number[], label: (v: number) => string, fallback: number): void {
      const keep = Number(select.value);
      if (select.options.length !== values.length || values.some((v, i) => Number(select.options[i].value) !== v)) {
        select.replaceChildren(...values.map((v) => h('option', { value: v, text: label(v) })));
        select.value = String(values.includes(keep) ? keep : fallback);
      }
    }

    async function refreshTiled(r: BlockStages, current: () => boolean): Promise<void> {
      last = { r, current };
      const T = r.seqLen;
      options(headSelect, Array.from({ length: r.nHeads }, (_, i) => i), (v) => `head ${v + 1}`, 0);
      const sizes = [...new Set([1, 2, 4, 8, 16, 32, 64].filter((t) => t < T).concat(T))];
      options(tileSelect, sizes, (v) => (v === T ? `${v} (one tile)` : String(v)), sizes.find((t) => t * 3 >= T) ?? T);
      try {
        const t = await ctl.call(tiledAttentionRequest, { config: blockConfig(store.state), sample: blockSample(store.state), head: Number(headSelect.value), tileSize: Number(tileSelect.value) });
        if (!current()) return;
        tiledProblem.hidden = true;
        renderTiled(t, r.ids);
      } catch (e) {
        if (!current()) return;
        tiledProblem.textContent = `The tiled step could not be computed: ${e instanceof Error ? e.message : String(e)}`;
        tiledProblem.hidden = false;
      }
    }

    /** (tiles, T) as (T, tiles): one row per query, one column per tile. */
    const perRow = (m: Matrix): Matrix => {
      const out = new Float32Array(m.rows * m.cols);
      for (let t = 0; t < m.rows; ++t) for (let i = 0; i < m.cols; ++i) out[i * m.rows + t] = m.data[t * m.cols + i];
      return { rows: m.cols, cols: m.rows, data: out };
    };

    function renderTiled(t: TiledStep, ids: Int32Array): void {
      const T = t.seqLen;
      const rows = Array.from(ids, (id, i) => `${i}: ${id}`);
      const cols = Array.from({ length: t.tiles }, (_, k) => `after tile ${k + 1} (keys ${k * t.tileSize}–${Math.min(T, (k + 1) * t.tileSize) - 1})`);
      const weightsFig = (name: string, m: Matrix, title: string) =>
        h('figure', { class: 'matrix-fig', 'data-matrix': name }, h('figcaption', {}, h('strong', { text: title }), ` (${m.rows}, ${m.cols})`), matrixSvg(m, { label: title, colour: 'weights', width: 150, masked: (i, j) => j > i }));
      section.dataset.tiles = String(t.tiles);
      section.dataset.maxDifference = String(t.maxWeightDifference);
      body.replaceChildren(
        h('p', { class: 'hint', text: `Head ${t.head + 1}${t.kvHead !== t.head ? ` (K/V head ${t.kvHead + 1})` : ''}: ${T} query rows, keys in ${t.tiles} tile${t.tiles > 1 ? 's' : ''} of ${t.tileSize}. Under the causal mask a row skips the tiles wholly in its future, so its numbers stop changing once its own position has been seen.` }),
        h('div', { class: 'matrix-row' },
          h('figure', { class: 'tiled-rows', 'data-matrix': 'rowMax' }, h('figcaption', {}, h('strong', { text: 'running max m' }), ' per row after each tile'), scrollBox('running max per row after each tile (scrolls sideways)', matrixTable(perRow(t.rowMax), { rowLabels: rows, colLabels: cols, caption: 'running max per row after each tile', digits: 3 }))),
          h('figure', { class: 'tiled-rows', 'data-matrix': 'rowSum' }, h('figcaption', {}, h('strong', { text: 'running sum l' }), ' of exp(score − m)'), scrollBox('running sum per row after each tile (scrolls sideways)', matrixTable(perRow(t.rowSum), { rowLabels: rows, colLabels: cols, caption: 'running sum per row after each tile', digits: 3 }))),
        ),
        h('div', { class: 'matrix-row' }, weightsFig('tiledWeights', t.weights, 'tiled: exp(s − m) / l'), weightsFig('plainWeights', t.plainWeights, 'plain softmax')),
        h('p', {
          class: 'stage-text tiled-verdict',
          text:
            `The largest difference between the tiled rows and the plain softmax is ${sci(t.maxWeightDifference)}, and between the two outputs ${sci(t.maxOutDifference)}: the same numbers up to float32 rounding, because rescaling by exp(old m − new m) is exact algebra. ` +
            `Memory for this head over T = ${T}: ${count(t.plainBytes)} bytes for the plain (T, T) weights against ${count(t.tiledBytes)} bytes for the tiled path's output, one max and sum per row and one tile of scores. ` +
            (t.tiledBytes >= t.plainBytes
              ? 'At a length this short the tiled path holds more; but its memory grows with T and the plain one with T², so at a few hundred positions the tiled path holds far less (bench/README.md measures both up to T = 4096).'
              : 'The plain path grows with T², the tiled one with T: the longer the sequence, the larger the saving.'),
        }),
      );
    }
    return { section, refresh: refreshTiled };
  }

  const inputKeys: readonly (keyof State)[] = [...CONFIG_KEYS, ...keysOf('sample'), 'blockNorm', 'blockFfn'];
  cleanups.push(
    store.subscribe((s, changed) => {
      sync(s);
      if (inputKeys.some((k) => changed.has(k)) || view.cameIntoView(changed)) void refresh();
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
