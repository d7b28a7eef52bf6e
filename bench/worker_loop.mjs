// The training worker's own cost on a preset, under node: the play loop of web/src/worker/
// session.ts (bundled with rolldown, as Vite bundles it for the page) with the SIMD core, a real
// clock and progress events posted nowhere, on the "Train a GPT on text" preset by default. It
// reports, side by side in one process:
//   - the loop's steps/s against the bare Trainer stepping the same steps (rounds alternating, the
//     median of each round's loop / bare ratio): what the worker's measurements cost, with no page,
//     no main thread and no browser engine;
//   - where the loop's time goes: each core call it makes (Trainer.step, evaluateText, attention,
//     attentionStats, headScores, lossHistory, the strip's samples, ...), timed, as shares.
// The page requests the samples strip at steps 0, 100, 200, 500, 1000 (generate-model.ts); the
// driver requests it there too. --clock cpu runs the session (its chunks, progress interval and
// once-a-second validation) and every figure on this process's CPU time instead of the wall
// clock: on a machine other work keeps busy, the loop then behaves as on an idle one (one thread
// only: CPU time sums the threads). Asserts nothing; prints JSON.
//   node bench/worker_loop.mjs [--preset text|induction] [--seconds 4] [--rounds 5] [--threads 1]
//        [--clock wall|cpu]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'rolldown';
import { ROOT } from '../tests/e2e/harness.mjs';
import { createCore } from '../tests/js-api/load-core.mjs';
import { median, parseFlags } from './common.mjs';

export const PRESETS = {
  text: { dModel: 64, nHeads: 4, seqLen: 64, batchSize: 16, lr: 0.003, seed: 0, task: 'text', nLayers: 2, residual: true, positions: 'rope', norm: 'layernorm', normPosition: 'pre', ffn: 'gelu' },
  induction: { vocabSize: 32, dModel: 32, nHeads: 2, seqLen: 32, batchSize: 32, lr: 0.005, seed: 0, task: 'induction', nLayers: 2, residual: true, embInitStd: 0.5 },
};
const STRIP_STEPS = [0, 100, 200, 500, 1000];
const STRIP = { prompt: 'The ', tokens: 60, options: { temperature: 0.8 }, seed: 0 };

/** web/src/worker/session.ts as an ES module for node. */
async function loadSession() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attn-session-'));
  try {
    const out = await build({ input: path.join(ROOT, 'web/src/worker/session.ts'), output: { format: 'esm', file: path.join(dir, 'session.mjs') }, logLevel: 'silent', write: false });
    const file = path.join(dir, 'session.mjs');
    writeFileSync(file, out.output[0].code);
    return await import(pathToFileURL(file).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Wraps every method of the core's Trainer (and the strip's Decoder and Sampler) to add its
 * time to `spent` (ms by name); returns a function that restores them. */
function timeCalls(core, spent) {
  const restore = [];
  const wrap = (proto, prefix) => {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const f = proto[name];
      if (typeof f !== 'function' || name === 'constructor' || name === 'delete') continue;
      proto[name] = function (...args) {
        const t0 = now();
        try {
          return f.apply(this, args);
        } finally {
          const key = prefix + name;
          spent[key] = (spent[key] ?? 0) + now() - t0;
        }
      };
      restore.push(() => (proto[name] = f));
    }
  };
  wrap(core.Trainer.prototype, '');
  wrap(core.Decoder.prototype, 'Decoder.');
  wrap(core.Sampler.prototype, 'Sampler.');
  return () => restore.forEach((r) => r());
}

/** The clock: wall (performance.now) or this process's CPU time, in ms. */
let now = () => performance.now();

/** Plays the session for `ms` from step s0, requesting the strip's samples where the page does
 * (at the step of the latest progress event, as the page sees it); returns the step it paused at. */
function play(session, ms, s0, stripAt, latest) {
  return new Promise((resolve) => {
    const t0 = now();
    const tick = () => {
      while (stripAt.length && latest.step >= stripAt[0]) {
        stripAt.shift();
        session.call('textSample', STRIP);
      }
      if (now() - t0 < ms) return setTimeout(tick, 50);
      resolve(session.pause().step);
    };
    latest.step = s0;
    session.play(50);
    setTimeout(tick, 50);
  });
}

async function main() {
  const args = parseFlags(process.argv.slice(2), { preset: 'text', seconds: 4, rounds: 5, threads: 1, clock: 'wall' });
  if (args.clock === 'cpu') now = () => process.cpuUsage().user / 1000;
  else if (args.clock !== 'wall') throw new Error('--clock must be wall or cpu');
  const config = PRESETS[args.preset];
  if (!config) throw new Error(`--preset must be ${Object.keys(PRESETS).join(' or ')}`);
  const { Session } = await loadSession();
  const core = await createCore(args.threads > 1 ? 'threads' : 'simd', undefined, { threads: args.threads });
  const full = { ...core.defaultConfig(), ...config };
  let posted = 0;
  const latest = { step: 0 };
  const post = (msg) => {
    ++posted;
    if (msg.type === 'progress') latest.step = msg.snapshot.step;
  };
  const session = new Session(core, post, { defer: (f) => setImmediate(f), now: () => now() });
  let step = session.configure(full, { seed: 0 }).step;
  const bare = new core.Trainer(full);
  const stripAt = config.task === 'text' ? [...STRIP_STEPS] : [];
  const spent = {};
  const rounds = [];
  for (let r = 0; r < args.rounds; r++) {
    const restore = timeCalls(core, spent);
    const t0 = now();
    const s0 = step;
    step = await play(session, args.seconds * 1000, s0, stripAt, latest);
    const loopMs = now() - t0;
    restore();
    // The bare Trainer on the same steps (the same run: the core is deterministic).
    const b0 = now();
    while (bare.stepsDone() < step) bare.step(Math.min(50, step - bare.stepsDone()));
    const bareMs = now() - b0;
    rounds.push({ loop: ((step - s0) * 1000) / loopMs, bare: ((step - s0) * 1000) / bareMs, steps: [s0, step] });
  }
  const total = Object.values(spent).reduce((a, b) => a + b, 0);
  const shares = Object.fromEntries(Object.entries(spent).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, +(v / total).toFixed(4)]));
  console.log(JSON.stringify({
    preset: args.preset,
    threads: core.threads(),
    clock: args.clock,
    load_average: os.loadavg()[0],
    loop_over_bare: median(rounds.map((r) => r.loop / r.bare)),
    rounds,
    progress_events: posted,
    core_time_shares: shares,
  }, null, 1));
  bare.delete();
  session.dispose();
}

main().catch((e) => {
  console.error(`worker_loop: ${e.stack ?? e.message}`);
  process.exit(2);
});
