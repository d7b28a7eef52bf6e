// Loads one variant of the core in a module worker, as the playground's worker does, and reports.
import { loadAttentionCore } from './core/load-core.js';

self.onmessage = async (e) => {
  try {
    const core = await loadAttentionCore('./wasm/', { simd: e.data.simd });
    const t = new core.Trainer({ seed: 3 });
    t.step(5);
    let attentionError = null;
    try {
      t.attention(Int32Array.from([1, 64]));
    } catch (x) {
      attentionError = { isError: x instanceof Error, message: x.message, kind: x.kind, hasKey: 'key' in x };
    }
    const attention = t.attention(Int32Array.from([1, 2, 3]));
    self.postMessage({
      simd: core.simd,
      losses: Array.from(t.lossHistory()),
      weights: attention.weights.length,
      attentionError,
      stillWorks: Number.isFinite(t.step(1)),
    });
    t.delete();
  } catch (x) {
    self.postMessage({ failure: String(x && x.stack ? x.stack : x) });
  }
};
