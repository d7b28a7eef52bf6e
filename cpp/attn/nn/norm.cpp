#include "attn/nn/norm.h"

#include "attn/base/parallel.h"
#include "attn/kernels/kernels.h"

#include <cmath>

namespace attn {

namespace {
// Rows per part when the threads share a norm layer's rows.
constexpr int64_t kRowGrain = 32;
}  // namespace

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
  OpTimer timer("norm forward");
  s.xhat.resize(N, D);
  s.rstd.resize(N);
  const bool layer = kind == NormKind::LayerNorm;
  parallel_for(N, kRowGrain, [&](int, int64_t n0, int64_t n1) {
    for (Eigen::Index n = n0; n < n1; ++n)
      s.rstd[n] = norm_row(x.row(n).data(), weight.data(), layer ? bias.data() : nullptr, layer,
                           eps(), D, s.xhat.row(n).data(), y.row(n).data());
  });
}

// Forward per row: y = xhat * w (+ b), xhat = (x - mean) * rstd (mean = 0 for RMSNorm).
//   dw = sum_rows(dy * xhat), db = sum_rows(dy); with g = dy * w,
//   LayerNorm: dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
//   RMSNorm:   dx = rstd * (g - xhat * mean(g * xhat))
// One pass over the rows (norm_backward_rows); a row of dy is summed before its dx is written, so
// dx may alias dy.
void Norm::backward(const State& s, ConstMatRef dy, MatRef dx) {
  const Eigen::Index N = s.xhat.rows(), D = d_model;
  require_state(s.rstd.size() == N && N > 0, "Norm::backward needs a forward pass first");
  require(dy.rows() == N && dy.cols() == D, "dy must be (", N, ",", D, "), got (", dy.rows(),
          ",", dy.cols(), ")");
  require(dx.rows() == N && dx.cols() == D, "dx must be (", N, ",", D, "), got (", dx.rows(),
          ",", dx.cols(), ")");
  OpTimer timer("norm backward");
  const bool layer = kind == NormKind::LayerNorm;
  norm_backward_rows(dy, s.xhat, s.rstd.data(), weight.data(), layer, dx, dweight.data(),
                     layer ? dbias.data() : nullptr);
}

ModuleReport Norm::report(NormKind kind, int d_model, int64_t N) {
  ModuleReport r;
  r.tensors.push_back({"weight", {d_model}});
  if (kind == NormKind::LayerNorm) r.tensors.push_back({"bias", {d_model}});
  r.activations = N * d_model + N;  // xhat, rstd
  return r;
}

void Norm::append_params(const std::string& prefix, std::vector<ParamRef>& out) {
  out.push_back({prefix + "weight", {d_model}, weight.data(), dweight.data()});
  if (kind == NormKind::LayerNorm)
    out.push_back({prefix + "bias", {d_model}, bias.data(), dbias.data()});
}

}  // namespace attn
