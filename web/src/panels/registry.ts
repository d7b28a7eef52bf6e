// The training view's panels, in the picker's order: one line each. A line makes its panel appear:
// a tab of the picker under the loss and the heatmaps (its name is the `panel` setting's value, hash
// `panel=`), a section placed by the training view, and a group of the element's `hide` attribute.
// The panel itself is the folder of its name (web/src/panels/<name>/): view.ts (the DOM) and
// model.ts (its state and when it asks) on the page, request.ts (its requests, declared once) and
// handler.ts (what answers them, in the worker). Pure data: the settings and the element read it.

/** One panel: its name (and folder), its tab's words, its section's accessible name, the `hide`
 * group that holds it (default: its name) and what that group is, as the element's docs say. */
export interface PanelEntry {
  readonly name: string;
  readonly label: string;
  readonly title: string;
  readonly group?: string;
  readonly hide: string;
}

/** The panels, in the picker's order. */
export const PANELS = [
  { name: 'predictions', label: 'Predictions', title: 'Predictions on the sample', hide: 'the predictions on the sample (the top 3 next tokens at each position)' },
  { name: 'shapes', label: 'Shapes', title: 'Shapes', hide: 'the shape contract of the training view' },
  { name: 'ablation', label: 'Ablation', title: 'Ablation', hide: 'the Ablation panel (heads off or frozen, the 1/sqrt(dk) toggle, the broken mask)' },
  { name: 'timeline', label: 'Timeline', title: 'Attention timeline', hide: 'the attention timeline (scrubber, entropy and answer-mass plots)' },
  { name: 'circuits', label: 'Circuits', title: 'Composition between layers', group: 'composition', hide: 'the per-head scores and the composition matrices between layers' },
  { name: 'backward', label: 'Backward pass', title: 'Backward pass for one query row', hide: 'the backward pass of one query row' },
  { name: 'selftest', label: 'Self-test', title: 'Self-test', hide: "the self-test panel (the curriculum's checks on the live core)" },
  { name: 'longer', label: 'Longer than trained', title: 'Longer than trained', hide: 'the "Longer than trained" panel (the model at 2x and 4x its training length, and the comparison of the five position methods)' },
  { name: 'generate', label: 'Generate', title: 'Generate', hide: "the Generate panel (task text: text from the model, each character with its alternatives and attention, the KV cache's speed-up, samples over training)" },
  { name: 'inspect', label: 'Look inside', title: 'Look inside', hide: 'the "Look inside" panel (logit lens, direct attribution, activation patching, QK/OV circuits)' },
  { name: 'export', label: 'Export / import', title: 'Export / import', hide: 'the Export / import panel of the training view' },
  { name: 'speculative', label: 'Speculative decoding', title: 'Speculative decoding', hide: 'the "Speculative decoding" panel (task text: a draft, text coloured by token fate, the acceptance and passes per token, the exactness check)' },
  { name: 'fill', label: 'Fill in the blanks', title: 'Fill in the blanks', hide: 'the "Fill in the blanks" panel (task text: a masked model\'s top 5 characters for each blank, beside a causal model\'s)' },
  { name: 'receptive', label: 'Receptive field', title: 'Receptive field', hide: 'the Receptive field panel (how far each output reaches into the input, against L·(W − 1))' },
] as const satisfies readonly PanelEntry[];

/** A panel's name: its folder and its value of the `panel` setting. */
export type PanelId = (typeof PANELS)[number]['name'];

/** The `hide` group of a panel. */
export type PanelGroup = { [P in (typeof PANELS)[number] as P['name']]: P extends { group: infer G extends string } ? G : P['name'] }[PanelId];

/** The `hide` group of a panel: its own, else its name. */
export function groupOf(entry: (typeof PANELS)[number]): PanelGroup {
  return ('group' in entry ? entry.group : entry.name) as PanelGroup;
}
