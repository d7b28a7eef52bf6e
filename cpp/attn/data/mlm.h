// Masked language modelling's training signal (BERT; the course's create_mlm_batch): a batch of
// sequences becomes a masked input, and the loss is taken only at the selected positions.
#pragma once

#include <cstdint>

#include "attn/base/rng.h"
#include "attn/data/tasks.h"

namespace attn {

// The chance that a token is selected, unless the config says otherwise.
constexpr float kDefaultMaskRate = 0.15f;
// Of the selected tokens, these shares become [MASK] and another random token; the rest stay.
constexpr float kMlmMaskShare = 0.8f, kMlmRandomShare = 0.1f;

// Turns batch (inputs (B,T): the sequences; the task's targets are not read) into a masked
// language modelling batch over vocab_size real ids, [MASK] being the id vocab_size. As the
// course's code does, each position is selected on its own: u = rng.uniform() < rate; a selected
// token's target is its id and, with r = rng.uniform(), it becomes [MASK] (r < 0.8), a uniform
// id other than itself (r < 0.9: never the original; one rng.below draw), or stays. Every other
// target is kIgnoreIndex. The draws run over the positions in row-major order. If no position of
// the whole batch is selected, one drawn uniformly (rng.below(B*T)) is, with the same 80/10/10
// draw, so every batch has a loss. Returns the number of selected positions. vocab_size >= 2 and
// rate in (0, 1], else an Error of kind Input; so are ids outside [0, vocab_size).
int mask_for_mlm(Batch& batch, int vocab_size, float rate, Rng& rng);

}  // namespace attn
