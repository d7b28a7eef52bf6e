// Types of the npm package's main module, `attention-playground` (web/dist/attention-playground.js,
// built from web/src/element/index.ts). Hand-written; tests/e2e/package.test.mjs checks that the
// module exports exactly these names. Importing the module defines <attention-playground>.

/** The element's settings (its `state` property): keys as in the page's URL state. */
export interface PlaygroundState {
  view: 'train' | 'lesson';
  vocabSize: number;
  dModel: number;
  nHeads: number;
  seqLen: number;
  batchSize: number;
  lr: number;
  seed: number;
  attnDropout: number;
  outDropout: number;
  task: 'repeat' | 'shift' | 'copy' | 'reverse' | 'sort' | 'future';
  sample: string;
  logY: boolean;
  sentence: string;
  dk: number;
  dv: number;
  causal: boolean;
  stage: number;
  mask: 'causal' | 'none' | 'inverted';
  scaleScores: boolean;
  headsOff: string;
  headsFrozen: string;
}

/** Detail of the `ready` event. */
export interface ReadyDetail {
  simd: boolean;
}
/** Detail of the `step` and `solved` events (`solved` also has `threshold`). */
export interface StepDetail {
  step: number;
  loss: number;
}
/** Detail of the `error` event. */
export interface ErrorDetail {
  message: string;
  /** The attribute (or "state", "step") whose value was wrong, if any. */
  attribute?: string;
  /** config, nonFinite, input, state, internal, crash, worker (the worker could not start),
   * load (the core did not load), webassembly (none in this browser). */
  kind?: string;
}

/** <attention-playground>: the playground in a shadow root; see the README, "Embed it". */
export declare class AttentionPlaygroundElement extends HTMLElement {
  static readonly observedAttributes: readonly string[];
  /** The current settings (a copy); assigning merges and validates a partial object. */
  get state(): PlaygroundState;
  set state(patch: Partial<PlaygroundState>);
  /** True once the core is loaded and the first model built. */
  readonly ready: boolean;
  play(): Promise<void>;
  pause(): Promise<void>;
  /** Runs n steps (1..1000, default 1). */
  step(n?: number): Promise<void>;
  /** Back to step 0 with the same settings and seed. */
  reset(): Promise<void>;
}

/** The control groups the `hide` attribute removes, with what each one is. */
export declare const HIDE_GROUPS: Readonly<Record<string, { selector: string; what: string }>>;
/** The values of the `theme` attribute. */
export declare const THEMES: readonly ['auto', 'light', 'dark'];

/** The part of an anywidget model that render uses. */
export interface WidgetModel {
  get(name: string): unknown;
  set(name: string, value: unknown): void;
  on(event: string, callback: () => void): void;
  off(event: string, callback: () => void): void;
  save_changes(): void;
}
/** Trait name (attribute with `_` for `-`) -> attribute name. */
export declare const TRAITS: Readonly<Record<string, string>>;
/** Mounts one element into el, following the model's traits; returns the cleanup (ends the worker). */
export declare function render(args: { model: WidgetModel; el: HTMLElement }): () => void;

/** The anywidget front-end module: `{ render }`. */
declare const widget: { render: typeof render };
export default widget;

declare global {
  interface HTMLElementTagNameMap {
    'attention-playground': AttentionPlaygroundElement;
  }
}
