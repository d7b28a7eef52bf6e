// TF.js baseline: the same TinyAttentionLM and training step (forward, cross-entropy, backward,
// Adam), timed like `attn bench`: warm-up, then the median of timed blocks. Prints JSON.
//   node bench/tfjs_baseline.mjs --backend wasm|cpu --config demo|large [--embedding gather|onehot]
//                                [--blocks 5] [--block-seconds 1]
// --embedding gather (the default, the fastest formulation that runs on tfjs-backend-wasm): the
// token embedding is tf.gather forward, with a custom gradient that scatter-adds the output rows
// into the table (the wasm backend has no gradient kernel for gather). --embedding onehot: the
// one-hot x table matmul, kept as a second row.
import { createRequire } from 'node:module';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { median, parseFlags } from './common.mjs';

const CONFIGS = {
  demo: { V: 64, D: 32, H: 4, T: 12, B: 16, lr: 5e-3 },
  large: { V: 256, D: 256, H: 8, T: 256, B: 8, lr: 5e-3 },
};

function parseArgs(argv) {
  const out = parseFlags(argv, { backend: 'wasm', config: 'demo', embedding: 'gather', blocks: 5, blockSeconds: 1 });
  if (!CONFIGS[out.config]) throw new Error(`--config must be demo or large, got ${out.config}`);
  if (out.embedding !== 'gather' && out.embedding !== 'onehot') throw new Error(`--embedding must be gather or onehot, got ${out.embedding}`);
  return out;
}

// Sinusoidal table (T,D) as in cpp/attn/nn/embedding.cpp.
function positions(T, D) {
  const pe = new Float32Array(T * D);
  for (let p = 0; p < T; p++)
    for (let i = 0; i < D; i += 2) {
      const angle = p * Math.exp((-Math.log(10000) * i) / D);
      pe[p * D + i] = Math.sin(angle);
      pe[p * D + i + 1] = Math.cos(angle);
    }
  return tf.tensor2d(pe, [T, D]);
}

function uniform(shape, fanIn) {
  const b = 1 / Math.sqrt(fanIn);
  return tf.variable(tf.randomUniform(shape, -b, b));
}

/** table[ids] (N,D), with the gradient dtable = the rows of dy scatter-added at ids. */
function gatherRows(table, ids, V) {
  const f = tf.customGrad((t) => ({
    value: tf.gather(t, ids),
    gradFunc: (dy) => [tf.scatterND(ids.reshape([-1, 1]), dy, [V, dy.shape[1]])],
  }));
  return f(table);
}

function makeModel({ V, D, H, T }, embedding, shared = null) {
  const Dh = D / H;
  const params = shared ?? {
    emb: tf.variable(tf.randomNormal([V, D], 0, 0.02)),
    wqkv: uniform([D, 3 * D], D), // stored (in,out) so no transpose per step
    bqkv: uniform([3 * D], D),
    wo: uniform([D, D], D),
    bo: uniform([D], D),
    wlm: uniform([D, V], D),
    blm: uniform([V], D),
  };
  const pe = positions(T, D);
  const maskBias = tf.tensor2d(
    Float32Array.from({ length: T * T }, (_, n) => ((n % T) > Math.floor(n / T) ? -1e9 : 0)),
    [T, T],
  );
  // ids, targets: int32 (B*T) -> mean cross-entropy.
  const loss = (ids, targets, B) => {
    const rows = embedding === 'gather' ? gatherRows(params.emb, ids, V) : tf.oneHot(ids, V).matMul(params.emb);
    const x = rows.reshape([B, T, D]).add(pe).reshape([B * T, D]);
    const qkv = x.matMul(params.wqkv).add(params.bqkv).reshape([B, T, 3, H, Dh]);
    const [q, k, v] = tf.unstack(qkv.transpose([2, 0, 3, 1, 4])); // each (B,H,T,Dh)
    const scores = tf.matMul(q, k, false, true).mul(1 / Math.sqrt(Dh)).add(maskBias);
    const o = tf.matMul(tf.softmax(scores), v).transpose([0, 2, 1, 3]).reshape([B * T, D]);
    const a = o.matMul(params.wo).add(params.bo);
    const logits = a.matMul(params.wlm).add(params.blm);
    return tf.losses.softmaxCrossEntropy(tf.oneHot(targets, V), logits);
  };
  return { params, loss };
}

/** The custom gradient of the gather embedding equals autodiff's through one-hot x table on the
 * same weights: the baseline trains exactly the same model. Throws if they differ. */
function checkGatherGradient(c) {
  const ids = tf.tensor1d(Int32Array.from({ length: c.B * c.T }, (_, i) => (i * 7 + (i >> 3)) % c.V), 'int32');
  const gather = makeModel(c, 'gather');
  const onehot = makeModel(c, 'onehot', gather.params);
  const grad = (m) => tf.variableGrads(() => m.loss(ids, ids, c.B), [m.params.emb]).grads[m.params.emb.name];
  const diff = tf.max(tf.abs(tf.sub(grad(gather), grad(onehot)))).dataSync()[0];
  if (!(diff < 1e-6)) throw new Error(`the gather embedding's gradient differs from the one-hot one's by ${diff}`);
}

// The repeat task: one random id per row, repeated; inputs and targets are equal.
function repeatBatch(V, B, T) {
  const ids = new Int32Array(B * T);
  for (let b = 0; b < B; b++) ids.fill(Math.floor(Math.random() * V), b * T, (b + 1) * T);
  return ids;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.backend === 'wasm') {
    const require = createRequire(import.meta.url);
    const dir = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json'));
    setWasmPaths(path.join(dir, 'dist') + path.sep);
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false); // one thread, like the other engines
  }
  await tf.setBackend(args.backend);
  await tf.ready();
  const c = CONFIGS[args.config];
  const { loss } = makeModel(c, args.embedding);
  if (args.embedding === 'gather') checkGatherGradient(c);
  const optimizer = tf.train.adam(c.lr, 0.9, 0.999, 1e-8);
  const step = () => {
    const ids = repeatBatch(c.V, c.B, c.T);
    const value = tf.tidy(() => {
      const idsT = tf.tensor1d(ids, 'int32');
      return optimizer.minimize(() => loss(idsT, idsT, c.B), true);
    });
    const out = value.dataSync()[0]; // read the loss every step, as Trainer::step returns it
    value.dispose();
    return out;
  };
  let first = step();
  let perBlock = 0;
  const t0 = performance.now();
  while ((performance.now() - t0) / 1000 < args.blockSeconds) {
    step();
    perBlock++;
  }
  const rates = [];
  let last = first;
  for (let b = 0; b < args.blocks; b++) {
    const t = performance.now();
    for (let i = 0; i < perBlock; i++) last = step();
    rates.push(perBlock / ((performance.now() - t) / 1000));
  }
  const result = {
    engine: `tfjs-${args.backend}${args.embedding === 'onehot' ? '-onehot' : ''}`,
    embedding: args.embedding,
    config: args.config,
    steps_per_s: median(rates),
    blocks: rates,
    first_loss: first,
    last_loss: last,
  };
  console.log(JSON.stringify(result));
}

main().catch((e) => {
  console.error(`tfjs_baseline: ${e.message}`);
  process.exit(2);
});
