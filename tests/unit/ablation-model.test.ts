// The Ablation panel's model under node, against a fake controller: it measures once per new run
// and per change of the Store's interventions (sized to the run's heads), a measurement's own
// snapshot (adopted by the controller) does not start another, and an imported run's interventions are not sent again. Under
// fake timers: each check comes after every round trip the model started has ended (settle()).
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { Controller } from '../../web/src/client/controller';
import type { RequestDef, Snapshot } from '../../web/src/model/protocol';
import { ablateRequest, type AblationReport } from '../../web/src/panels/ablation/request';
import { DEFAULTS } from '../../web/src/settings/settings';
import { ablationOf } from '../../web/src/settings/state';
import { Store } from '../../web/src/settings/store';
import { AblationModel, type AblationView } from '../../web/src/panels/ablation/model';

const snap = (H: number, step: number, L = 1) => ({ H, L, T: 2, step }) as unknown as Snapshot;

/** A controller whose ablate request answers at once and whose adopt() emits its snapshot, as the
 * real one's does. */
function fakeController(store: Store, H: number) {
  const listeners = new Set<() => void>();
  const ctl = {
    store,
    status: 'paused' as Controller['status'],
    snapshot: snap(H, 0) as Snapshot | null,
    runId: 1,
    ablations: [] as unknown[],
    get ready() {
      return ctl.snapshot !== null;
    },
    subscribe(f: () => void) {
      listeners.add(f);
      return () => listeners.delete(f);
    },
    emit() {
      for (const f of listeners) f();
    },
    adopt(s: Snapshot) {
      ctl.snapshot = s;
      ctl.emit();
    },
    async call(request: RequestDef<unknown, unknown>, ablation: unknown): Promise<unknown> {
      expect(request).toBe(ablateRequest);
      ctl.ablations.push(ablation);
      await new Promise((r) => setTimeout(r, 1));
      return { report: { ablation, step: ctl.snapshot!.step } as unknown as AblationReport, snapshot: { ...ctl.snapshot } };
    },
  };
  return ctl;
}

function hooks() {
  const got = { heads: [] as number[], reports: 0, problems: [] as string[] };
  const view: AblationView = {
    heads: (L, H) => got.heads.push(L * H),
    settings: () => {},
    ready: () => {},
    done: () => got.reports++,
    failed: (m) => got.problems.push(m),
    visible: () => true,
  };
  return { got, view };
}

/** Runs every timer (the fake controller's round trips) and the promises they settle, until none is left. */
const settle = () => vi.runAllTimersAsync();

describe('AblationModel', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  test('one measurement per new run, none for its own reply', async () => {
    const store = new Store(DEFAULTS);
    const ctl = fakeController(store, 4);
    const { got, view } = hooks();
    const model = new AblationModel(ctl as unknown as Controller, view, false);
    await settle();
    expect(got.heads).toEqual([4]);
    expect(ctl.ablations).toHaveLength(1);
    expect(got.reports).toBe(1);
    // A step: measured again, once.
    ctl.snapshot = snap(4, 10);
    ctl.emit();
    await settle();
    expect(ctl.ablations).toHaveLength(2);
    model.destroy();
  });

  test('a change from the panel goes to the Store, and the measurement follows it, for the run\'s heads', async () => {
    const store = new Store({ ...DEFAULTS, nHeads: 4 });
    const ctl = fakeController(store, 2); // the Store asks for 4 heads, the run has 2 (an invalid config)
    const { view } = hooks();
    const model = new AblationModel(ctl as unknown as Controller, view, false);
    await settle();
    model.change({ headsOff: [false, true] });
    expect(store.state.headsOff).toBe('2');
    await settle();
    expect(ctl.ablations.at(-1)).toEqual({ headsOff: [false, true], headsFrozen: [false, false], scaleScores: true, mask: 'causal' });
    model.restore();
    expect(store.state).toMatchObject({ headsOff: '', headsFrozen: '', mask: 'causal', scaleScores: true });
    model.destroy();
  });

  test('an imported run\'s interventions are not sent again; its new run is measured once', async () => {
    const store = new Store(DEFAULTS);
    const ctl = fakeController(store, 4);
    const { view } = hooks();
    const model = new AblationModel(ctl as unknown as Controller, view, false);
    await settle();
    const before = ctl.ablations.length;
    store.set({ headsOff: '1', mask: 'none' }, 'run');
    await settle();
    expect(ctl.ablations).toHaveLength(before);
    ctl.runId++;
    ctl.emit();
    await settle();
    expect(ctl.ablations).toHaveLength(before + 1);
    expect(ctl.ablations.at(-1)).toMatchObject({ headsOff: [true, false, false, false], mask: 'none' });
    model.destroy();
  });
});
