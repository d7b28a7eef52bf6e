// wasm against the native build of the same core (the `attn` CLI): bit-identical initial weights,
// loss histories within 1e-4 relative, weights files that round-trip, and the same eval forward;
// at 1 layer and at 2 and 3 layers (with and without the residual stream), for the
// transformer block's options, and for masked language modelling and the attention variants; and
// the core's modelReport against the CLI's parameter count and weights file.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { loadCore, runCli, variants } from './core.mjs';
import { readSafetensors, writeSafetensors } from './safetensors.mjs';

const LOSS_RTOL = 1e-4;
const FORWARD_TOL = 1e-5; // |wasm - native| <= FORWARD_TOL * (1 + |native|)

const CONFIGS = {
  demo: {},
  dropout: { vocabSize: 24, dModel: 16, nHeads: 2, seqLen: 8, batchSize: 8, lr: 0.01, seed: 7, attnDropout: 0.1, outDropout: 0.2 },
  wide: { vocabSize: 40, dModel: 64, nHeads: 8, seqLen: 16, batchSize: 4, seed: 123456789 },
  // Depth: 2 layers with the residual stream, and 3 layers without it.
  layers2residual: { vocabSize: 32, dModel: 32, nHeads: 2, seqLen: 16, batchSize: 8, seed: 5, nLayers: 2, residual: true },
  layers3: { vocabSize: 20, dModel: 16, nHeads: 2, seqLen: 10, batchSize: 8, seed: 11, nLayers: 3 },
  // The transformer block: every option at least once.
  blockPre: {
    vocabSize: 24, dModel: 16, nHeads: 4, seqLen: 8, batchSize: 8, seed: 3, nLayers: 2, residual: true,
    kvHeads: 2, positions: 'rope', norm: 'rmsnorm', ffn: 'swiglu', ffnMult: 2,
  },
  blockPost: {
    vocabSize: 24, dModel: 16, nHeads: 2, seqLen: 8, batchSize: 8, seed: 4, residual: true,
    kvHeads: 1, positions: 'learned', maxSeqLen: 12, norm: 'layernorm', normPosition: 'post', ffn: 'gelu',
  },
  blockAlibi: { vocabSize: 24, dModel: 16, nHeads: 2, seqLen: 8, batchSize: 8, seed: 6, nLayers: 3, residual: true, positions: 'alibi', ffn: 'relu' },
  // Look inside: the embedding's init scale.
  embInit: { vocabSize: 16, dModel: 16, nHeads: 2, seqLen: 8, batchSize: 8, seed: 8, embInitStd: 1 },
  // Masked language modelling and the attention variants.
  mlmWindowDiff: {
    vocabSize: 16, dModel: 16, nHeads: 4, seqLen: 8, batchSize: 8, seed: 9, task: 'copy', residual: true,
    objective: 'mlm', maskRate: 0.3, attention: 'window', window: 3, differential: true, kvHeads: 2,
  },
  stridedAlibi: {
    vocabSize: 16, dModel: 16, nHeads: 2, seqLen: 10, batchSize: 8, seed: 10, nLayers: 2, residual: true,
    attention: 'strided', window: 2, stride: 3, positions: 'alibi', norm: 'rmsnorm', attnDropout: 0.1,
  },
};

// Each JS config key's flag, from the CLI's own schema (attn schema).
let flags;
const flagOf = (key) => {
  flags ??= Object.fromEntries(JSON.parse(runCli(['schema'])).map((k) => [k.js, `--${k.flag}`]));
  return flags[key];
};
// A boolean key is a switch: given when true, left out when false.
const cliFlags = (config) => Object.entries(config).flatMap(([k, v]) =>
  typeof v === 'boolean' ? (v ? [flagOf(k)] : []) : [flagOf(k), String(v)]);

const dir = mkdtempSync(join(tmpdir(), 'attn-web-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// Runs `attn train` once per (config, steps): its losses (every step) and its saved weights.
const nativeRuns = new Map();
function nativeTrain(name, steps) {
  const key = `${name}-${steps}`;
  if (!nativeRuns.has(key)) {
    const path = join(dir, `${key}.safetensors`);
    const stdout = runCli(['train', ...cliFlags(CONFIGS[name]), '--steps', String(steps), '--log-every', '1', '--save', path]);
    // An mlm model's report adds its masked-position accuracy on the validation batches.
    const losses = [...stdout.matchAll(/^step (\d+) loss (\S+) accuracy \S+( val_masked_accuracy \S+)?$/gm)].map((m) => Number(m[2]));
    assert.equal(losses.length, steps, `attn train printed ${losses.length} losses for ${steps} steps`);
    const params = stdout.match(/^parameters: (\d+)$/m);
    assert.ok(params, 'attn train printed no parameters line');
    nativeRuns.set(key, { losses, weights: new Uint8Array(readFileSync(path)), params: Number(params[1]) });
  }
  return nativeRuns.get(key);
}

// Largest |a - b| / |b| and where, for a readable failure.
function worstRelative(a, b) {
  let worst = { rel: 0, i: -1 };
  for (let i = 0; i < b.length; ++i) {
    const rel = Math.abs(a[i] - b[i]) / Math.abs(b[i]);
    if (!(rel <= worst.rel)) worst = { rel, i };
  }
  return worst;
}

for (const variant of variants) {
  describe(`wasm (${variant}) against native`, async () => {
    const core = await loadCore(variant);

    for (const name of Object.keys(CONFIGS)) {
      test(`${name}: exportWeights() of a new Trainer == attn train --steps 0 --save, byte for byte`, () => {
        const t = new core.Trainer(CONFIGS[name]);
        try {
          const wasm = t.exportWeights();
          const native = nativeTrain(name, 0).weights;
          assert.equal(wasm.length, native.length);
          const first = wasm.findIndex((b, i) => b !== native[i]);
          assert.equal(first, -1, `first differing byte at ${first}`);
        } finally {
          t.delete();
        }
      });

      test(`${name}: modelReport() == attn train's parameters line and weights file; its flops == productProfile's`, () => {
        const report = core.modelReport(CONFIGS[name]);
        const native = nativeTrain(name, 0);
        assert.equal(report.paramCount, native.params);
        const file = readSafetensors(native.weights);
        // The file lists its tensors sorted by name (safetensors' order), the report in the state dict's.
        const byName = (a, b) => (a[0] < b[0] ? -1 : 1);
        assert.deepEqual(report.tensors.map((t) => [t.name, [...t.shape]]).sort(byName), Object.entries(file).map(([n, t]) => [n, t.shape]).sort(byName));
        assert.equal(report.tensors.reduce((n, t) => n + t.numel, 0), report.paramCount);
        const profiled = core.productProfile(CONFIGS[name], 1).reduce((f, p) => f + p.flops, 0);
        assert.ok(Math.abs(report.flops - profiled) <= 1e-9 * profiled, `${report.flops} vs ${profiled}`);
      });

      test(`${name}: 100 training losses within ${LOSS_RTOL} relative of native`, () => {
        const t = new core.Trainer(CONFIGS[name]);
        try {
          const last = t.step(100);
          const wasm = t.lossHistory();
          const native = nativeTrain(name, 100).losses;
          assert.equal(wasm.length, 100);
          assert.equal(last, wasm[99]);
          const { rel, i } = worstRelative(wasm, native);
          assert.ok(rel <= LOSS_RTOL, `step ${i + 1}: wasm ${wasm[i]} native ${native[i]} (relative ${rel})`);
          assert.ok(native[99] < native[0], 'the loss falls');
        } finally {
          t.delete();
        }
      });
    }

    test('weights trained natively import into wasm and export back unchanged', () => {
      const native = nativeTrain('demo', 100).weights;
      const t = new core.Trainer({});
      try {
        t.importWeights(native);
        assert.deepEqual(t.exportWeights(), native);
      } finally {
        t.delete();
      }
    });

    // One layer: attention (B,H,T,T) as the curriculum; deeper: (L,B,H,T,T), and attention()'s
    // weights are (L,H,T,T) layer-major, so with B = 1 the two are the same numbers.
    for (const name of ['wide', 'layers2residual', 'layers3', 'stridedAlibi']) {
      test(`${name}: attention() after importing native weights == attn forward (logits, attention)`, () => {
        const config = CONFIGS[name];
        const L = config.nLayers ?? 1;
        const native = nativeTrain(name, 100).weights;
        const T = config.seqLen - 1;
        const ids = Int32Array.from({ length: T }, (_, i) => (i * 7 + 3) % config.vocabSize);
        const input = join(dir, `${name}-forward-in.safetensors`);
        const output = join(dir, `${name}-forward-out.safetensors`);
        const weightsPath = join(dir, `${name}-forward-weights.safetensors`);
        writeFileSync(weightsPath, native);
        writeFileSync(input, writeSafetensors({ ids: { dtype: 'I32', shape: [1, T], data: ids } }));
        runCli(['forward', '--weights', weightsPath, '--input', input, '--output', output]);
        const expected = readSafetensors(new Uint8Array(readFileSync(output)));
        assert.deepEqual(expected.logits.shape, [1, T, config.vocabSize]);
        assert.deepEqual(expected.attention.shape, L === 1 ? [1, config.nHeads, T, T] : [L, 1, config.nHeads, T, T]);

        const t = new core.Trainer(config);
        try {
          t.importWeights(native);
          const got = t.attention(ids);
          assert.equal(got.nHeads, config.nHeads);
          assert.equal(got.nLayers, L);
          assert.equal(got.seqLen, T);
          assert.equal(got.vocabSize, config.vocabSize);
          assert.equal(got.weights.length, L * config.nHeads * T * T);
          for (const [key, want] of [['logits', expected.logits.data], ['weights', expected.attention.data]]) {
            assert.equal(got[key].length, want.length, key);
            for (let i = 0; i < want.length; ++i)
              assert.ok(Math.abs(got[key][i] - want[i]) <= FORWARD_TOL * (1 + Math.abs(want[i])), `${key}[${i}]: wasm ${got[key][i]} native ${want[i]}`);
          }
        } finally {
          t.delete();
        }
      });
    }
  });
}
