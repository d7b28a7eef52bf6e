// Building a Trainer as one transaction: construct it for a config, then (each only if given) load
// weights into it, set the interventions and check that the sample fits it. All or nothing: if any
// part throws, the new Trainer is deleted and the error goes on, and the caller's run is untouched.
// configure and reset build with the interventions only; importRun with all three.
import type { AttentionCore, CorpusInput, Trainer } from '../core/attention-core';
import type { Ablation, TrainerConfigMsg } from '../model/protocol';

/** What goes into a new Trainer besides its config. */
export interface TrainerParts {
  /** Task text: the corpus (null or missing: the core's default); other tasks ignore it. */
  corpus?: CorpusInput | null;
  /** A safetensors file of this model's tensors (importWeights). */
  weights?: Uint8Array;
  ablation?: Ablation | null;
  /** Token ids the Trainer must accept (its attention is computed once to check). */
  sample?: Int32Array;
}

/** A new Trainer and its loss at init: what the first step of the fresh model sees, before the
 * weights and interventions go in (NaN when the core cannot tell). */
export interface NewTrainer {
  trainer: Trainer;
  initLoss: number;
}

/** Builds the Trainer; throws (having deleted it) if any part does not fit. */
export function newTrainer(core: AttentionCore, config: TrainerConfigMsg, parts: TrainerParts = {}): NewTrainer {
  const trainer = new core.Trainer(config, parts.corpus ?? null);
  try {
    const initLoss = lossAtInit(trainer);
    if (parts.weights) trainer.importWeights(parts.weights);
    if (parts.ablation) trainer.setAblation(parts.ablation);
    if (parts.sample) trainer.attention(parts.sample);
    return { trainer, initLoss };
  } catch (e) {
    trainer.delete();
    throw e;
  }
}

/** The loss the first step will see (peekLoss), or NaN if the core cannot tell. */
function lossAtInit(t: Trainer): number {
  try {
    return t.peekLoss();
  } catch {
    return NaN;
  }
}
