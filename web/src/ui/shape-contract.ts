// The training view's "Shapes" panel: the multi-head layer's shape contract drawn with the live
// settings, each tensor a box with its symbolic and its numeric shape, each arrow the operation
// between them. It follows the Store, so changing d_model or heads redraws it at once.
import type { State } from '../settings/settings';
import type { Store } from '../settings/store';
import { h } from './dom';

/** One tensor of the contract: its name, its symbolic shape, and its numbers for a state. */
interface Box {
  id: string;
  name: string;
  dims: string[];
  shape: (s: Readonly<State>) => number[];
}

/** The arrows: what turns each box into the next. */
const STEPS: [Box, string][] = [
  [{ id: 'x', name: 'x = token embedding + positions', dims: ['B', 'T', 'D'], shape: (s) => [s.batchSize, s.seqLen, s.dModel] }, 'qkv_proj: one fused Linear, D → 3D'],
  [{ id: 'qkv', name: 'fused q, k, v', dims: ['B', 'T', '3D'], shape: (s) => [s.batchSize, s.seqLen, 3 * s.dModel] }, 'split into q, k, v, each into H heads of Dh = D/H, heads moved forward'],
  [{ id: 'heads', name: 'q, k, v per head', dims: ['B', 'H', 'T', 'Dh'], shape: (s) => [s.batchSize, s.nHeads, s.seqLen, s.dModel / s.nHeads] }, 'q kᵀ / √Dh, the causal mask, softmax over the keys'],
  [{ id: 'scores', name: 'attention weights', dims: ['B', 'H', 'T', 'T'], shape: (s) => [s.batchSize, s.nHeads, s.seqLen, s.seqLen] }, 'weights · v in each head, then the heads merged side by side'],
  [{ id: 'merged', name: 'merged heads', dims: ['B', 'T', 'D'], shape: (s) => [s.batchSize, s.seqLen, s.dModel] }, 'out_proj: Linear D → D, then lm_head: Linear D → V'],
  [{ id: 'logits', name: 'logits', dims: ['B', 'T', 'V'], shape: (s) => [s.batchSize, s.seqLen, s.vocabSize] }, ''],
];

/** Fills the section with the contract and keeps it current; returns the cleanup. */
export function mountShapeContract(section: HTMLElement, store: Store): () => void {
  const list = h('ol', { class: 'shape-contract' });
  const legend = h('p', { class: 'hint shape-legend' });
  section.append(
    h('div', { class: 'panel-head' }, h('h2', { text: 'Shapes, step by step' })),
    h('p', {
      class: 'hint first',
      text:
        'Every tensor of the multi-head layer for one training batch, with the sizes of your settings. The heads are not a loop: ' +
        'they are one axis of a tensor, made by reshaping the fused projection and merged back by the reverse reshape, so H heads cost one matrix product.',
    }),
    list,
    legend,
  );
  const render = (s: Readonly<State>) => {
    const depth =
      s.nLayers > 1
        ? ` L = ${s.nLayers} layers: the steps from x to out_proj run once per layer, each on the last one's output${s.residual ? ', added to its input (the residual stream: x = x + attn(x))' : ' (no residual stream: x = attn(x))'}, before lm_head.`
        : '';
    legend.textContent = `B = ${s.batchSize} sequences, T = ${s.seqLen} tokens, D = ${s.dModel}, H = ${s.nHeads} heads of Dh = ${s.dModel / s.nHeads}, V = ${s.vocabSize} tokens.${depth}`;
    list.replaceChildren(
      ...STEPS.flatMap(([box, op]) => {
        const n = box.shape(s);
        const item = h(
          'li',
          { class: 'shape-box', 'data-tensor': box.id, 'data-shape': n.join(',') },
          h('span', { class: 'shape-name', text: box.name }),
          h('code', { class: 'shape-dims', text: `(${box.dims.join(', ')})` }),
          h('span', { class: 'shape-numbers', text: `= (${n.join(', ')})` }),
        );
        return op ? [item, h('li', { class: 'shape-op', 'aria-label': `then: ${op}` }, h('span', { 'aria-hidden': 'true', text: '↓ ' }), op)] : [item];
      }),
    );
  };
  render(store.state);
  return store.subscribe((s, changed) => {
    if (['batchSize', 'seqLen', 'dModel', 'nHeads', 'vocabSize', 'nLayers', 'residual'].some((k) => changed.has(k as keyof State))) render(s);
  });
}
