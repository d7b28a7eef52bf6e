// The training view's "Shapes" panel: the shape contract of one layer (the block's norms, FFN and
// K/V heads when set; model.ts) drawn with the live settings, each tensor a box with its symbolic
// and its numeric shape, each arrow the operation between them. It follows the Store, so changing
// d_model or heads redraws it at once. It asks the worker nothing.
import type { Controller } from '../../client/controller';
import type { State } from '../../settings/settings';
import { h } from '../../ui/dom';
import { plural } from '../../model/format';
import { fillPanel, type PanelOptions } from '../../ui/panel';
import { shapeSteps } from './model';

/** Fills slot (the panel's section) with the contract and keeps it current; returns the cleanup. */
export function mount(slot: HTMLElement, _ctl: Controller, { store }: PanelOptions): () => void {
  const list = h('ol', { class: 'shape-contract' });
  const legend = h('p', { class: 'hint shape-legend' });
  fillPanel(
    slot,
    {},
    'Shapes, step by step',
    h('p', {
      class: 'hint first',
      text:
        'Every tensor of one layer (a whole block once a norm or an FFN is on) for one training batch, with the sizes of your settings. The heads are not a loop: ' +
        'they are one axis of a tensor, made by reshaping the fused projection and merged back by the reverse reshape, so H heads cost one matrix product.',
    }),
    list,
    legend,
  );
  const render = (s: Readonly<State>) => {
    const block = s.norm !== 'none' || s.ffn !== 'none';
    const depth =
      s.nLayers > 1
        ? block
          ? ` L = ${s.nLayers} blocks: every step up to the last sum runs once per block, each on the stream the last one left, before lm_head.`
          : ` L = ${s.nLayers} layers: the steps from x to out_proj run once per layer, each on the last one's output${s.residual ? ', added to its input (the residual stream: x = x + attn(x))' : ' (no residual stream: x = attn(x))'}, before lm_head.`
        : '';
    const G = s.kvHeads || s.nHeads;
    const sizes = [`B = ${plural(s.batchSize, 'sequence')}`, `T = ${plural(s.seqLen, 'token')}`, `D = ${s.dModel}`, `H = ${plural(s.nHeads, 'head')} of Dh = ${s.dModel / s.nHeads}`];
    if (G < s.nHeads) sizes.push(`G = ${plural(G, 'K/V head')}`);
    if (s.ffn !== 'none') sizes.push(`FFN width ${s.ffnMult}D = ${s.ffnMult * s.dModel}`);
    sizes.push(`V = ${s.vocabSize} tokens`);
    legend.textContent = `${sizes.join(', ')}.${depth}`;
    list.replaceChildren(
      ...shapeSteps(s).flatMap(([box, op]) => {
        const n = box.shape;
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
  const unsubscribe = store.subscribe((s, changed) => {
    const keys: (keyof State)[] = ['batchSize', 'seqLen', 'dModel', 'nHeads', 'vocabSize', 'nLayers', 'residual', 'kvHeads', 'positions', 'norm', 'normPosition', 'ffn', 'ffnMult', 'objective', 'attention', 'window', 'stride', 'differential'];
    if (keys.some((k) => changed.has(k))) render(s);
  });
  return () => {
    unsubscribe();
    slot.replaceChildren();
  };
}
