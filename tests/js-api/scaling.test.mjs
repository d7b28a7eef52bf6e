// The scaling-law and serial-depth calls (lessons 13 and 01) against the course's numbers and
// the native CLI's: chinchillaLoss, computeOptimal and its closed form, fitScaling,
// markovEntropyRate, serialDepth and the two scans, with their argument errors.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, runCli, throwsKind, variants } from './core.mjs';

const rel = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol * Math.abs(b), `${what}: ${a} vs ${b}`);

for (const variant of variants) {
  describe(`scaling laws (${variant})`, async () => {
    const core = await loadCore(variant);

    test('chinchillaLoss and computeOptimal give the course\'s values', () => {
      assert.ok(Math.abs(core.chinchillaLoss(70e9, 1.4e12) - 1.936645) < 5e-7);
      const rows = [[1e18, 7.843e7, 3.535362], [1e20, 6.593e8, 2.599871], [1e22, 5.053e9, 2.138624], [1e24, 4.2476e10, 1.911204]];
      for (const [C, N, L] of rows) {
        const g = core.computeOptimal(C);
        rel(g.N, N, 1e-4, `N at ${C}`);
        rel(g.L, L, 1e-4, `L at ${C}`);
        rel(g.tokensPerParam, g.D / g.N, 1e-12, 'D/N');
        const f = core.computeOptimalClosedForm(C);
        rel(f.N, g.N, 0.05, `closed-form N at ${C}`);
        assert.ok(f.L <= g.L);
      }
      throwsKind(() => core.chinchillaLoss(0, 1e9), 'input', undefined, /N = 0/);
      throwsKind(() => core.computeOptimal(1e5), 'input', undefined, /6e11/);
    });

    test('the native CLI prints the same optimum (attn scaling --chinchilla --json)', () => {
      const cli = JSON.parse(runCli(['scaling', '--chinchilla', '1e22', '--json']));
      const g = core.computeOptimal(1e22), f = core.computeOptimalClosedForm(1e22);
      rel(cli.grid.N, g.N, 1e-8, 'grid N');
      rel(cli.grid.L, g.L, 1e-8, 'grid L');
      rel(cli.closed_form.N, f.N, 1e-8, 'closed-form N');
      rel(cli.closed_form.D_per_N, f.tokensPerParam, 1e-8, 'closed-form D/N');
    });

    test('fitScaling recovers a power law; bad points are refused', () => {
      const N = Float64Array.of(1e3, 3e3, 1e4, 3e4, 1e5);
      const L = N.map((n) => 5 * n ** -0.4 + 1.25);
      const fit = core.fitScaling(N, L);
      rel(fit.alpha, 0.4, 1e-5, 'alpha');
      rel(fit.A, 5, 1e-4, 'A');
      rel(fit.E, 1.25, 1e-5, 'E');
      assert.ok(fit.residual < 1e-7);
      throwsKind(() => core.fitScaling(Float64Array.of(1, 2), Float64Array.of(1, 2)), 'input', undefined, /at least 3 points/);
      throwsKind(() => core.fitScaling([1, 2, 3], Float64Array.of(1, 2, 3)), 'input', undefined, /Float64Array/);
    });

    test('markovEntropyRate is the chain a markov sweep reports, natively', () => {
      const cli = JSON.parse(runCli(['scaling', '--sizes', '8,12,16', '--steps', '1', '--seq-len', '4', '--batch', '1', '--seed', '7', '--json']));
      rel(core.markovEntropyRate(2, 8, 7), cli.entropy_rate, 1e-8, 'the rate');  // the CLI prints 9 digits
      assert.ok(Math.abs(core.markovEntropyRate(2, 8, 8) - cli.entropy_rate) > 1e-6, 'another seed, another chain');
      const r = core.markovEntropyRate(1, 2, 3);
      assert.ok(r > 0 && r < 1, `rate of a 2-symbol chain: ${r}`);
      throwsKind(() => core.markovEntropyRate(4, 8, 1), 'config', 'markovOrder', /markov_order \(4\)/);
    });

    test('taskTargets takes the run\'s lag and markov order; a markov Trainer\'s vocabulary is its symbols', () => {
      const ids = Int32Array.of(4, 7, 1, 9, 2);
      assert.deepEqual([...core.taskTargets('lag', ids, { lag: 2 })], [-100, -100, 4, 7, 1]);
      assert.deepEqual([...core.taskTargets('lag', ids)], [...core.taskTargets('shift', ids)]);
      assert.deepEqual([...core.taskTargets('markov', ids, { markovOrder: 3 })], [-100, -100, 9, 2, -100]);
      throwsKind(() => core.taskTargets('lag', ids, { lag: 0 }), 'input', undefined, /lag/);
      const t = new core.Trainer({ task: 'markov', markovOrder: 2, markovSymbols: 5, seqLen: 8 });
      try {
        assert.equal(t.config().vocabSize, 5);
        const sample = t.sampleSequence(3);
        assert.equal(sample.length, 8);
        assert.ok(sample.every((x) => x >= 0 && x < 5));
      } finally {
        t.delete();
      }
      throwsKind(() => new core.Trainer({ task: 'lag', lag: 12 }), 'config', 'lag', /lag \(12\) must be < seqLen \(12\)/);
    });

    test('serialDepth and the scans: the course\'s depths, the Hillis-Steele rounds', () => {
      const want = { 64: 6, 512: 9, 4096: 12, 32768: 15, 262144: 18 };
      for (const [n, scan] of Object.entries(want)) assert.deepEqual(core.serialDepth(Number(n), 1), { rnn: Number(n), scan, attention: 1 });
      assert.equal(core.serialDepth(4096, 3).attention, 3);
      const xs = Float64Array.from({ length: 16 }, (_, i) => i);
      const rounds = core.parallelScan(xs);
      assert.equal(rounds.length, 5);  // the input and ceil(log2 16) = 4 rounds
      assert.deepEqual(Array.from(rounds.at(-1)), Array.from(core.serialScan(xs)));
      assert.equal(core.serialScan(xs).at(-1), 120);
      assert.deepEqual(Array.from(core.parallelScan(Float64Array.of(1, 2, 3, 4))[1]), [1, 3, 5, 7]);
      throwsKind(() => core.serialDepth(0, 1), 'input', undefined, /n \(0\)/);
    });
  });
}
