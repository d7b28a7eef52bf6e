// Adam with torch.optim.Adam's semantics (no amsgrad), AdamW's decoupled weight decay
// (torch.optim.AdamW), and torch.nn.utils.clip_grad_norm_.
// https://pytorch.org/docs/stable/generated/torch.optim.Adam.html
// https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html
#pragma once

#include <vector>

#include "attn/base/tensor.h"

namespace attn {

struct AdamConfig {
  float lr = 1e-3f;
  // Doubles, as PyTorch's Python floats: 1 - beta2 is then 0.001, not 1 - 0.999f.
  double beta1 = 0.9;
  double beta2 = 0.999;
  float eps = 1e-8f;
  // AdamW's decoupled weight decay (0: Adam), on every parameter.
  double weight_decay = 0.0;
  // Throws std::invalid_argument naming the first bad value.
  void validate() const;
};

// One Adam update of n parameters at step t (1-based), in PyTorch's order of operations:
//   p *= 1 - lr wd   (AdamW, with weight_decay wd > 0; the factor rounded to float once)
//   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
//   p -= (lr / (1-b1^t)) * m / (sqrt(v) / sqrt(1-b2^t) + eps)
void adam_update(float* p, const float* g, float* m, float* v, Eigen::Index n, float lr,
                 double beta1, double beta2, float eps, int64_t t, double weight_decay = 0.0);

// torch.nn.utils.clip_grad_norm_(params, max_norm): the total L2 norm of every gradient (the
// norm of the per-parameter norms, each rounded to float as PyTorch's are), then every gradient
// scaled by min(1, max_norm / (norm + 1e-6)) in float. Returns the total norm before scaling. A
// parameter listed once counts once (a tied matrix is one ParamRef).
float clip_grad_norm(const std::vector<ParamRef>& params, double max_norm);

class Adam {
 public:
  // Keeps the parameter list and one zeroed (m, v) pair per parameter.
  Adam(std::vector<ParamRef> params, const AdamConfig& config);

  // Applies one update from the current gradients.
  void step();

  AdamConfig config;
  int64_t t = 0;  // number of steps taken
  std::vector<ParamRef> params;
  std::vector<std::vector<float>> m, v;  // first and second moments, same shapes as params
};

}  // namespace attn
