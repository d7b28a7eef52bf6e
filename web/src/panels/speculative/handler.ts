// The "Speculative decoding" panel's work (task text). The draft lives in the worker between
// requests, until the run changes (it was made from the run's text): a model draft is a second
// Trainer of the core's draftConfig, trained on the same text; the bigram is counted from it. Each
// generation is one call of the core's speculativeGenerate (timed against plain decoding of as
// many tokens); every figure is the core's.
import type { AttentionCore, Draft, Trainer } from '../../core/attention-core';
import { handle, stepCount, type Held, type WorkerContext } from '../../worker/context';
import { RequestFailure } from '../../worker/post';
import { promptIds, vocabOf as textVocab } from '../../worker/text-input';
import { acceptanceRequest, draftMakeRequest, exactnessRequest, speculativeGenerateRequest, type AcceptanceTable, type DraftReport, type DraftSpec, type SpeculativeReport, type SpeculativeSpec } from './request';

/** The most characters of one generation (the prompt's limit is the Generate panel's); the most
 * samples of the exactness check. */
export const MAX_SPECULATIVE_CHARS = 1000;
export const MAX_SAMPLES = 20000;
/** The draft tokens per target pass the panel offers (the core takes up to 16). */
export const MAX_DRAFT_TOKENS = 8;
/** The most temperatures of one acceptance table. */
export const MAX_TEMPERATURES = 8;

/** The run's vocabulary, or the sentence that speculative decoding needs a text model. */
const vocabOf = (trainer: Trainer): string => textVocab(trainer, 'Speculative decoding');

function checkWhole(v: number, lo: number, hi: number, what: string): number {
  if (!Number.isInteger(v) || v < lo || v > hi) throw new RequestFailure('input', `The ${what} (${v}) must be a whole number from ${lo} to ${hi}.`);
  return v;
}

/** The held draft: the core's Draft, and for a model draft its Trainer (freed after the Draft). */
export class HeldDraft implements Held {
  constructor(
    readonly draft: Draft,
    readonly trainer: Trainer | null,
    readonly report: DraftReport,
  ) {}

  free(): void {
    this.draft.delete();
    this.trainer?.delete();
  }
}

/** A model draft (draftConfig of the run's config, trained `steps` steps on the run's text) or the
 * bigram of the run's text. */
export function makeDraft(core: AttentionCore, target: Trainer, corpus: WorkerContext['corpus'], spec: DraftSpec): HeldDraft {
  vocabOf(target);
  const base = { nLayers: 0, dModel: 0, nHeads: 0, steps: 0, loss: NaN, targetStep: target.stepsDone() };
  if (spec.kind === 'bigram') return new HeldDraft(core.bigramDraft(target), null, { kind: 'bigram', ...base });
  if (spec.kind !== 'model') throw new RequestFailure('input', `The draft must be "model" or "bigram" (got "${String(spec.kind)}").`);
  const steps = stepCount(spec.steps ?? core.draftSteps);
  const trainer = new core.Trainer(core.draftConfig(target.config()), corpus);
  try {
    const loss = trainer.step(steps);
    const c = trainer.config();
    return new HeldDraft(core.modelDraft(trainer), trainer, { ...base, kind: 'model', nLayers: c.nLayers, dModel: c.dModel, nHeads: c.nHeads, steps: trainer.stepsDone(), loss });
  } catch (e) {
    trainer.delete();
    throw e;
  }
}

/** The held draft, or the sentence that there is none. */
function heldDraft(ctx: WorkerContext): HeldDraft {
  const d = ctx.held<HeldDraft>('draft');
  if (!d) throw new RequestFailure('state', 'No draft yet: train a draft model or take the bigram first.');
  return d;
}

/** The acceptance to expect for the bigram, the held model draft (if any) and the target itself,
 * at each temperature, on the first characters of the validation split. */
export function acceptanceTable(core: AttentionCore, target: Trainer, held: HeldDraft | null, temperatures: number[]): AcceptanceTable {
  const vocab = vocabOf(target);
  if (!Array.isArray(temperatures) || temperatures.length < 1 || temperatures.length > MAX_TEMPERATURES) throw new RequestFailure('input', `Give 1 to ${MAX_TEMPERATURES} temperatures.`);
  const ids = target.sampleSequence(0);
  const c = target.config();
  const bigram = core.bigramDraft(target);
  const itself = core.modelDraft(target);
  try {
    const row = (draft: Draft, name: string, kind: AcceptanceTable['rows'][number]['kind'], dModel: number, nLayers: number) => ({
      draft: name,
      kind,
      dModel,
      nLayers,
      alpha: temperatures.map((temperature) => core.expectedAcceptance(target, draft, { ids, options: { temperature } })),
    });
    const rows = [row(bigram, 'the bigram', 'bigram', 0, 0)];
    if (held?.report.kind === 'model') rows.push(row(held.draft, 'the draft model', 'model', held.report.dModel, held.report.nLayers));
    rows.push(row(itself, 'the target itself', 'target', c.dModel, c.nLayers));
    return { step: target.stepsDone(), temperatures: [...temperatures], text: core.decodeText(vocab, ids), rows };
  } finally {
    itself.delete();
    bigram.delete();
  }
}

/** The checked options of a generation or of the exactness check. */
function speculativeOptions(core: AttentionCore, target: Trainer, spec: Omit<SpeculativeSpec, 'tokens'>) {
  const prompt = promptIds(core, vocabOf(target), spec.prompt);
  return { prompt, draftTokens: checkWhole(spec.draftTokens, 1, MAX_DRAFT_TOKENS, 'number of draft tokens N'), options: spec.options, seed: spec.seed };
}

/** Makes, uses and measures the draft. */
export const handlers = [
  handle(draftMakeRequest, (ctx, spec) => {
    const d = makeDraft(ctx.core, ctx.run().trainer, ctx.corpus, spec);
    ctx.hold('draft', d, 'run');
    return d.report;
  }),
  handle(speculativeGenerateRequest, (ctx, spec) => {
    const target = ctx.run().trainer;
    const d = heldDraft(ctx);
    const opts = speculativeOptions(ctx.core, target, spec);
    const tokens = checkWhole(spec.tokens, 1, MAX_SPECULATIVE_CHARS, 'number of characters');
    const r = ctx.core.speculativeGenerate(target, d.draft, { ...opts, tokens, comparePlain: true });
    const vocab = vocabOf(target);
    return {
      step: target.stepsDone(),
      draft: d.report,
      chars: Array.from(r.tokens, (t) => vocab[t] ?? '?'),
      fates: Array.from(r.fates) as SpeculativeReport['fates'],
      plainText: ctx.core.decodeText(vocab, r.plainTokens),
      stats: r.stats,
      wallMs: r.wallMs,
      plainMs: r.plainMs,
      expectedFromOverlap: Number.isFinite(r.stats.meanOverlap) ? ctx.core.expectedTokensPerRound(r.stats.meanOverlap, opts.draftTokens) : NaN,
    };
  }),
  handle(acceptanceRequest, (ctx, { temperatures }) => acceptanceTable(ctx.core, ctx.run().trainer, ctx.held<HeldDraft>('draft'), temperatures)),
  handle(exactnessRequest, (ctx, spec) => {
    const target = ctx.run().trainer;
    const d = heldDraft(ctx);
    const opts = speculativeOptions(ctx.core, target, spec);
    const e = ctx.core.speculativeExactness(target, d.draft, { ...opts, samples: checkWhole(spec.samples, 100, MAX_SAMPLES, 'number of samples') });
    return { ...e, step: target.stepsDone(), vocab: vocabOf(target), prompt: spec.prompt };
  }),
];
