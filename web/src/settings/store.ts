// Holds the one State: the only owner of every setting (config, sample, task, ablation, view...),
// and tells subscribers which keys changed. Knows nothing of the URL: the page mirrors it to the
// hash (main.ts), the element to its `state` and attributes (element/element.ts). The controller
// turns changes into worker requests (client/controller.ts).
import type { State } from './settings';

/**
 * Where a change comes from. `edit`: a control, a link, an attribute or a script asked for new
 * settings, which the controller applies to the worker. `run`: the settings of a run the worker
 * already holds (an imported run), so there is nothing to send.
 */
export type ChangeSource = 'edit' | 'run';

/** Listener: the new state, the keys that changed, and where the change came from. */
export type StoreListener = (state: Readonly<State>, changed: ReadonlySet<keyof State>, source: ChangeSource) => void;

/** The state object plus change notification. */
export class Store {
  private current: State;
  private listeners = new Set<StoreListener>();

  constructor(initial: Readonly<State>) {
    this.current = { ...initial };
  }

  /** The current state (do not mutate; use set). */
  get state(): Readonly<State> {
    return this.current;
  }

  /** Merges patch; notifies once with the keys whose values changed. */
  set(patch: Partial<State>, source: ChangeSource = 'edit'): void {
    const changed = new Set<keyof State>();
    for (const k of Object.keys(patch) as (keyof State)[]) {
      if (patch[k] !== undefined && patch[k] !== this.current[k]) changed.add(k);
    }
    if (changed.size === 0) return;
    this.current = { ...this.current, ...patch };
    for (const f of this.listeners) f(this.current, changed, source);
  }

  /** Subscribes; returns the unsubscribe function. */
  subscribe(f: StoreListener): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }
}
