// The parts of the page that an embedding can leave out (the element's `hide` attribute), by group,
// and the one place that puts them in or leaves them out. Each view hands its parts to Parts as it
// builds them, so a hidden part never enters the page, and no code looks for parts by class name.
// A change of the hidden groups moves only what changed; a comment keeps each absent part's place.

/** The groups, in the order the element lists them, with what each one is. */
export const PART_GROUPS = {
  header: { what: 'the title and the view tabs (the view is then fixed by the view attribute)' },
  status: { what: 'the "Core loaded" line' },
  run: { what: 'the Run box: Play, Step, Reset, the step/loss readout and its problem box' },
  model: { what: 'the "Model and training" settings' },
  loss: { what: 'the loss chart' },
  heatmaps: { what: 'the attention heatmaps panel' },
  sample: { what: 'the sample-sequence input above the heatmaps' },
  legend: { what: 'the colour legend and the hovered-cell readout' },
  'lesson-controls': { what: 'the inputs of the lesson view: the two sentences, heads, dk, dv, the mask preset and its window, the positions toggle' },
  'block-controls': { what: 'the inputs of the transformer block view: pre/post, norm, FFN, positions, heads, K/V heads, seed and the RoPE pair drawn' },
  'stage-nav': { what: 'the Prev/Next stage buttons of the lesson view' },
  shapes: { what: 'the shape contract of the training view' },
  questions: { what: 'the "Check yourself" questions of both views' },
  predictions: { what: 'the predictions on the sample (the top 3 next tokens at each position)' },
  ablation: { what: 'the Ablation panel (heads off or frozen, the 1/sqrt(dk) toggle, the broken mask)' },
  timeline: { what: 'the attention timeline (scrubber, entropy and answer-mass plots)' },
  backward: { what: 'the backward pass of one query row' },
  selftest: { what: "the self-test panel (the curriculum's checks on the live core)" },
  export: { what: 'the Export / import panel of the training view' },
  composition: { what: 'the per-head scores and the composition matrices between layers' },
  longer: { what: 'the "Longer than trained" panel (the model at 2x and 4x its training length, and the comparison of the five position methods)' },
  generate: { what: "the Generate panel (task text: text from the model, each character with its alternatives and attention, the KV cache's speed-up, samples over training)" },
  inspect: { what: 'the "Look inside" panel (logit lens, direct attribution, activation patching, QK/OV circuits)' },
  presets: { what: 'the preset links under the controls ("watch an induction head form")' },
} as const;

/** A group of parts that can be left out. */
export type PartGroup = keyof typeof PART_GROUPS;

interface Placed {
  el: Element;
  /** What stands in the part's place while it is out. */
  mark: Comment;
  groups: readonly PartGroup[];
}

/** The parts of one mounted page and which groups are hidden. */
export class Parts {
  #hidden: ReadonlySet<PartGroup>;
  readonly #placed: Placed[] = [];
  readonly #listeners = new Set<() => void>();

  constructor(hidden: Iterable<PartGroup> = []) {
    this.#hidden = new Set(hidden);
  }

  /** Whether a part of all these groups is out (a part of several goes when all of them are hidden). */
  isHidden(...groups: PartGroup[]): boolean {
    return groups.every((g) => this.#hidden.has(g));
  }

  /** el as a part of groups: returns what goes into the tree now, el, or the comment that keeps
   * its place while it is hidden. */
  place<T extends Element>(el: T, ...groups: [PartGroup, ...PartGroup[]]): T | Comment {
    const mark = document.createComment(`hidden: ${groups.join(', ')}`);
    this.#placed.push({ el, mark, groups });
    return this.isHidden(...groups) ? mark : el;
  }

  /** Hides these groups (and only these): takes out what is now hidden, puts back what is not. */
  setHidden(hidden: Iterable<PartGroup>): void {
    this.#hidden = new Set(hidden);
    for (const p of this.#placed) {
      const out = this.isHidden(...p.groups);
      if (out && p.el.parentNode) p.el.replaceWith(p.mark);
      else if (!out && p.mark.parentNode) p.mark.replaceWith(p.el);
    }
    for (const f of this.#listeners) f();
  }

  /** Calls f after each change of the hidden groups; returns an unsubscribe. */
  onChange(f: () => void): () => void {
    this.#listeners.add(f);
    return () => this.#listeners.delete(f);
  }
}
