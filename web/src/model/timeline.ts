// The attention timeline's policy, written once: when a snapshot is taken, how many are kept (from
// a byte budget), and which ones survive when it is full. Pure functions over plain data; the
// worker's Session keeps the timeline with them, and the timeline panel follows the worker's list.
//
// The policy: a snapshot at step 0 (or wherever a run starts) and at every multiple of `every`
// steps. When one more than `capacity` are held, `every` doubles and only the snapshots on the
// doubled grid stay, plus the latest, so memory stays capped and the history stays evenly spaced.
import type { MaskMode } from './protocol';

/** One timeline snapshot: the sample's attention (L,H,T,T) and the head statistics and scores
 * (L*H each, global head index) at a step; the four head arrays are empty at the snapshots that do
 * not measure the heads (HEADS_EVERY). */
export interface TimelineEntry {
  step: number;
  loss: number;
  ids: Int32Array;
  weights: Float32Array;
  H: number;
  L: number;
  T: number;
  mask: MaskMode;
  entropy: Float32Array;
  answerMass: Float32Array;
  /** headScores()'s previous-token and prefix-matching scores. */
  previousToken: Float32Array;
  prefixMatching: Float32Array;
}

/** At most this many bytes of snapshots are kept. The byte budget wins over the entry bounds:
 * one layer of the largest config (H 16, T 128: just over 1 MiB a snapshot) keeps 7; four such
 * layers (just over 4 MiB) keep the minimum, 2. */
export const TIMELINE_BYTES = 8 * 1024 * 1024;
/** At most this many snapshots are kept, however small they are. */
export const TIMELINE_MAX_ENTRIES = 240;
/** At least this many are kept, when the byte budget allows no more. */
export const TIMELINE_MIN_ENTRIES = 2;
/** The first snapshot interval (steps); it doubles each time the timeline fills up. */
export const TIMELINE_FIRST_EVERY = 10;

/** Anything kept on the timeline: it belongs to a step. */
export interface Stepped {
  step: number;
}

/** The timeline of one run: the kept snapshots (ascending steps) and the policy's state. */
export interface TimelineState<E extends Stepped> {
  entries: E[];
  /** A snapshot is taken at every multiple of `every` steps. */
  every: number;
  /** At most this many snapshots are kept. */
  capacity: number;
}

/** Bytes of one snapshot of a model of H heads in all (every layer's) and T tokens: the (H,T,T)
 * weights, the T ids and, when it measured the heads (HEADS_EVERY), four per-head values (two
 * statistics, two scores), all 4-byte values. The budget counts every snapshot as measured. */
export function snapshotBytes(H: number, T: number, heads = true): number {
  return 4 * H * T * T + 4 * T + (heads ? 4 * 4 * H : 0);
}

/** How many snapshots of an (H heads in all, T) model fit the byte budget, within the entry bounds. */
export function timelineCapacity(H: number, T: number, budget = TIMELINE_BYTES): number {
  return Math.max(TIMELINE_MIN_ENTRIES, Math.min(TIMELINE_MAX_ENTRIES, Math.floor(budget / snapshotBytes(H, T))));
}

/** An empty timeline for an (H, T) model, within budget bytes. */
export function emptyTimeline<E extends Stepped>(H: number, T: number, budget = TIMELINE_BYTES): TimelineState<E> {
  return { entries: [], every: TIMELINE_FIRST_EVERY, capacity: timelineCapacity(H, T, budget) };
}

/** Steps from `step` to the next snapshot (a full interval when `step` is on the grid). */
export function stepsToNextSnapshot(step: number, every: number): number {
  return every - (step % every);
}

/** Whether a snapshot is due at `step`. */
export function isSnapshotStep(step: number, every: number): boolean {
  return step % every === 0;
}

/** The heads' statistics and scores (the core's attentionStats and headScores: together about two
 * training steps on the presets) are measured at every HEADS_EVERY-th snapshot, on the grid of
 * HEADS_EVERY * every steps, and at a run's first snapshot; the attention is kept at every one.
 * Measured at every snapshot they took a fifth of the tab's training time, at every other one a
 * tenth; at every 8th (every 80 steps at first) about 2.5% (bench/README.md). When
 * the interval doubles, the kept entries are those of the old heads' grid, so at least every
 * HEADS_EVERY-th entry on the grid holds them (the latest may be left off the grid, unmeasured). */
export const HEADS_EVERY = 8;

/** Whether the snapshot at `step` measures the heads (first: the run's first snapshot). */
export function measuresHeads(step: number, every: number, first: boolean): boolean {
  return first || isSnapshotStep(step, HEADS_EVERY * every);
}

/** Whether an entry holds the heads' statistics and scores (see HEADS_EVERY): the arrays of one
 * that does not are empty. */
export function hasHeadStats(e: { entropy: ArrayLike<number> }): boolean {
  return e.entropy.length > 0;
}

/** The index of the latest entry at or before i that holds the heads' statistics (-1: none). */
export function measuredAtOrBefore(entries: readonly { entropy: ArrayLike<number> }[], i: number): number {
  for (let k = Math.min(i, entries.length - 1); k >= 0; --k) if (hasHeadStats(entries[k])) return k;
  return -1;
}

/** The entries that stay on a grid of `every` steps: those on it, and the latest. */
export function thin<E extends Stepped>(entries: readonly E[], every: number): E[] {
  const last = entries[entries.length - 1];
  return entries.filter((e) => isSnapshotStep(e.step, every) || e === last);
}

/**
 * The timeline with `entry` added (it replaces a snapshot of the same step). When that makes one
 * more than capacity, the interval doubles and the entries are thinned to the doubled grid.
 */
export function addSnapshot<E extends Stepped>(tl: TimelineState<E>, entry: E): TimelineState<E> {
  const held = tl.entries.length > 0 && tl.entries[tl.entries.length - 1].step === entry.step ? tl.entries.slice(0, -1) : tl.entries;
  const entries = [...held, entry];
  if (entries.length <= tl.capacity) return { ...tl, entries };
  const every = tl.every * 2;
  return { ...tl, every, entries: thin(entries, every) };
}

/** The entries after `since` (a step; -1 for all). */
export function entriesAfter<E extends Stepped>(tl: TimelineState<E>, since: number): E[] {
  return tl.entries.filter((e) => e.step > since);
}

/** Bytes a snapshot's typed arrays hold. */
export function entryBytes(e: TimelineEntry): number {
  return e.weights.byteLength + e.ids.byteLength + e.entropy.byteLength + e.answerMass.byteLength + e.previousToken.byteLength + e.prefixMatching.byteLength;
}

/** Bytes the kept snapshots hold. */
export function timelineBytes(entries: readonly TimelineEntry[]): number {
  return entries.reduce((n, e) => n + entryBytes(e), 0);
}

/**
 * A copy of the worker's timeline brought up to date, for the page: the steps the worker keeps
 * now (`steps`, ascending), each from the entries just received (`fresh`) or else from those
 * held. It never decides itself what is kept; a step neither side has is skipped.
 */
export function follow<E extends Stepped>(held: readonly E[], steps: readonly number[], fresh: readonly E[]): E[] {
  const byStep = new Map<number, E>();
  for (const e of held) byStep.set(e.step, e);
  for (const e of fresh) byStep.set(e.step, e);
  return steps.flatMap((s) => {
    const e = byStep.get(s);
    return e ? [e] : [];
  });
}
