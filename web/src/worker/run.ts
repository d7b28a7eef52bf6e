// One training run: a Trainer and what belongs to it alone (its config, the loss at init, the last
// loss, an imported run's past, its timeline). The Session holds one Run at a time, and what
// outlives runs (the sample, the interventions, the play loop).
import type { TextCorpusInfo, Trainer } from '../core/attention-core';
import type { ImportRun, MaskMode, Snapshot, TextReadout, TrainerConfigMsg } from '../model/protocol';
import { addSnapshot, emptyTimeline, isSnapshotStep, measuresHeads, stepsToNextSnapshot, type TimelineEntry, type TimelineState } from '../model/timeline';
import { headScoresOf } from './scores';

/** An imported run's steps and losses before its Trainer (importRun's `past`). */
export type Past = NonNullable<ImportRun['past']>;

/** What the Session shows a run on: the sequence and the mask in force. */
export interface View {
  sample: Int32Array;
  mask: MaskMode;
}

/** The head statistics of a snapshot that does not measure them (model/timeline.ts, HEADS_EVERY). */
const NONE = new Float32Array(0);

/** Validation batches of each text measurement (evaluateText). */
export const TEXT_EVAL_BATCHES = 4;

/** See the file comment. */
export class Run {
  /** The loss of the last step (NaN before any). */
  lastLoss = NaN;
  timeline: TimelineState<TimelineEntry>;
  /** Task text: the corpus (null for the other tasks). */
  readonly corpus: TextCorpusInfo | null;
  /** Task text: the validation curve so far. */
  readonly #text: Omit<TextReadout, 'corpus' | 'defaultCorpus'> = { valSteps: [], valLoss: [], last: null };
  /** The core's attention pattern at the last length asked (visible()). */
  #visible: Uint8Array | null = null;

  constructor(
    readonly trainer: Trainer,
    readonly config: TrainerConfigMsg,
    /** The loss the fresh model's first step sees (the chart's step 0). */
    readonly initLoss: number,
    readonly past: Past | null,
    /** The timeline's byte budget. */
    timelineBytes: number,
  ) {
    this.timeline = emptyTimeline(config.nLayers * config.nHeads, config.seqLen, timelineBytes);
    this.corpus = trainer.corpus();
  }

  /** The step of the latest validation measurement (-1: none). */
  get textStep(): number {
    return this.#text.last?.step ?? -1;
  }

  /** Task text: measures the model on the validation split (evaluateText) at this step, once per
   * step. */
  measureText(): void {
    if (!this.corpus || this.textStep === this.step) return;
    const e = this.trainer.evaluateText(TEXT_EVAL_BATCHES);
    this.#text.valSteps.push(this.step);
    this.#text.valLoss.push(e.valLoss);
    this.#text.last = { ...e, step: this.step };
  }

  /** The text readout (copies), or null for the other tasks. */
  textReadout(defaultCorpus: boolean): TextReadout | null {
    if (!this.corpus) return null;
    const t = this.#text;
    return { corpus: this.corpus, defaultCorpus, valSteps: t.valSteps.slice(), valLoss: t.valLoss.slice(), last: t.last && { ...t.last } };
  }

  /** The step count the learner sees (an imported run's steps included). */
  get step(): number {
    return this.trainer.stepsDone() + (this.past?.step ?? 0);
  }

  /** Trains n steps, stopping at each step the timeline policy snapshots to take it. */
  train(n: number, view: View): void {
    for (let left = n; left > 0; ) {
      const k = Math.min(left, stepsToNextSnapshot(this.step, this.timeline.every));
      this.#runSteps(k);
      left -= k;
      if (isSnapshotStep(this.step, this.timeline.every)) this.capture(view);
    }
  }

  /** Adds the sample's attention at this step to the timeline, with the head statistics and the
   * head scores when the policy measures them here (measuresHeads; else empty arrays). */
  capture(view: View): void {
    const t = this.trainer;
    const att = t.attention(view.sample);
    const heads = measuresHeads(this.step, this.timeline.every, this.timeline.entries.length === 0);
    const st = heads ? t.attentionStats() : { entropy: NONE, answerMass: NONE };
    const sc = heads ? headScoresOf(t, att.nLayers, att.nHeads) : { previousToken: NONE, prefixMatching: NONE };
    this.timeline = addSnapshot(this.timeline, {
      step: this.step,
      loss: t.stepsDone() > 0 ? this.lastLoss : this.initLoss,
      ids: view.sample.slice(),
      weights: att.weights,
      H: att.nHeads,
      L: att.nLayers,
      T: att.seqLen,
      mask: view.mask,
      entropy: st.entropy,
      answerMass: st.answerMass,
      previousToken: sc.previousToken,
      prefixMatching: sc.prefixMatching,
    });
  }

  /** Everything the page draws for the current moment. */
  snapshot(view: View, stepsPerSec: number, text: TextReadout | null): Snapshot {
    const t = this.trainer;
    const att = t.attention(view.sample);
    const own = t.lossHistory();
    const step = this.step;
    const past = this.past;
    let history = own;
    if (past && past.history.length > 0) {
      history = new Float32Array(past.history.length + own.length);
      history.set(past.history);
      history.set(own, past.history.length);
    }
    // Before a step of its own: the imported run's last loss, else the loss at init.
    const loss = t.stepsDone() > 0 ? this.lastLoss : step > 0 && history.length > 0 ? history[history.length - 1] : this.initLoss;
    return {
      step,
      loss,
      lossAtInit: step === 0,
      initLoss: this.initLoss,
      stepsPerSec,
      history,
      historyStride: past ? past.historyStride : t.historyStride(),
      ids: view.sample.slice(),
      weights: att.weights,
      H: att.nHeads,
      L: att.nLayers,
      T: view.sample.length,
      kvHeads: this.config.kvHeads || att.nHeads,
      mask: view.mask,
      visible: this.visible(view.sample.length),
      phaseChange: this.phaseChange,
      text,
    };
  }

  /** The core's attention pattern for T positions (its attentionMask), computed once per T. */
  visible(T: number): Uint8Array {
    if (this.#visible?.length !== T * T) this.#visible = this.trainer.attentionMask(T);
    return this.#visible.slice();
  }

  /** The core's phase-change step in the learner's step count (an imported run's steps added);
   * -1 until the core detects one. */
  get phaseChange(): number {
    const p = this.trainer.phaseChange();
    return p >= 0 ? p + (this.past?.step ?? 0) : -1;
  }

  /** Frees the Trainer. */
  delete(): void {
    this.trainer.delete();
  }

  /** Runs n steps; on a non-finite loss the core keeps the last good weights and throws. */
  #runSteps(n: number): void {
    try {
      this.lastLoss = this.trainer.step(n);
    } catch (e) {
      const h = this.trainer.lossHistory();
      if (h.length > 0) this.lastLoss = h[h.length - 1];
      throw e;
    }
  }
}
