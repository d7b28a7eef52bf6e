// Holds the one State and tells subscribers which keys changed. Knows nothing of the URL: the page
// mirrors it to the hash (main.ts); an embedding element could map it to attributes instead.
import type { State } from './state';

/** Listener: the new state and the keys that changed. */
export type StoreListener = (state: Readonly<State>, changed: ReadonlySet<keyof State>) => void;

/** The state object plus change notification. */
export class Store {
  private current: State;
  private listeners = new Set<StoreListener>();

  constructor(initial: State) {
    this.current = { ...initial };
  }

  /** The current state (do not mutate; use set). */
  get state(): Readonly<State> {
    return this.current;
  }

  /** Merges patch; notifies once with the keys whose values changed. */
  set(patch: Partial<State>): void {
    const changed = new Set<keyof State>();
    for (const k of Object.keys(patch) as (keyof State)[]) {
      if (patch[k] !== undefined && patch[k] !== this.current[k]) changed.add(k);
    }
    if (changed.size === 0) return;
    this.current = { ...this.current, ...patch };
    for (const f of this.listeners) f(this.current, changed);
  }

  /** Subscribes; returns the unsubscribe function. */
  subscribe(f: StoreListener): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }
}
