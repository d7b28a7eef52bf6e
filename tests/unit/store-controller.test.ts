// The Store is the only owner of the run's settings: the controller keeps no copy, builds every
// request from the Store when it sends it (the ablation sized to the run's head count), turns the
// Store's changes into configure and sample requests, and an import writes the Store without a
// second request. Against a fake worker client, under node.
import { describe, expect, test } from 'vitest';
import { Controller } from '../../web/src/client/controller';
import type { Ablation, Request, Snapshot } from '../../web/src/model/protocol';
import { DEFAULTS, type State } from '../../web/src/settings/settings';
import { trainerConfig } from '../../web/src/settings/state';
import { Store, type ChangeSource } from '../../web/src/settings/store';
import type { WorkerClient } from '../../web/src/client/worker-client';
import { AblationModel } from '../../web/src/panels/ablation/model';
import { ablateRequest, type AblationReport } from '../../web/src/panels/ablation/request';

/** A request as the controller hands it to the client (without its id). */
type Sent = { [K in Request['type']]: Omit<Extract<Request, { type: K }>, 'id'> }[Request['type']];

function snapshot(H: number, step = 0, L = 1): Snapshot {
  const T = 3;
  return { step, loss: 1, lossAtInit: step === 0, initLoss: 1, stepsPerSec: 0, history: new Float32Array(0), historyStride: 1, ids: new Int32Array([1, 2, 3]), weights: new Float32Array(L * H * T * T), H, L, T, mask: 'causal', visible: new Uint8Array(T * T).fill(1), phaseChange: -1 };
}

/** A worker client that records each request and answers it at once. */
function fakeClient() {
  const sent: Sent[] = [];
  let H = 0;
  let L = 1;
  const client = {
    assets: { reference: { weights: '', input: '', expected: '' } },
    onEvent: () => {},
    onCrash: () => {},
    start: async () => ({ simd: true, threads: 1 }),
    request: async (_type: string, body: Sent) => {
      sent.push(body);
      switch (body.type) {
        case 'configure':
          H = body.config.nHeads;
          L = body.config.nLayers;
          return { type: 'configured', snapshot: snapshot(H, 0, L) };
        case 'importRun':
          if (body.run.config) [H, L] = [body.run.config.nHeads, body.run.config.nLayers];
          return { type: 'configured', snapshot: snapshot(H, 7, L) };
        case 'sample':
          return { type: 'sampled', snapshot: snapshot(H, 0, L) };
        case 'call':
          if (body.request !== ablateRequest.name) throw new Error(`unexpected call ${body.request}`);
          return { type: 'answer', output: { snapshot: snapshot(H, 0, L), report: { ablation: body.input, step: 0 } } };
        default:
          throw new Error(`unexpected request ${body.type}`);
      }
    },
  };
  return { client: client as unknown as WorkerClient, sent };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

/** The Ablation panel's request, as its model builds it from the Store and sends it through the
 * controller when it meets a new run; resolves with the report. */
function ablate(ctl: Controller): Promise<AblationReport> {
  return new Promise((resolve, reject) => {
    const model = new AblationModel(ctl, {
      heads: () => {},
      settings: () => {},
      ready: () => {},
      visible: () => true,
      done: (r) => {
        model.destroy();
        resolve(r);
      },
      failed: (why) => reject(new Error(why)),
    }, false);
  });
}

async function started(state: Partial<State> = {}) {
  const store = new Store({ ...DEFAULTS, ...state });
  const { client, sent } = fakeClient();
  const ctl = new Controller(client, store);
  await ctl.start();
  await ctl.configure();
  return { store, ctl, sent };
}

describe('the Store owns the settings; the controller derives its requests', () => {
  test('the first configure: config, sample ids and ablation from the Store', async () => {
    const { sent, ctl } = await started({ nHeads: 2, dModel: 8, sample: '1 2 99', vocabSize: 16, headsOff: '2', mask: 'none' });
    expect(sent).toEqual([
      {
        type: 'configure',
        // Every config key, the Store's value or its default.
        config: { ...trainerConfig(DEFAULTS), vocabSize: 16, dModel: 8, nHeads: 2 },
        sample: [1, 2],
        ablation: { headsOff: [false, true], headsFrozen: [false, false], scaleScores: true, mask: 'none' },
      },
    ]);
    expect(ctl.status).toBe('paused');
    // No copy of a setting in the controller.
    for (const k of ['config', 'sample', 'ablationNow', 'currentConfig', 'currentAblation']) expect(k in ctl, k).toBe(false);
  });

  test('a config change configures again, the ablation sized to the new head count', async () => {
    const { store, sent } = await started({ headsOff: '1,4' });
    store.set({ nHeads: 2 });
    await tick();
    expect(sent.at(-1)).toMatchObject({ type: 'configure', config: { nHeads: 2 }, ablation: { headsOff: [true, false], headsFrozen: [false, false] } });
    // The Store keeps what was typed; head 4 comes back with 4 heads.
    expect(store.state.headsOff).toBe('1,4');
    store.set({ nHeads: 4 });
    await tick();
    expect(sent.at(-1)).toMatchObject({ type: 'configure', ablation: { headsOff: [true, false, false, true] } });
  });

  test('with layers, configure and ablate size the ablation to every layer\'s heads (global index)', async () => {
    const { store, ctl, sent } = await started({ nHeads: 2, nLayers: 2, residual: true, headsOff: '3' });
    expect(sent.at(-1)).toMatchObject({ type: 'configure', config: { nHeads: 2, nLayers: 2, residual: true }, ablation: { headsOff: [false, false, true, false] } });
    store.set({ headsFrozen: '2' });
    await ablate(ctl);
    expect(sent.at(-1)).toEqual({ type: 'call', request: 'ablate', input: { headsOff: [false, false, true, false], headsFrozen: [false, true, false, false], scaleScores: true, mask: 'causal' } });
    // One layer again: head 3 does not exist, and is left out.
    store.set({ nLayers: 1 });
    await tick();
    expect(sent.at(-1)).toMatchObject({ type: 'configure', config: { nLayers: 1 }, ablation: { headsOff: [false, false], headsFrozen: [false, true] } });
  });

  test('a sample change asks for the new sequence only', async () => {
    const { store, sent } = await started();
    store.set({ sample: '5 6,7' });
    await tick();
    expect(sent.at(-1)).toEqual({ type: 'sample', sample: [5, 6, 7] });
    expect(sent.filter((r) => r.type === 'configure')).toHaveLength(1);
  });

  test('an empty sample asks for the task generator\'s sequence, by seed; a new seed asks again', async () => {
    const { store, sent } = await started({ sample: '', sampleSeed: 4 });
    expect(sent.find((r) => r.type === 'configure')).toMatchObject({ sample: { seed: 4 } });
    store.set({ sampleSeed: 5 });
    await tick();
    expect(sent.at(-1)).toEqual({ type: 'sample', sample: { seed: 5 } });
    store.set({ sample: ' , ' });
    await tick();
    expect(sent.at(-1)).toEqual({ type: 'sample', sample: { seed: 5 } });
    expect(sent.filter((r) => r.type === 'configure')).toHaveLength(1);
  });

  test('the Ablation panel\'s request sends the Store\'s interventions for the run\'s heads, and its snapshot becomes the page\'s', async () => {
    const { store, ctl, sent } = await started({ nHeads: 4 });
    store.set({ headsFrozen: '3', scaleScores: false });
    const before = ctl.snapshot;
    const report = await ablate(ctl);
    expect(sent.at(-1)).toEqual({ type: 'call', request: 'ablate', input: { headsOff: [false, false, false, false], headsFrozen: [false, false, true, false], scaleScores: false, mask: 'causal' } });
    expect(ctl.snapshot).not.toBe(before);
    expect(report.ablation.headsFrozen).toEqual([false, false, true, false]);
  });

  test('an import writes its settings to the Store, marked as the run\'s, and sends nothing more', async () => {
    const { store, ctl, sent } = await started();
    const seen: [ReadonlySet<keyof State>, ChangeSource][] = [];
    store.subscribe((_s, changed, source) => seen.push([changed, source]));
    const ablation: Ablation = { headsOff: [true, false], headsFrozen: [false, true], scaleScores: true, mask: 'inverted' };
    const config = { vocabSize: 8, dModel: 4, nHeads: 2, seqLen: 4, batchSize: 2, lr: 0.01, seed: 3, attnDropout: 0, outDropout: 0, task: 'shift' as const, nLayers: 1, residual: true,
      kvHeads: 1, positions: 'rope' as const, maxSeqLen: 8, norm: 'rmsnorm' as const, normPosition: 'post' as const, ffn: 'swiglu' as const, ffnMult: 2 };
    const runId = ctl.runId;
    await ctl.importRun({ config, sample: [1, 2, 3], ablation });
    await tick();
    expect(sent.map((r) => r.type)).toEqual(['configure', 'importRun']);
    expect(store.state).toMatchObject({ ...config, sample: '1 2 3', headsOff: '1', headsFrozen: '2', mask: 'inverted', scaleScores: true });
    expect(seen).toHaveLength(1);
    expect(seen[0][1]).toBe('run');
    expect(ctl.runId).toBe(runId + 1);
    expect(ctl.snapshot?.step).toBe(7);
    // The Ablation panel reads the imported interventions from the Store.
    await ablate(ctl);
    expect(sent.at(-1)).toEqual({ type: 'call', request: 'ablate', input: ablation });
  });

  test('after destroy the controller no longer follows the Store', async () => {
    const { store, ctl, sent } = await started();
    ctl.destroy();
    store.set({ seed: 9 });
    await tick();
    expect(sent).toHaveLength(1);
  });
});
