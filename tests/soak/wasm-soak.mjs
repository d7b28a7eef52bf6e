// Soak, wasm under node: trains STEPS (default 100,000) steps of a small config in the page's
// core under Node (tests/js-api/load-core.mjs) and checks, every CHUNK
// steps after a warm-up, that the wasm memory size and the bytes allocated on its heap
// (heapBytesInUse) are exactly what they were after warm-up, that the loss is finite, and that
// the loss history stays capped. Prints the figures as one JSON line; exits 1 on a failure.
// Run by scripts/soak (npm run soak), outside npm test.
import { createCore } from '../js-api/load-core.mjs';

const variant = process.env.SOAK_VARIANT ?? 'simd';
const STEPS = Number(process.env.SOAK_STEPS ?? 100000);
const CHUNK = 1000;
const WARMUP = 1000;
let core;
try {
  core = await createCore(variant);
} catch (e) {
  console.error(`wasm-soak: ${e.message}`);
  process.exit(1);
}

const heapSize = () => core.HEAP8.buffer.byteLength; // grows, never shrinks
const ids = Int32Array.from([3, 14, 15, 9, 6, 5, 1, 8, 9, 7, 9, 3]);
// Small, so 100,000 steps take minutes on a busy machine; the DemoConfig is SOAK_CONFIG=demo.
const config = process.env.SOAK_CONFIG === 'demo' ? {} : { vocabSize: 16, dModel: 16, nHeads: 2, seqLen: 12, batchSize: 8 };
const t = new core.Trainer(config);
const failures = [];
const samples = [];
let size0, inUse0;
const t0 = performance.now();
let steps = 0;
let minLoss = Infinity;
while (steps < STEPS) {
  const loss = t.step(CHUNK);
  steps += CHUNK;
  // Every API call the page makes, each chunk (as the worker does per snapshot).
  const att = t.attention(ids);
  const history = t.lossHistory();
  if (steps % 10000 === 0) t.exportWeights();
  if (!Number.isFinite(loss)) failures.push(`loss ${loss} at step ${steps}`);
  if (!att.weights.every(Number.isFinite)) failures.push(`non-finite attention at step ${steps}`);
  if (history.length > 16384) failures.push(`loss history has ${history.length} entries at step ${steps}`);
  minLoss = Math.min(minLoss, loss);
  if (steps === WARMUP) {
    size0 = heapSize();
    inUse0 = core.heapBytesInUse();
  } else if (steps > WARMUP) {
    const size = heapSize(), inUse = core.heapBytesInUse();
    if (size !== size0) failures.push(`wasm memory ${size} != ${size0} at step ${steps}`);
    if (inUse !== inUse0) failures.push(`heapBytesInUse ${inUse} != ${inUse0} at step ${steps}`);
  }
  if (steps % 10000 === 0) samples.push({ step: steps, loss, heapBytesInUse: core.heapBytesInUse(), memory: heapSize(), history: history.length });
}
const seconds = (performance.now() - t0) / 1000;
const result = {
  soak: 'wasm-node',
  variant,
  config: t.config(),
  steps: t.stepsDone(),
  seconds: Number(seconds.toFixed(1)),
  stepsPerSec: Math.round(steps / seconds),
  finalLoss: t.lossHistory().at(-1),
  minLoss,
  historyLength: t.lossHistory().length,
  historyStride: t.historyStride(),
  wasmMemoryBytes: size0,
  heapBytesInUseAfterWarmup: inUse0,
  heapBytesInUseAtEnd: core.heapBytesInUse(),
  samples,
  failures: failures.slice(0, 10),
};
t.delete();
console.log(JSON.stringify(result));
process.exit(failures.length ? 1 : 0);
