#include "attn/nn/linear.h"

#include <cmath>

#include "attn/kernels/kernels.h"

namespace attn {

Linear::Linear(int in, int out, Rng& rng, bool with_bias) : in_features(in), out_features(out) {
  require_config(in >= 1, "", "in_features (", in, ") must be >= 1");
  require_config(out >= 1, "", "out_features (", out, ") must be >= 1");
  // kaiming_uniform_(a=sqrt(5)) and the bias rule both reduce to bound = 1/sqrt(in).
  const float bound = 1.0f / std::sqrt(static_cast<float>(in));
  weight.resize(out, in);
  bias.resize(with_bias ? out : 0);
  for (Eigen::Index i = 0; i < weight.size(); ++i)
    weight.data()[i] = bound * (2.0f * rng.uniform() - 1.0f);
  for (Eigen::Index i = 0; i < bias.size(); ++i) bias[i] = bound * (2.0f * rng.uniform() - 1.0f);
  dweight = Mat::Zero(out, in);
  dbias = RowVec::Zero(bias.size());
}

void Linear::forward(ConstMatRef x, MatRef y) const {
  matmul_nt(x, weight, y, 1.0f, has_bias() ? bias.data() : nullptr);
}

// Forward: y = x W^T + b  =>  dW = dy^T x, db = sum_rows(dy), dx = dy W.
void Linear::backward(ConstMatRef x, ConstMatRef dy, MatRef dx) {
  matmul_tn(dy, x, dweight);
  if (has_bias()) {
    OpTimer timer("bias gradient");
    col_sums(dy, dbias.data());
  }
  matmul_nn(dy, weight, dx);
}

ModuleReport Linear::report(int in, int out, bool with_bias, int64_t N) {
  ModuleReport r;
  r.tensors.push_back({"weight", {out, in}});
  if (with_bias) r.tensors.push_back({"bias", {out}});
  const int n = int(N);
  r.step({{"", "nt", n, out, in, 1}}, {{"dW", "tn", out, in, n, 1}, {"dx", "nn", n, in, out, 1}});
  return r;
}

void Linear::append_params(const std::string& prefix, std::vector<ParamRef>& out) {
  out.push_back({prefix + "weight", {out_features, in_features}, weight.data(), dweight.data()});
  if (has_bias()) out.push_back({prefix + "bias", {out_features}, bias.data(), dbias.data()});
}

}  // namespace attn
