#include "attn/train/adam.h"

#include <cmath>

#include "attn/kernels/kernels.h"

namespace attn {

void AdamConfig::validate() const {
  require_config(std::isfinite(lr) && lr > 0.0f, "lr", "lr (", lr, ") must be a positive number");
  require_config(beta1 >= 0.0 && beta1 < 1.0, "", "beta1 (", beta1, ") must be in [0, 1)");
  require_config(beta2 >= 0.0 && beta2 < 1.0, "", "beta2 (", beta2, ") must be in [0, 1)");
  require_config(std::isfinite(eps) && eps >= 0.0f, "", "eps (", eps, ") must be >= 0");
}

void adam_update(float* p, const float* g, float* m, float* v, Eigen::Index n, float lr,
                 double beta1, double beta2, float eps, int64_t t) {
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
                config.lr, config.beta1, config.beta2, config.eps, t);
}

}  // namespace attn
