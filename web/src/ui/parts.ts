// The parts of the page that an embedding can leave out (the element's `hide` attribute), by group,
// and the one place that puts them in or leaves them out. Each view hands its parts to Parts as it
// builds them, so a hidden part never enters the page, and no code looks for parts by class name.
// A change of the hidden groups moves only what changed; a comment keeps each absent part's place.
// Each panel of the training view is a group of its own, from its line of the panel registry.
import { groupOf, PANELS, type PanelGroup } from '../panels/registry';

/** The panels' groups, in the picker's order. */
const PANEL_PARTS = Object.fromEntries(PANELS.map((p) => [groupOf(p), { what: p.hide }])) as Record<PanelGroup, { what: string }>;

/** The groups, in the order the element lists them, with what each one is (the panels' from the
 * registry). */
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
  ...PANEL_PARTS,
  questions: { what: 'the "Check yourself" questions of both views' },
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
