// The relaxed-SIMD build (attention-core-relaxed.*) against the SIMD build, under node (load-core.mjs
// turns on Node 20's --experimental-wasm-relaxed-simd). The builds differ only in the products' and
// fused kernels' multiply-adds: one rounding (f32x4.relaxed_madd, a real FMA on x86 with FMA3 and
// on ARM64) against two. So training agrees to a tolerance, not bit for bit, and each build is
// deterministic run to run. The tolerance, documented in scripts/README.md ("The relaxed-SIMD
// build"): over 50 steps of the "Train a GPT on text" preset and of a masked block model, every
// step's loss within 1e-5 of the SIMD build's, relatively, and one forward of the same weights
// (logits and attention) within 1e-5 of the largest value. api.test.mjs, dts.test.mjs and
// errors.test.mjs run on this build too (scripts/test-wasm, ATTN_WASM_VARIANTS=relaxed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createCore } from './load-core.mjs';
import { readSafetensors } from './safetensors.mjs';
import { detectRelaxedSimd } from '../../web/src/core/load-core.js';

const simd = await createCore('simd');
const relaxed = await createCore('relaxed');

/** The "Train a GPT on text" preset (web/src/settings/presets.ts), and a masked block model. */
const CONFIGS = {
  text: { dModel: 64, nHeads: 4, seqLen: 64, batchSize: 16, lr: 0.003, seed: 0, task: 'text', nLayers: 2, residual: true, positions: 'rope', norm: 'layernorm', normPosition: 'pre', ffn: 'gelu' },
  mlm: { vocabSize: 24, dModel: 32, nHeads: 4, kvHeads: 2, seqLen: 16, batchSize: 8, seed: 3, nLayers: 2, residual: true, positions: 'learned', norm: 'rmsnorm', ffn: 'swiglu', objective: 'mlm' },
};
const STEPS = 50;
const LOSS_TOL = 1e-5;
const FORWARD_TOL = 1e-5;

function run(core, config) {
  const t = new core.Trainer({ ...core.defaultConfig(), ...config });
  try {
    t.step(STEPS);
    return { losses: Array.from(t.lossHistory()), weights: t.exportWeights() };
  } finally {
    t.delete();
  }
}

/** One eval forward of the model in weights (a file) on ids: its logits and attention weights. */
function forward(core, config, weights, ids) {
  const t = new core.Trainer({ ...core.defaultConfig(), ...config });
  try {
    t.importWeights(weights);
    const { logits, weights: att } = t.attention(ids);
    return [...logits, ...att];
  } finally {
    t.delete();
  }
}

test('the relaxed build says what it is; this node runs relaxed SIMD once load-core.mjs asked', () => {
  assert.equal(detectRelaxedSimd(), true);
  assert.equal(relaxed.relaxedSimd, true);
  assert.equal(relaxed.simd, true);
  assert.equal(relaxed.threaded, false);
  assert.equal(simd.relaxedSimd, false);
});

test(`training: every step's loss within ${LOSS_TOL} of the SIMD build's (relative) over ${STEPS} steps, the same run to run; one forward of the same weights within ${FORWARD_TOL}`, () => {
  for (const [name, config] of Object.entries(CONFIGS)) {
    const want = run(simd, config);
    const got = run(relaxed, config);
    const again = run(relaxed, config);
    assert.deepEqual(again.losses, got.losses, `${name}: deterministic losses`);
    assert.deepEqual(again.weights, got.weights, `${name}: deterministic weights`);
    assert.equal(got.losses.length, STEPS);
    got.losses.forEach((l, i) => assert.ok(Math.abs(l - want.losses[i]) <= LOSS_TOL * Math.abs(want.losses[i]), `${name} step ${i + 1}: ${l} vs ${want.losses[i]}`));
    // Adam's first steps move a weight by about lr whatever the size of its gradient, so weights
    // trained apart may differ by lr where a gradient is near 0: the forward is compared on the
    // same weights instead.
    const ids = Int32Array.from({ length: config.seqLen }, (_, i) => (i * 7) % 5);
    const a = forward(relaxed, config, want.weights, ids), b = forward(simd, config, want.weights, ids);
    const scale = Math.max(1, ...b.map(Math.abs));
    const worst = Math.max(...a.map((x, i) => Math.abs(x - b[i])));
    assert.ok(worst <= FORWARD_TOL * scale, `${name}: forward differs by ${worst} (scale ${scale})`);
    // The fused multiply-adds are really there: the two builds do not agree bit for bit.
    assert.ok(a.some((x, i) => x !== b[i]) || got.losses.some((l, i) => l !== want.losses[i]), `${name}: the relaxed build gave the SIMD build's numbers bit for bit`);
  }
});
