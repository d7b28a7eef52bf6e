// Real usage of the core's API, type-checked against web/src/core/*.d.ts by `tsc --noEmit -p
// tests/js-api` (dts.test.mjs). The @ts-expect-error lines prove the declarations are not too loose:
// tsc fails if any of them stops being an error.
import createAttentionCore, {
  type Ablation,
  type AttentionStats,
  type Evaluation,
  type FillGuess,
  type FillResult,
  type HeadScores,
  type LengthEvaluation,
  type LessonInputs,
  type Predictions,
  type ReferenceCase,
  type RowBackward,
  type SelfTestResult,
  type AttentionCore,
  type Draft,
  type Exactness,
  type SpeculativeChunk,
  type SpeculativeResult,
  type SpeculativeStats,
  type TiledAttentionTrace,
  type AttentionResult,
  type CoreError,
  type CoreErrorKind,
  type Matrix,
  type ResolvedTrainerConfig,
  type SelfAttentionStages,
  type TransformerBlockStages,
  type Trainer,
  type TrainerConfig,
} from '../../web/src/core/attention-core';
import { detectRelaxedSimd, detectSimd, loadAttentionCore, pickBuild, type CoreBuild } from '../../web/src/core/load-core.js';

export async function train(): Promise<number[]> {
  const core: AttentionCore = await createAttentionCore({ locateFile: (path) => `/wasm/${path}` });
  const config: TrainerConfig = { vocabSize: 32, nHeads: 2, task: 'repeat' };
  const trainer: Trainer = new core.Trainer(config);
  try {
    const loss: number = trainer.step(10);
    const history: Float32Array = trainer.lossHistory();
    const ids = Int32Array.from([1, 2, 3]);
    const result: AttentionResult = trainer.attention(ids);
    const head0: Float32Array = result.weights.subarray(0, result.seqLen * result.seqLen);
    const logits: Float32Array = result.logits;
    const bytes: Uint8Array = trainer.exportWeights();
    trainer.importWeights(bytes);
    const resolved: ResolvedTrainerConfig = trainer.config();
    const vocab: number = resolved.vocabSize;
    const depth: number = resolved.nLayers + result.nLayers + Number(resolved.residual);
    new core.Trainer({ nLayers: 2, residual: true });
    // @ts-expect-error residual is a boolean
    new core.Trainer({ residual: 'yes' });
    const strided: number = trainer.stepsDone() / trainer.historyStride();
    const atInit: number = trainer.peekLoss();
    // @ts-expect-error vocabSize is a number
    new core.Trainer({ vocabSize: '64' });
    // @ts-expect-error unknown key
    new core.Trainer({ vocab_size: 64 });
    const tasks: TrainerConfig[] = ['repeat', 'shift', 'copy', 'reverse', 'sort', 'future'].map((task) => ({ task } as TrainerConfig));
    const accuracy: number = trainer.lastAccuracy() + trainer.evalAccuracy(4) + tasks.length;
    // @ts-expect-error no such task
    new core.Trainer({ task: 'bogus' });
    // @ts-expect-error ids are an Int32Array
    trainer.attention([1, 2, 3]);
    // @ts-expect-error step takes a count
    trainer.step();
    trainer.setAblation({ headsOff: [true, false], headsFrozen: [false, true], scaleScores: false, mask: 'inverted' });
    const ablation: Required<Ablation> = trainer.ablation();
    // @ts-expect-error no such mask mode
    trainer.setAblation({ mask: 'triu' });
    const ev: Evaluation = trainer.evaluate(2);
    const longer: LengthEvaluation = trainer.evaluateAt(48, 2);
    const perPosition: Float32Array = longer.accuracyPerPosition;
    const stats: AttentionStats = trainer.attentionStats();
    const scores: HeadScores = trainer.headScores();
    const composition: Float32Array = scores.composition;
    const phase: number = trainer.phaseChange();
    // @ts-expect-error the baseline is one number, not an array
    const baseline: Float32Array = scores.compositionBaseline;
    const row: RowBackward = trainer.rowBackward(ids, 0, 2, 1);
    const dK: Matrix = row.dK;
    const checks: SelfTestResult[] = trainer.selfTest(null);
    const variants: TrainerConfig = { objective: 'mlm', maskRate: 0.2, attention: 'strided', window: 2, stride: 3, differential: true };
    // @ts-expect-error no such objective
    new core.Trainer({ objective: 'bert' });
    // @ts-expect-error no such attention pattern
    new core.Trainer({ ...variants, attention: 'sparse' });
    const filled: FillResult = trainer.fill('ab_d', { blank: '_', top: 3 });
    const guess: FillGuess | undefined = filled.blanks[0]?.top[0];
    trainer.fill('ab_d');
    // @ts-expect-error top is a number
    trainer.fill('ab_d', { top: '3' });
    const field: Matrix = trainer.receptiveField(ids);
    const ref: ReferenceCase = { weights: bytes, input: bytes, expected: bytes };
    trainer.selfTest(ref);
    const targets: Int32Array = core.taskTargets('future', ids);
    const drawn: Int32Array = core.taskSample('copy', 16, 9, 1);
    const predicted: Predictions = trainer.predictions(ids, 3);
    const topProb: Float32Array = predicted.probs;
    // @ts-expect-error k is a number
    trainer.predictions(ids, '3');
    const lesson: LessonInputs = core.lessonInputs({ tokens: ['the', 'cat'], dModel: 8, dk: 4, dv: 4, heads: 2, seed: 42 });
    const firstWq: Matrix | undefined = lesson.Wq[0];
    // @ts-expect-error tokens are strings
    core.lessonInputs({ tokens: [1, 2], dModel: 8, dk: 4, dv: 4, seed: 42 });
    const extra = [filled.text.length, guess?.prob ?? NaN, field.rows, ev.loss, longer.loss, perPosition[0] ?? NaN, stats.entropy[0] ?? NaN, row.dScores[0] ?? NaN, dK.rows, checks.length, targets[0] ?? NaN, drawn[0] ?? NaN, Number(ablation.scaleScores), composition[0] ?? NaN, phase, baseline.length, topProb[0] ?? NaN, predicted.answerProbs[0] ?? NaN, lesson.E.rows, firstWq?.cols ?? NaN];
    return [loss, history[0] ?? NaN, head0[0] ?? NaN, logits[0] ?? NaN, vocab + depth, strided, atInit, accuracy, ...extra];
  } finally {
    trainer.delete();
  }
}

export function stages(core: AttentionCore): Matrix {
  const m = (rows: number, cols: number): Matrix => ({ data: new Float32Array(rows * cols), rows, cols });
  const s: SelfAttentionStages = core.selfAttention({ X: m(3, 4), Wq: m(4, 2), Wk: m(4, 2), Wv: m(4, 2), causal: true });
  core.selfAttention({ X: m(3, 4), Wq: m(4, 2), Wk: m(4, 2), Wv: m(4, 2) });
  // @ts-expect-error Wv is required
  core.selfAttention({ X: m(3, 4), Wq: m(4, 2), Wk: m(4, 2) });
  // @ts-expect-error data is a Float32Array
  core.selfAttention({ X: { data: [0], rows: 1, cols: 1 }, Wq: m(1, 1), Wk: m(1, 1), Wv: m(1, 1) });
  const block: TransformerBlockStages = core.transformerBlock({ config: { dModel: 8, nHeads: 2, norm: 'rmsnorm' }, ids: Int32Array.from([1, 2]) });
  const hidden: Matrix | null = block.ffnHidden;
  // @ts-expect-error ids is an Int32Array
  core.transformerBlock({ ids: [1, 2] });
  if (hidden) return block.out;
  const bytes: number = core.heapBytesInUse();
  const simd: boolean = core.simd;
  const defaults: ResolvedTrainerConfig = core.defaultConfig();
  return bytes > 0 && simd && defaults.seqLen > 0 ? s.maskedScores : s.output;
}

/** The kind and key of a failed config, as the worker reads them (never the message text). */
export function configProblem(core: AttentionCore, config: TrainerConfig): { kind: CoreErrorKind; key?: keyof TrainerConfig } | null {
  try {
    new core.Trainer(config).delete();
    return null;
  } catch (e) {
    const err = e as CoreError;
    // @ts-expect-error no such kind
    if (err.kind === 'parse') return null;
    return { kind: err.kind, key: err.key };
  }
}

export async function load(): Promise<AttentionCore> {
  const simd: boolean = detectSimd();
  const relaxed: boolean = detectRelaxedSimd();
  const build: CoreBuild = pickBuild('simd');
  // @ts-expect-error no such build to force
  pickBuild('relaxed');
  const core = await loadAttentionCore(new URL('./wasm/', 'https://example.org/course/'), { simd, relaxed: relaxed && build !== 'scalar' });
  const fused: boolean = core.relaxedSimd;
  return fused ? core : loadAttentionCore(new URL('./wasm/', 'https://example.org/course/'), { simd });
}

/** The lesson's panels: the sqrt(dk) demo and the softmax steps. */
export function lessonPanels(core: AttentionCore): number {
  const d = core.scalingDemo(16, 8, 42);
  const naive = core.softmaxSteps(Float32Array.of(100, 200, 300), false);
  return d.keys.rows * d.maxScaled + d.entropyUnscaled + naive.sum + naive.exps[0] + d.weightsScaled[0];
}

/** Decoding: the next token's distribution under every strategy. */
export function decoding(core: AttentionCore): number {
  const p = core.nextTokenDistribution(Float32Array.of(1, 2, 3), { temperature: 0.8, topK: 2, topP: 0.9, minP: 0.1 });
  const sampler = new core.Sampler(3);
  const token: number = sampler.draw(p);
  sampler.delete();
  return p[0] + core.nextTokenDistribution(Float32Array.of(0, 1), {})[1] + token;
}

/** Speculative decoding with a draft trained from the same text, the bigram, the exactness check
 * and the tiled trace of one head. */
export function speculative(core: AttentionCore, target: Trainer): number {
  const draftTrainer = new core.Trainer(core.draftConfig(target.config()), core.defaultCorpus());
  draftTrainer.step(core.draftSteps);
  const drafts: Draft[] = [core.modelDraft(draftTrainer), core.bigramDraft(target), core.bigramDraft(target, 'some text')];
  const prompt = Int32Array.of(1, 2, 3);
  const r: SpeculativeResult = core.speculativeGenerate(target, drafts[0], { prompt, tokens: 20, draftTokens: 4, options: { temperature: 0 }, comparePlain: true });
  const g = new core.SpeculativeDecoder(target, drafts[1], { prompt, tokens: 20, seed: 1 });
  const chunk: SpeculativeChunk = g.next(2);
  const stats: SpeculativeStats = g.stats();
  g.delete();
  const e: Exactness = core.speculativeExactness(target, drafts[2], { prompt, samples: 1000, draftTokens: 2 });
  // @ts-expect-error the exactness check generates two tokens itself
  core.speculativeExactness(target, drafts[2], { prompt, samples: 10, tokens: 2 });
  const t: TiledAttentionTrace = core.tiledAttention({ config: { dModel: 16, nHeads: 2 }, ids: prompt, head: 1, tileSize: 2 });
  const alpha: number = core.expectedAcceptance(target, drafts[1], { ids: prompt, options: { temperature: 0.7 } });
  const vocab: number = drafts[0].vocabSize();
  for (const d of drafts) d.delete();
  draftTrainer.delete();
  const fate: number = chunk.fates[0];
  return r.stats.alpha + r.wallMs / r.plainMs + stats.expectedTokensPerRound + e.first.pValue + e.second.counts[0] +
    t.rowMax.data[0] + t.plainBytes / t.tiledBytes + fate + core.expectedTokensPerRound(0.5, 4) + vocab + alpha;
}
