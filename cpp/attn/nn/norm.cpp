#include "attn/nn/norm.h"

#include <cmath>

namespace attn {

NormKind parse_norm_kind(const std::string& name) {
  return static_cast<NormKind>(parse_enum(kNormKinds, name));
}

const char* norm_kind_name(NormKind kind) { return kNormKindNames[static_cast<int>(kind)]; }

Norm::Norm(NormKind kind_, int d) : kind(kind_), d_model(d) {
  require_config(kind != NormKind::None, "norm", "a norm layer needs norm layernorm or rmsnorm");
  require_config(d >= 1, "d_model", "d_model (", d, ") must be >= 1");
  weight = RowVec::Ones(d);
  dweight = RowVec::Zero(d);
  const int nb = kind == NormKind::LayerNorm ? d : 0;
  bias = RowVec::Zero(nb);
  dbias = RowVec::Zero(nb);
}

// x (N,D) -> y (N,D); caches xhat (N,D), rstd (N). Each row is read whole before it is written,
// so y may alias x.
void Norm::forward(ConstMatRef x, State& s, MatRef y) const {
  const Eigen::Index N = x.rows(), D = d_model;
  require(x.cols() == D, "expected feature dim ", D, ", got ", x.cols());
  require(y.rows() == N && y.cols() == D, "y must be (", N, ",", D, "), got (", y.rows(), ",",
          y.cols(), ")");
  s.xhat.resize(N, D);
  s.rstd.resize(N);
  const bool layer = kind == NormKind::LayerNorm;
  const double eps_d = eps();
  for (Eigen::Index n = 0; n < N; ++n) {
    double mean = 0.0;
    if (layer) {
      for (Eigen::Index j = 0; j < D; ++j) mean += x(n, j);
      mean /= double(D);
    }
    // Centred second moment (LayerNorm) or the plain mean square (RMSNorm: mean stays 0).
    double m2 = 0.0;
    for (Eigen::Index j = 0; j < D; ++j) {
      const double c = double(x(n, j)) - mean;
      m2 += c * c;
    }
    const double rstd = 1.0 / std::sqrt(m2 / double(D) + eps_d);
    s.rstd[n] = float(rstd);
    for (Eigen::Index j = 0; j < D; ++j) {
      const float xh = float((double(x(n, j)) - mean) * rstd);
      s.xhat(n, j) = xh;
      y(n, j) = layer ? xh * weight[j] + bias[j] : xh * weight[j];
    }
  }
}

// Forward per row: y = xhat * w (+ b), xhat = (x - mean) * rstd (mean = 0 for RMSNorm).
//   dw = sum_rows(dy * xhat), db = sum_rows(dy); with g = dy * w,
//   LayerNorm: dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
//   RMSNorm:   dx = rstd * (g - xhat * mean(g * xhat))
// Each dx entry is written after its dy entry was last read, so dx may alias dy.
void Norm::backward(const State& s, ConstMatRef dy, MatRef dx) {
  const Eigen::Index N = s.xhat.rows(), D = d_model;
  require_state(s.rstd.size() == N && N > 0, "Norm::backward needs a forward pass first");
  require(dy.rows() == N && dy.cols() == D, "dy must be (", N, ",", D, "), got (", dy.rows(),
          ",", dy.cols(), ")");
  require(dx.rows() == N && dx.cols() == D, "dx must be (", N, ",", D, "), got (", dx.rows(),
          ",", dx.cols(), ")");
  const bool layer = kind == NormKind::LayerNorm;
  dweight.setZero();
  if (layer) dbias.setZero();
  for (Eigen::Index n = 0; n < N; ++n) {
    double g_mean = 0.0, gx_mean = 0.0;
    for (Eigen::Index j = 0; j < D; ++j) {
      const float d = dy(n, j), xh = s.xhat(n, j);
      const double g = double(d) * weight[j];
      g_mean += g;
      gx_mean += g * xh;
      dweight[j] += d * xh;
      if (layer) dbias[j] += d;
    }
    g_mean = layer ? g_mean / double(D) : 0.0;
    gx_mean /= double(D);
    const double rstd = s.rstd[n];
    for (Eigen::Index j = 0; j < D; ++j) {
      const double g = double(dy(n, j)) * weight[j];
      dx(n, j) = float(rstd * (g - g_mean - double(s.xhat(n, j)) * gx_mean));
    }
  }
}

void Norm::append_params(const std::string& prefix, std::vector<ParamRef>& out) {
  out.push_back({prefix + "weight", {d_model}, weight.data(), dweight.data()});
  if (kind == NormKind::LayerNorm)
    out.push_back({prefix + "bias", {d_model}, bias.data(), dbias.data()});
}

}  // namespace attn
