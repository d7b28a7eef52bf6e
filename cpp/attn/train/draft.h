// The draft model speculative decoding suggests for a target (model/speculative.h): trained from
// the same text in seconds, small enough that its passes cost little beside the target's.
#pragma once

#include <memory>
#include <string>

#include "attn/model/speculative.h"
#include "attn/train/config.h"
#include "attn/train/trainer.h"

namespace attn {

// Training steps the suggested draft gets: a few hundred, enough for it to guess the common
// continuations the target makes.
constexpr int kDraftSteps = 300;

// The target's config with the draft's model: 1 pre-norm block (LayerNorm, a GELU FFN of width
// 2 D), d_model 32 (or the target's, if smaller), 2 heads, Adam lr 5e-3; the task, text windows
// (seq_len, max_seq_len), positions and seed stay the target's, so it reads the same text and
// has the same vocabulary. Measured on the GPT preset (300 target steps, 300 draft steps,
// temperature 1, N 4): alpha 0.70 against 0.55 for the same block without norm and FFN.
TrainerConfig draft_config(const TrainerConfig& target);

// The bigram draft of a text model (make_bigram_draft): the training split of text (UTF-8; the
// trainer's own corpus when null) in the trainer's characters. An Error of kind Input when the
// trainer was not trained on text, and for a bad text or a character the model lacks.
std::unique_ptr<BigramDraft> trainer_bigram_draft(const Trainer& trainer,
                                                  const std::string* text = nullptr);

}  // namespace attn
