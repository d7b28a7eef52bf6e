// The timeline policy (web/src/model/timeline.ts), pure: the capacity from the byte budget, when a
// snapshot is due, the doubling of the interval when full, the latest entry always kept, and the
// page's copy (follow) holding exactly what the worker keeps, however often it asks.
import { describe, expect, test } from 'vitest';
import {
  addSnapshot,
  emptyTimeline,
  entriesAfter,
  follow,
  hasHeadStats,
  HEADS_EVERY,
  isSnapshotStep,
  measuredAtOrBefore,
  measuresHeads,
  snapshotBytes,
  stepsToNextSnapshot,
  thin,
  timelineCapacity,
  TIMELINE_BYTES,
  TIMELINE_FIRST_EVERY,
  TIMELINE_MAX_ENTRIES,
  type TimelineState,
} from '../../web/src/model/timeline';

type E = { step: number };
/** The step of the snapshot added last (run() adds them in order). */
let added = -1;
const latest = (_tl: TimelineState<E>) => added;
const steps = (tl: TimelineState<E>) => tl.entries.map((e) => e.step);

/** A worker's timeline driven as the Session drives it: a snapshot at `start`, then one at every
 * step the policy asks for, up to `end`. Calls visit(tl) after each snapshot. */
function run(tl: TimelineState<E>, start: number, end: number, visit: (tl: TimelineState<E>) => void = () => {}): TimelineState<E> {
  tl = addSnapshot(tl, { step: (added = start) });
  visit(tl);
  for (let s = start; s < end; ) {
    s += stepsToNextSnapshot(s, tl.every);
    if (s > end) break;
    tl = addSnapshot(tl, { step: (added = s) });
    visit(tl);
  }
  return tl;
}

describe('capacity from the byte budget', () => {
  test('one snapshot: (H,T,T) weights, T ids, two per-head statistics and two scores, 4 bytes each', () => {
    // H 4, T 12: 4*4*144 + 4*12 + 16*4 = 2304 + 48 + 64 = 2416 bytes.
    expect(snapshotBytes(4, 12)).toBe(2416);
    // 2 layers of 2 heads count as H 4.
    expect(snapshotBytes(2 * 2, 12)).toBe(2416);
  });

  test('small models: the entry bound; large ones: the byte budget, which wins over the minimum', () => {
    expect(timelineCapacity(4, 12)).toBe(TIMELINE_MAX_ENTRIES);
    // H 8, T 64: 131072 + 256 + 128 = 131456 bytes, 8 MiB / that = 63.8 -> 63.
    expect(timelineCapacity(8, 64)).toBe(63);
    // H 16, T 128: 1048576 + 512 + 256 = 1049344 bytes, 8 MiB / that = 7.99 -> 7.
    expect(timelineCapacity(16, 128)).toBe(7);
    for (const [H, T] of [[1, 1], [4, 12], [8, 64], [16, 128]]) {
      const c = timelineCapacity(H, T);
      expect(c).toBeGreaterThanOrEqual(2);
      expect(c).toBeLessThanOrEqual(TIMELINE_MAX_ENTRIES);
      expect(c * snapshotBytes(H, T)).toBeLessThanOrEqual(TIMELINE_BYTES);
    }
  });

  test('four layers of the largest config keep the minimum', () => {
    // H 64 (4 x 16), T 128: 4194304 + 512 + 1024 bytes, 8 MiB / that = 1.99 -> at least 2.
    expect(timelineCapacity(64, 128)).toBe(2);
  });

  test('an empty timeline starts at the first interval', () => {
    expect(emptyTimeline(4, 12)).toEqual({ entries: [], every: TIMELINE_FIRST_EVERY, capacity: 240 });
  });
});

describe('when to snapshot', () => {
  test('at every multiple of the interval, from anywhere', () => {
    expect(stepsToNextSnapshot(0, 10)).toBe(10);
    expect(stepsToNextSnapshot(7, 10)).toBe(3);
    expect(stepsToNextSnapshot(1234, 20)).toBe(6);
    expect(isSnapshotStep(40, 20)).toBe(true);
    expect(isSnapshotStep(30, 20)).toBe(false);
  });
});

describe('doubling and thinning', () => {
  test('full: the interval doubles and only the doubled grid stays, evenly spaced', () => {
    const tl = run({ entries: [], every: 10, capacity: 4 }, 0, 40);
    // 0,10,20,30,40 is one too many: every 20, keep 0,20,40.
    expect(tl.every).toBe(20);
    expect(steps(tl)).toEqual([0, 20, 40]);
  });

  test('an odd capacity: the latest stays although it is off the doubled grid', () => {
    let tl: TimelineState<E> = { entries: [], every: 10, capacity: 3 };
    tl = run(tl, 0, 30);
    // 0,10,20,30: every 20 keeps 0,20 and the latest, 30.
    expect(steps(tl)).toEqual([0, 20, 30]);
    tl = addSnapshot(tl, { step: 40 });
    expect(steps(tl)).toEqual([0, 40]);
    expect(tl.every).toBe(40);
  });

  test('never over capacity, the latest always kept, the rest on the grid, at every size', () => {
    for (const capacity of [2, 3, 7, 8, 63, 240]) {
      run({ entries: [], every: 10, capacity }, 0, 20000, (tl) => {
        expect(tl.entries.length).toBeLessThanOrEqual(capacity);
        const s = steps(tl);
        expect(s[0]).toBe(0);
        expect([...s].sort((a, b) => a - b)).toEqual(s);
        // The latest snapshot is kept; of the others, at most one (the latest at the last
        // thinning) is off the grid, and it is on the grid before the doubling.
        expect(s[s.length - 1]).toBe(latest(tl));
        const off = s.slice(0, -1).filter((x) => x % tl.every !== 0);
        expect(off.length).toBeLessThanOrEqual(1);
        for (const x of off) expect(x % (tl.every / 2)).toBe(0);
      });
    }
  });

  test('thinned, not emptied: at least half the capacity after a thinning', () => {
    let seen = 0;
    run({ entries: [], every: 10, capacity: 63 }, 0, 50000, (tl) => {
      if (tl.every > 10) {
        seen++;
        expect(tl.entries.length).toBeGreaterThanOrEqual(Math.floor(63 / 2));
      }
    });
    expect(seen).toBeGreaterThan(0);
  });

  test('a run that starts off the grid (an import at step 1234) keeps its first snapshot until a thinning', () => {
    const tl = run({ entries: [], every: 10, capacity: 240 }, 1234, 1300);
    expect(steps(tl)).toEqual([1234, 1240, 1250, 1260, 1270, 1280, 1290, 1300]);
  });

  test('a snapshot at a step already held replaces it', () => {
    let tl: TimelineState<{ step: number; v: number }> = { entries: [], every: 10, capacity: 4 };
    tl = addSnapshot(tl, { step: 0, v: 1 });
    tl = addSnapshot(tl, { step: 0, v: 2 });
    expect(tl.entries).toEqual([{ step: 0, v: 2 }]);
  });

  test('thin keeps the grid and the latest', () => {
    expect(thin([0, 10, 20, 30, 35].map((step) => ({ step })), 20).map((e) => e.step)).toEqual([0, 20, 35]);
    expect(thin([], 20)).toEqual([]);
  });

  test('addSnapshot does not change the timeline it is given', () => {
    const tl: TimelineState<E> = { entries: [{ step: 0 }, { step: 10 }], every: 10, capacity: 2 };
    const next = addSnapshot(tl, { step: 20 });
    expect(steps(tl)).toEqual([0, 10]);
    expect(tl.every).toBe(10);
    expect(steps(next)).toEqual([0, 20]);
  });
});

describe('the heads are measured on a coarser grid', () => {
  test('at the first snapshot wherever it is, then at every multiple of HEADS_EVERY intervals', () => {
    expect(HEADS_EVERY).toBe(8);
    expect([0, 10, 40, 70, 80, 90, 160].map((s) => measuresHeads(s, 10, false))).toEqual([true, false, false, false, true, false, true]);
    expect(measuresHeads(1234, 10, true)).toBe(true);
    expect(measuresHeads(1280, 10, false)).toBe(true);
    expect(measuresHeads(1240, 10, false)).toBe(false);
    expect(measuresHeads(1290, 10, false)).toBe(false);
  });

  test('through every thinning, at least every HEADS_EVERY-th kept entry on the grid measured the heads', () => {
    for (const capacity of [4, 5, 7, 63, 240]) {
      let tl: TimelineState<{ step: number; entropy: number[] }> = { entries: [], every: 10, capacity };
      for (let s = 0; s <= 30000; s += stepsToNextSnapshot(s, tl.every)) {
        const heads = measuresHeads(s, tl.every, tl.entries.length === 0);
        tl = addSnapshot(tl, { step: s, entropy: heads ? [1] : [] });
        // The latest may be left off the grid by a thinning (and not measured); the rest are on it.
        const flags = tl.entries.filter((e) => isSnapshotStep(e.step, tl.every)).map(hasHeadStats);
        expect(flags[0]).toBe(true); // step 0 is on every grid
        // No run of HEADS_EVERY entries in a row without the heads.
        for (let i = 0; i + HEADS_EVERY <= flags.length; ++i) expect(flags.slice(i, i + HEADS_EVERY)).toContain(true);
      }
    }
  });

  test('measuredAtOrBefore: the entry itself when it measured the heads, else the latest before it', () => {
    const es = [{ entropy: [] }, { entropy: [1] }, { entropy: [] }, { entropy: [] }, { entropy: [2] }];
    expect([0, 1, 2, 3, 4, 9].map((i) => measuredAtOrBefore(es, i))).toEqual([-1, 1, 1, 1, 4, 4]);
    expect(measuredAtOrBefore([], 0)).toBe(-1);
  });
});

describe('the page follows the worker', () => {
  test('asking at any moments, the page holds exactly the steps the worker keeps, and the same entries', () => {
    for (const [capacity, askEvery] of [[4, 1], [5, 3], [63, 7], [8, 2], [240, 11]]) {
      let held: E[] = [];
      let n = 0;
      run({ entries: [], every: 10, capacity }, 0, 30000, (tl) => {
        if (++n % askEvery !== 0) return;
        // What the worker's timeline reply carries: every kept step, the entries after the last held.
        const since = held.length > 0 ? held[held.length - 1].step : -1;
        held = follow(held, steps(tl), entriesAfter(tl, since));
        expect(held.map((e) => e.step)).toEqual(steps(tl));
        expect(held.every((e, i) => e === tl.entries[i])).toBe(true);
      });
    }
  });

  test('a step that neither side has is skipped', () => {
    expect(follow([{ step: 0 }], [0, 10, 20], [{ step: 20 }]).map((e) => e.step)).toEqual([0, 20]);
  });
});
