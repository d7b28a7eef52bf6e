// The training view's "Shapes" panel: the shape contract of one layer (the block's norms, FFN and
// K/V heads when set; model.ts) drawn with the live settings, each tensor a box with its symbolic
// and its numeric shape, each arrow the operation between them. It follows the Store: a change of
// d_model or heads asks the worker for the core's report of that model (modelReport: the FFN's
// width, the parameter count; no run needed) and redraws with it.
import type { Controller } from '../../client/controller';
import type { ModelReport } from '../../core/attention-core';
import { CONFIG_KEYS, type State } from '../../settings/settings';
import { trainerConfig } from '../../settings/state';
import { h } from '../../ui/dom';
import { plural } from '../../model/format';
import { fillPanel, type PanelOptions } from '../../ui/panel';
import { LiveRequest } from '../../ui/live-request';
import { messageOf } from '../../ui/panel-model';
import { shapeSteps } from './model';
import { modelReportRequest } from './request';

/** Fills slot (the panel's section) with the contract and keeps it current; returns the cleanup. */
export function mount(slot: HTMLElement, ctl: Controller, { store }: PanelOptions): () => void {
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
  const render = (s: Readonly<State>, report: ModelReport) => {
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
    if (s.ffn !== 'none') sizes.push(`FFN width ${s.ffnMult}D = ${report.ffnWidth}`);
    sizes.push(`V = ${s.vocabSize} tokens`);
    // The count is the core's (its modules' reports): every weight and bias of every layer, the
    // embeddings and lm_head, which the boxes above do not show.
    const params = ` In all the model has ${plural(report.paramCount, 'parameter')} (${report.tensors.length} tensors of its state dict), counted by the core.`;
    legend.textContent = `${sizes.join(', ')}.${depth}${params}`;
    legend.dataset.params = String(report.paramCount);
    list.replaceChildren(
      ...shapeSteps(s, report).flatMap(([box, op]) => {
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
  // One request in flight; the answer is drawn with the settings it was asked for.
  const live = new LiveRequest(
    async () => {
      const s = store.state;
      return { s, report: await ctl.call(modelReportRequest, trainerConfig(s)) };
    },
    {
      done: ({ s, report }) => render(s, report),
      failed: (e) => {
        list.replaceChildren();
        legend.textContent = `The core cannot build this model: ${messageOf(e)}`;
      },
    },
  );
  void live.request();
  const unsubscribe = store.subscribe((_s, changed) => {
    if (CONFIG_KEYS.some((k) => changed.has(k))) void live.request();
  });
  return () => {
    unsubscribe();
    live.stop();
    slot.replaceChildren();
  };
}
