#include "attn/interp/receptive_field.h"

#include <cstdlib>
#include <memory>

#include "attn/base/rng.h"

namespace attn {

// ids (T) repeated as a batch (T,T) -> forward -> dlogits zero but row i of copy i, which is u
// -> backward -> dx (T*T,D), copy i's rows are d(u . logits_i)/dx_j -> their norms.
Mat receptive_field(Model& model, const int32_t* ids, int T, uint64_t seed) {
  const ModelConfig& c = model.model_config();
  require(T >= 1 && T <= c.max_context_length, "sequence length (", T, ") must be in [1, ",
          c.max_context_length, "]");
  std::vector<int32_t> rows(size_t(T) * size_t(T));
  for (int b = 0; b < T; ++b) std::copy(ids, ids + T, rows.begin() + ptrdiff_t(b) * T);
  const Batch batch = ids_batch(rows.data(), T, T);
  const std::unique_ptr<ModelState> state = model.new_state();
  ModelState& s = *state;
  model.forward(batch, s);  // eval mode
  Rng rng(seed);
  RowVec u(c.vocab_size);
  for (Eigen::Index v = 0; v < u.size(); ++v) u[v] = rng.normal();
  s.dlogits.setZero(s.logits.rows(), s.logits.cols());
  for (int i = 0; i < T; ++i) s.dlogits.row(Eigen::Index(i) * T + i) = u;
  model.backward(batch, s);
  const Mat& dx = model.input_gradient(s);
  Mat attribution(T, T);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) attribution(i, j) = dx.row(Eigen::Index(i) * T + j).norm();
  return attribution;
}

std::vector<int> receptive_reach(const Mat& a) {
  std::vector<int> reach(size_t(a.rows()), 0);
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j)
      if (a(i, j) != 0.0f) reach[size_t(i)] = std::max(reach[size_t(i)], int(std::abs(i - j)));
  return reach;
}

}  // namespace attn
