#include "attn/train/adam.h"

#include <algorithm>
#include <cmath>

#include "attn/kernels/kernels.h"

namespace attn {

void AdamConfig::validate() const {
  require_config(std::isfinite(lr) && lr > 0.0f, "lr", "lr (", lr, ") must be a positive number");
  require_config(beta1 >= 0.0 && beta1 < 1.0, "", "beta1 (", beta1, ") must be in [0, 1)");
  require_config(beta2 >= 0.0 && beta2 < 1.0, "", "beta2 (", beta2, ") must be in [0, 1)");
  require_config(std::isfinite(eps) && eps >= 0.0f, "", "eps (", eps, ") must be >= 0");
  require_config(weight_decay >= 0.0 && double(lr) * weight_decay < 1.0, "weight_decay",
                 "weight_decay (", weight_decay, ") must be >= 0 with lr * weight_decay < 1");
}

void adam_update(float* p, const float* g, float* m, float* v, Eigen::Index n, float lr,
                 double beta1, double beta2, float eps, int64_t t, double weight_decay) {
  // AdamW: param.mul_(1 - lr * weight_decay), the factor a Python float cast to the tensor's.
  if (weight_decay != 0.0)
    Eigen::Map<Eigen::ArrayXf>(p, n) *= static_cast<float>(1.0 - double(lr) * weight_decay);
  // Bias corrections in double, as PyTorch computes them in Python floats.
  const double bc1 = 1.0 - std::pow(beta1, double(t));
  const double bc2 = 1.0 - std::pow(beta2, double(t));
  const float step_size = static_cast<float>(lr / bc1);
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  // The tensor kernels see each scalar cast to float, as PyTorch's CPU kernels do.
  adam_kernel(p, g, m, v, n, static_cast<float>(beta1), static_cast<float>(beta2),
              static_cast<float>(1.0 - beta1), static_cast<float>(1.0 - beta2), eps, step_size,
              bc2_sqrt);
}

Adam::Adam(std::vector<ParamRef> ps, const AdamConfig& c) : config(c), params(std::move(ps)) {
  config.validate();
  for (const ParamRef& p : params) {
    m.emplace_back(static_cast<size_t>(p.numel()), 0.0f);
    v.emplace_back(static_cast<size_t>(p.numel()), 0.0f);
  }
}

void Adam::step() {
  OpTimer timer("adam");
  ++t;
  for (size_t i = 0; i < params.size(); ++i)
    adam_update(params[i].value, params[i].grad, m[i].data(), v[i].data(), params[i].numel(),
                config.lr, config.beta1, config.beta2, config.eps, t, config.weight_decay);
}

float clip_grad_norm(const std::vector<ParamRef>& params, double max_norm) {
  // total = ||(||g_1||, ..., ||g_n||)||, each norm a float as torch.norm returns it.
  double sum = 0.0;
  for (const ParamRef& p : params) {
    const Eigen::Map<const Eigen::ArrayXf> g(p.grad, p.numel());
    const float norm = static_cast<float>(std::sqrt(g.cast<double>().square().sum()));
    sum += double(norm) * double(norm);
  }
  const float total = static_cast<float>(std::sqrt(sum));
  // clip_coef = max_norm / (total + 1e-6), clamped to 1: float tensor arithmetic.
  const float coef = std::min(1.0f, static_cast<float>(max_norm) / (total + 1e-6f));
  if (coef < 1.0f)
    for (const ParamRef& p : params) Eigen::Map<Eigen::ArrayXf>(p.grad, p.numel()) *= coef;
  return total;
}

}  // namespace attn
