// Cross-entropy over logits, as torch.nn.functional.cross_entropy (mean reduction).
#pragma once

#include "attn/base/tensor.h"

namespace attn {

// Targets equal to this are skipped, as PyTorch's default ignore_index.
constexpr int32_t kIgnoreIndex = -100;

// logits (N,V), targets (N) -> mean over non-ignored rows of -log softmax(logits)[target].
// Writes dlogits (N,V) = (softmax - onehot) / count, 0 on ignored rows. Stable for any finite
// logits. Throws on a target outside [0, V) that is not kIgnoreIndex. Returns 0 if all ignored.
float cross_entropy(ConstMatRef logits, const int32_t* targets, MatRef dlogits);

// The same loss without the gradient.
float cross_entropy_loss(ConstMatRef logits, const int32_t* targets);

// Fraction of non-ignored rows whose largest logit is at the target (ties: the first index);
// NaN when every row is ignored.
float token_accuracy(ConstMatRef logits, const int32_t* targets);

}  // namespace attn
