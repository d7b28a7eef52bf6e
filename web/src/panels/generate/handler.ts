// The Generate panel's work (task text): a Decoder with the KV cache on the live model
// and the core's Sampler (attn::Rng + the inverse CDF, as attn sample draws), a few characters per
// request so the page shows them as they come; one short sample for the strip of samples over
// training; and the KV cache's speed-up (the same greedy characters with and without it). Every
// distribution is the core's nextTokenDistribution, every token the core's draw.
// The generation lives in the worker between its requests, until the run or the interventions
// change (its cache was made by the old model).
import type { AttentionCore, Decoder, Sampler, Trainer } from '../../core/attention-core';
import { handle, type Held, type WorkerContext } from '../../worker/context';
import { RequestFailure } from '../../worker/post';
import { promptIds, vocabOf } from '../../worker/text-input';
import {
  cacheSpeedRequest,
  generateEndRequest,
  generateNextRequest,
  generateStartRequest,
  textSampleRequest,
  type CacheSpeed,
  type GenerateChunk,
  type GenerateSpec,
  type GenerateStarted,
  type GeneratedStep,
} from './request';

/** The most characters one generation makes. */
export const MAX_GENERATE_CHARS = 2000;
/** The most characters one generateNext request makes. */
export const MAX_CHUNK = 64;
/** The most characters the cache's speed-up is measured on. */
export const MAX_SPEED_CHARS = 500;

function checkCount(tokens: number, max: number, what: string): number {
  if (!Number.isInteger(tokens) || tokens < 1 || tokens > max) throw new RequestFailure('input', `The ${what} (${tokens}) must be a whole number from 1 to ${max}.`);
  return tokens;
}

/** One generation: the prompt pushed at construction, then next(n) characters at a time. It reads
 * the live model: a training step in between makes next() fail (the cache would be stale). */
export class Generation implements Held {
  readonly started: GenerateStarted;
  #decoder: Decoder | null = null;
  #sampler: Sampler | null = null;
  #logits: Float32Array;
  #remaining: number;

  constructor(
    private readonly core: AttentionCore,
    private readonly trainer: Trainer,
    private readonly spec: GenerateSpec,
  ) {
    const vocab = vocabOf(trainer);
    const ids = promptIds(core, vocab, spec.prompt);
    this.#remaining = checkCount(spec.tokens, MAX_GENERATE_CHARS, 'number of characters');
    try {
      this.#sampler = new core.Sampler(spec.seed);
      this.#decoder = new core.Decoder(trainer, { useCache: true });
      let logits: Float32Array = new Float32Array(0);
      for (const id of ids) logits = this.#decoder.push(id);
      this.#logits = logits;
      core.nextTokenDistribution(logits, spec.options); // a bad option fails here, before any character
    } catch (e) {
      this.free();
      throw e;
    }
    const c = trainer.config();
    this.started = {
      vocab,
      step: trainer.stepsDone(),
      promptTokens: ids.length,
      window: this.#decoder.window(),
      cached: this.#decoder.cached(),
      nLayers: c.nLayers,
      nHeads: c.nHeads,
    };
  }

  /** The next min(n, what is left) characters. */
  next(n: number): GenerateChunk {
    const decoder = this.#decoder;
    const sampler = this.#sampler;
    if (!decoder || !sampler) throw new RequestFailure('state', 'This generation has ended; start another.');
    const k = checkCount(n, MAX_CHUNK, 'chunk size');
    if (this.trainer.stepsDone() !== this.started.step) {
      throw new RequestFailure('state', `The model trained on (step ${this.started.step} to ${this.trainer.stepsDone()}) while generating, so generation stopped; generate again to use the new model.`);
    }
    const steps: GeneratedStep[] = [];
    for (let i = 0; i < k && this.#remaining > 0; ++i) {
      const before = this.core.nextTokenDistribution(this.#logits, {});
      const after = this.core.nextTokenDistribution(this.#logits, this.spec.options);
      const token = sampler.draw(after);
      steps.push({ token, before, after, attention: decoder.attention(), context: decoder.context() });
      if (--this.#remaining > 0) this.#logits = decoder.push(token);
    }
    const text = this.core.decodeText(this.started.vocab, Int32Array.from(steps, (s) => s.token));
    return { steps, text, done: this.#remaining === 0 };
  }

  /** Frees the decoder and the sampler (before the Trainer). */
  free(): void {
    this.#decoder?.delete();
    this.#sampler?.delete();
    this.#decoder = null;
    this.#sampler = null;
  }
}

/** spec.tokens characters of the live model in one go (the strip of samples over training). */
export function textSample(core: AttentionCore, trainer: Trainer, spec: GenerateSpec): string {
  const g = new Generation(core, trainer, { ...spec, tokens: checkCount(spec.tokens, MAX_CHUNK, 'number of characters') });
  try {
    return g.next(spec.tokens).text;
  } finally {
    g.free();
  }
}

/** Greedy decoding of `tokens` characters after prompt with one decoder: the tokens and the time
 * the loop took (the prompt's pushes not counted). */
function timedGreedy(core: AttentionCore, trainer: Trainer, ids: Int32Array, tokens: number, useCache: boolean, now: () => number): { out: Int32Array; ms: number; window: number } {
  const decoder = new core.Decoder(trainer, { useCache });
  const sampler = new core.Sampler(0);
  try {
    let logits: Float32Array = new Float32Array(0);
    for (const id of ids) logits = decoder.push(id);
    const out = new Int32Array(tokens);
    const t0 = now();
    for (let i = 0; i < tokens; ++i) {
      out[i] = sampler.draw(core.nextTokenDistribution(logits, { temperature: 0 }));
      if (i + 1 < tokens) logits = decoder.push(out[i]);
    }
    return { out, ms: now() - t0, window: decoder.window() };
  } finally {
    decoder.delete();
    sampler.delete();
  }
}

/** The same greedy characters from prompt with the KV cache and without it (every push a full
 * forward over the context): tokens/s of each and their ratio. */
export function cacheSpeed(core: AttentionCore, trainer: Trainer, prompt: string, tokens: number, now: () => number): CacheSpeed {
  const ids = promptIds(core, vocabOf(trainer), prompt);
  const n = checkCount(tokens, MAX_SPEED_CHARS, 'number of characters measured');
  const rate = (ms: number) => ({ ms, tokensPerSec: n / (Math.max(ms, 1e-3) / 1000) });
  const withCache = timedGreedy(core, trainer, ids, n, true, now);
  const without = timedGreedy(core, trainer, ids, n, false, now);
  const cached = rate(withCache.ms);
  const uncached = rate(without.ms);
  return {
    step: trainer.stepsDone(),
    tokens: n,
    cached,
    uncached,
    ratio: cached.tokensPerSec / uncached.tokensPerSec,
    same: withCache.out.every((t, i) => t === without.out[i]),
    window: withCache.window,
    promptTokens: ids.length,
  };
}

/** The generation of the Generate panel, or the sentence that there is none. */
function generation(ctx: WorkerContext): Generation {
  const g = ctx.held<Generation>('generation');
  if (!g) throw new RequestFailure('state', 'No generation is running: press Generate.');
  return g;
}

/** A generation on the live model (held until the run or the interventions change), its next
 * characters (it is freed once done or failed), its end; a sample for the strip; the speed-up. */
export const handlers = [
  handle(generateStartRequest, (ctx, spec) => {
    const g = new Generation(ctx.core, ctx.run().trainer, spec);
    ctx.hold('generation', g, 'ablation');
    return g.started;
  }),
  handle(generateNextRequest, (ctx, { n }) => {
    const g = generation(ctx);
    try {
      const chunk = g.next(n);
      if (chunk.done) ctx.hold('generation', null);
      return chunk;
    } catch (e) {
      ctx.hold('generation', null);
      throw e;
    }
  }),
  handle(generateEndRequest, (ctx) => ctx.hold('generation', null)),
  handle(textSampleRequest, (ctx, spec) => {
    const run = ctx.run();
    return { step: run.step, text: textSample(ctx.core, run.trainer, spec) };
  }),
  handle(cacheSpeedRequest, (ctx, { prompt, tokens }) => {
    const run = ctx.run();
    return { ...cacheSpeed(ctx.core, run.trainer, prompt, tokens, ctx.now), step: run.step };
  }),
];
