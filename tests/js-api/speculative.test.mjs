// Speculative decoding and tiled attention through the JS API, both builds: greedy output
// token-identical to the target's own (the core's generate() and the page's Decoder loop) for a
// draft trained in the same module from the same text and for the bigram; the step-wise decoder;
// the exactness check; the figures; the draft's suggested config; the tiled trace of one head of
// the block; and bad arguments as errors of kind input that name the value.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadCore, variants } from './core.mjs';

// The chi-square threshold of the exactness check here, as in tests/cpp/test_speculative.cpp: a
// correct implementation fails one of the two tests with probability at most 2e-5.
const P_THRESHOLD = 1e-5;

// A small GPT-like target and the suggested draft, both trained briefly on the default corpus.
function trainModels(core) {
  const corpus = core.defaultCorpus();
  const target = new core.Trainer({ task: 'text', dModel: 32, nHeads: 4, seqLen: 32, batchSize: 8, lr: 3e-3, seed: 0,
    nLayers: 2, residual: true, positions: 'rope', norm: 'layernorm', ffn: 'gelu', ffnMult: 2 }, corpus);
  target.step(80);
  const draft = new core.Trainer({ ...core.draftConfig(target.config()), batchSize: 8 }, corpus);
  draft.step(80);
  return { target, draft, vocab: target.corpus().vocab };
}

// Greedy decoding as the Generate panel does it: a Decoder with the cache, the core's distribution
// at temperature 0 and the Sampler's draw.
function panelGreedy(core, trainer, prompt, n) {
  const decoder = new core.Decoder(trainer, { useCache: true });
  const sampler = new core.Sampler(0);
  try {
    let logits;
    for (const id of prompt) logits = decoder.push(id);
    const out = [];
    for (let i = 0; i < n; ++i) {
      out.push(sampler.draw(core.nextTokenDistribution(logits, { temperature: 0 })));
      if (i + 1 < n) logits = decoder.push(out[i]);
    }
    return Int32Array.from(out);
  } finally {
    decoder.delete();
    sampler.delete();
  }
}

const isInput = (message) => (e) => e instanceof Error && e.kind === 'input' && message.test(e.message);

for (const variant of variants) {
  describe(`speculative decoding (${variant})`, async () => {
    const core = await loadCore(variant);
    const { target, draft: draftTrainer, vocab } = trainModels(core);

    test('the suggested draft: 1 layer, small, the same text', () => {
      const c = draftTrainer.config();
      assert.equal(c.nLayers, 1);
      assert.equal(c.dModel, 32);
      assert.equal(c.task, 'text');
      assert.equal(c.vocabSize, target.config().vocabSize);
      assert.equal(core.draftSteps, 300);
    });

    test('greedy: token-identical to the target\'s own greedy output, for a trained draft and for the bigram', () => {
      // The short prompt runs past the window (32); the long one starts past it.
      for (const text of ['The cat ', 'the heads attend to the tokens before them and ']) {
        const prompt = core.encodeText(vocab, text);
        const panel = panelGreedy(core, target, prompt, 60);
        for (const [name, make] of [['model', () => core.modelDraft(draftTrainer)], ['bigram', () => core.bigramDraft(target)]]) {
          const draft = make();
          try {
            assert.equal(draft.kind(), name);
            assert.equal(draft.vocabSize(), vocab.length);
            for (const draftTokens of [1, 4, 8]) {
              const r = core.speculativeGenerate(target, draft, { prompt, tokens: 60, draftTokens, options: { temperature: 0 } });
              const what = `${name} N ${draftTokens} "${text}"`;
              assert.deepEqual(r.tokens, r.plainTokens, what);
              assert.deepEqual(r.tokens, panel, what);
              assert.equal(r.fates.length, 60);
              assert.equal(r.stats.tokens, 60);
              assert.ok(r.stats.accepted <= r.stats.judged && r.stats.judged <= r.stats.proposed, what);
              assert.ok(r.wallMs >= 0 && r.plainMs >= 0);
            }
          } finally {
            draft.delete();
          }
        }
      }
    });

    test('the step-wise decoder gives the one-call generation, with each token\'s fate', () => {
      const draft = core.modelDraft(draftTrainer);
      const prompt = core.encodeText(vocab, 'A small dog ');
      const options = { prompt, tokens: 50, draftTokens: 4, options: { temperature: 0.9, topK: 20 }, seed: 5 };
      const whole = core.speculativeGenerate(target, draft, options);
      const g = new core.SpeculativeDecoder(target, draft, options);
      try {
        const tokens = [];
        const fates = [];
        let chunk;
        do {
          chunk = g.next(1);
          assert.ok(chunk.tokens.length >= 1 && chunk.tokens.length <= 5, 'one round: 1 to N + 1 tokens');
          assert.equal(chunk.fates.length, chunk.tokens.length);
          // Within a round every token but the last is an accepted draft token.
          for (let i = 0; i + 1 < chunk.fates.length; ++i) assert.equal(chunk.fates[i], 0);
          tokens.push(...chunk.tokens);
          fates.push(...chunk.fates);
        } while (!chunk.done);
        assert.ok(g.done());
        assert.deepEqual(Int32Array.from(tokens), whole.tokens);
        assert.deepEqual(Uint8Array.from(fates), whole.fates);
        const s = g.stats();
        assert.deepEqual(s, whole.stats);
        assert.equal(s.tokens, 50);
        assert.ok(fates.every((f) => f === 0 || f === 1 || f === 2));
        // Each round ends with one resampled or bonus token (the last round's may be cut off).
        const ends = fates.filter((f) => f !== 0).length;
        assert.ok(ends === s.rounds || ends === s.rounds - 1, `${ends} ends of ${s.rounds} rounds`);
        assert.ok(fates.length - ends <= s.accepted);
        assert.ok(s.alpha >= 0 && s.alpha <= 1 && s.meanOverlap > 0 && s.meanOverlap <= 1);
        assert.equal(s.expectedTokensPerRound, core.expectedTokensPerRound(s.alpha, 4));
        assert.equal(g.next(3).tokens.length, 0, 'nothing after done');
        // A draft serves one generation at a time.
        const h = new core.SpeculativeDecoder(target, draft, options);
        h.next(1);
        core.speculativeGenerate(target, draft, { ...options, tokens: 5, comparePlain: false });
        assert.throws(() => h.next(1), (e) => e.kind === 'state' && /another generation has used this draft/.test(e.message));
        h.delete();
      } finally {
        g.delete();
        draft.delete();
      }
    });

    test('the exactness check: the first and second tokens follow the target\'s distribution', () => {
      const draft = core.bigramDraft(target);
      try {
        const e = core.speculativeExactness(target, draft, { prompt: core.encodeText(vocab, 'the mo'), draftTokens: 4, seed: 3, samples: 4000 });
        for (const [name, p] of [['first', e.first], ['second', e.second]]) {
          assert.equal(p.counts.reduce((a, b) => a + b, 0), 4000, name);
          assert.ok(Math.abs(p.expected.reduce((a, b) => a + b, 0) - 1) < 1e-4, name);
          assert.ok(p.dof >= 3, `${name}: ${p.dof} degrees of freedom`);
          assert.equal(p.impossible, 0, name);
          assert.ok(p.pValue > P_THRESHOLD, `${name}: chi-square ${p.statistic}, p ${p.pValue}`);
        }
        assert.ok(e.stats.judged > e.stats.accepted, 'rejections happened');
      } finally {
        draft.delete();
      }
    });

    test('the acceptance to expect on a text: 1 for the target itself, falling with the draft', () => {
      const ids = core.encodeText(vocab, 'The cat sat on the mat. A small dog ran to the park.');
      const itself = core.modelDraft(target);
      const small = core.modelDraft(draftTrainer);
      const bigram = core.bigramDraft(target);
      try {
        assert.ok(Math.abs(core.expectedAcceptance(target, itself, { ids }) - 1) < 1e-5);
        const a = core.expectedAcceptance(target, small, { ids });
        const b = core.expectedAcceptance(target, bigram, { ids, options: { temperature: 1 } });
        assert.ok(a > 0 && a < 1 && b > 0 && b < 1, `${a} ${b}`);
        assert.equal(core.expectedAcceptance(target, small, { ids }), a, 'deterministic');
        assert.notEqual(core.expectedAcceptance(target, small, { ids, options: { temperature: 0.5 } }), a);
        assert.throws(() => core.expectedAcceptance(target, small, { ids: Int32Array.of(1) }), isInput(/at least 2 tokens/));
        assert.throws(() => core.expectedAcceptance(target, small, { prompt: ids }), isInput(/unknown expectedAcceptance key 'prompt'/));
      } finally {
        itself.delete();
        small.delete();
        bigram.delete();
      }
    });

    test('bad drafts and options: one sentence naming the value, kind input; nothing leaks', () => {
      const before = core.heapBytesInUse();
      const tokensTask = new core.Trainer({ vocabSize: 40 });
      const other = core.modelDraft(tokensTask);
      const bigram = core.bigramDraft(target);
      const prompt = core.encodeText(vocab, 'the ');
      try {
        for (const [call, message] of [
          [() => core.speculativeGenerate(target, other, { prompt, tokens: 5 }), /the draft's vocabulary has 40 tokens but the target's has \d+/],
          [() => new core.SpeculativeDecoder(target, other, { prompt, tokens: 5 }), /the draft's vocabulary has 40/],
          [() => core.bigramDraft(tokensTask), /needs a text model/],
          [() => core.bigramDraft(target, 'the Queen sat on the mat and the cat sat on the mat.'), /'Q' \(U\+0051\) is not in the model's vocabulary/],
          [() => core.speculativeGenerate(target, bigram, { prompt, tokens: 5, draftTokens: 17 }), /draft tokens per round \(17\) must be in \[1, 16\]/],
          [() => core.speculativeGenerate(target, bigram, { prompt, tokens: 5, options: { topP: 0 } }), /top_p \(0\)/],
          [() => core.speculativeGenerate(target, bigram, { prompt: Int32Array.of(), tokens: 5 }), /the prompt is empty/],
          [() => core.speculativeGenerate(target, bigram, { prompt: [1, 2], tokens: 5 }), /Int32Array/],
          [() => core.speculativeGenerate(target, bigram, { prompt, tokens: 5, draft: 3 }), /unknown speculative key 'draft'/],
          [() => core.speculativeExactness(target, bigram, { prompt, samples: 0 }), /samples \(0\)/],
          [() => core.expectedTokensPerRound(2, 4), /alpha \(2\)/],
        ]) {
          assert.throws(call, isInput(message), String(message));
        }
        const g = new core.SpeculativeDecoder(target, bigram, { prompt, tokens: 5 });
        assert.throws(() => g.next(0), isInput(/rounds \(0\)/));
        g.delete();
      } finally {
        bigram.delete();
        other.delete();
        tokensTask.delete();
      }
      assert.ok(core.heapBytesInUse() <= before + 64 * 1024, `heap grew by ${core.heapBytesInUse() - before} bytes`);
    });
  });

  describe(`tiled attention (${variant})`, async () => {
    const core = await loadCore(variant);

    test('one head of the block tile by tile: running max and sum, the final rows equal the softmax', () => {
      for (const positions of ['rope', 'alibi']) {
        const config = { vocabSize: 20, dModel: 16, nHeads: 4, kvHeads: 2, seqLen: 12, positions };
        const ids = Int32Array.from({ length: 11 }, (_, i) => (i * 7) % 20);
        const t = core.tiledAttention({ config, ids, head: 3, tileSize: 4 });
        assert.equal(t.tiles, 3);
        assert.equal(t.kvHead, 1);
        assert.equal(t.seqLen, 11);
        assert.deepEqual([t.rowMax.rows, t.rowMax.cols, t.rowSum.rows, t.rowSum.cols], [3, 11, 3, 11]);
        assert.ok(t.maxWeightDifference <= 1e-6 && t.maxLayerWeightDifference <= 1e-6, positions);
        assert.ok(t.maxOutDifference <= 1e-5);
        assert.equal(t.alibiSlope > 0, positions === 'alibi');
        const block = core.transformerBlock({ config, ids });
        for (let i = 0; i < 11; ++i) {
          const row = t.weights.data.subarray(i * 11, i * 11 + 11);
          assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5);
          for (let j = 0; j < 11; ++j) assert.ok(Math.abs(row[j] - block.weights.data[(3 * 11 + i) * 11 + j]) <= 1e-6);
          // The running max never falls; row i has seen every key it may see after tile floor(i / 4).
          for (let k = 1; k < 3; ++k) assert.ok(t.rowMax.data[k * 11 + i] >= t.rowMax.data[(k - 1) * 11 + i]);
        }
        assert.ok(t.plainBytes === 11 * 11 * 4 && t.tiledBytes > 0);
      }
      for (const [input, message] of [
        [{ config: { dModel: 16, nHeads: 4 }, ids: Int32Array.of(1, 2), head: 4, tileSize: 1 }, /head \(4\) must be in \[0, 3\]/],
        [{ config: { dModel: 16, nHeads: 4 }, ids: Int32Array.of(1, 2), head: 0, tileSize: 3 }, /tile size \(3\) must be in \[1, 2\]/],
        [{ ids: Int32Array.of(1), head: 0, tileSize: 1, tiles: 2 }, /unknown tiledAttention key 'tiles'/],
      ]) {
        assert.throws(() => core.tiledAttention(input), isInput(message), String(message));
      }
    });
  });
}
