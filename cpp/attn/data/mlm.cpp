#include "attn/data/mlm.h"

#include "attn/nn/loss.h"

namespace attn {

namespace {

// Position i of a selected token x: its target is x, and its input [MASK], another id or x.
void select(int32_t* inputs, int32_t* targets, Eigen::Index i, int V, Rng& rng) {
  const int32_t x = inputs[i];
  targets[i] = x;
  const float r = rng.uniform();
  if (r < kMlmMaskShare) {
    inputs[i] = V;  // [MASK]
  } else if (r < kMlmMaskShare + kMlmRandomShare) {
    const int32_t other = static_cast<int32_t>(rng.below(uint32_t(V - 1)));  // [0, V) but x
    inputs[i] = other < x ? other : other + 1;
  }
}

}  // namespace

int mask_for_mlm(Batch& batch, int V, float rate, Rng& rng) {
  require(V >= 2, "masked language modelling needs at least 2 token ids, got ", V);
  require(rate > 0.0f && rate <= 1.0f, "the mask rate (", rate, ") must be in (0, 1]");
  const Eigen::Index n = batch.inputs.size();
  batch.targets.resize(batch.inputs.rows(), batch.inputs.cols());
  int32_t* inputs = batch.inputs.data();
  int32_t* targets = batch.targets.data();
  for (Eigen::Index i = 0; i < n; ++i)
    require(inputs[i] >= 0 && inputs[i] < V, "token id ", inputs[i], " at position ", i,
            " is outside [0, ", V, ")");
  int selected = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    targets[i] = kIgnoreIndex;
    if (rng.uniform() >= rate) continue;
    select(inputs, targets, i, V, rng);
    ++selected;
  }
  if (selected == 0 && n > 0) {
    select(inputs, targets, Eigen::Index(rng.below(uint32_t(n))), V, rng);
    selected = 1;
  }
  return selected;
}

}  // namespace attn
