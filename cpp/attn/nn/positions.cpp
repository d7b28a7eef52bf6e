#include "attn/nn/positions.h"

#include <cmath>

namespace attn {

Rope::Rope(int max_len_, int d_head_, double base) : max_len(max_len_), d_head(d_head_) {
  require_config(max_len >= 1, "seq_len", "max_context_length (", max_len, ") must be >= 1");
  require_config(d_head >= 2 && d_head % 2 == 0, "positions", "d_head (", d_head,
                 ") must be even for rope positions");
  require_config(std::isfinite(base) && base > 1.0, "", "base (", base, ") must be > 1");
  const int P = d_head / 2;
  cos_table.resize(max_len, P);
  sin_table.resize(max_len, P);
  // The float32 recipe of the sinusoidal table (see SinusoidalPositionalEmbedding): the exponent
  // and the denominator rounded to float, the angle a float division, cos/sin rounded once.
  for (int i = 0; i < P; ++i)
    for (int p = 0; p < max_len; ++p) {
      const float a = angle(p, i, d_head, base);
      cos_table(p, i) = static_cast<float>(std::cos(double(a)));
      sin_table(p, i) = static_cast<float>(std::sin(double(a)));
    }
}

float Rope::angle(int p, int i, int d_head, double base) {
  const float base_f = static_cast<float>(base);
  const float exponent = static_cast<float>(2 * i) / static_cast<float>(d_head);
  const float denom = static_cast<float>(std::pow(double(base_f), double(exponent)));
  return static_cast<float>(p) / denom;
}

// Rotates every pair of x (T,Dh) in place by +angle (sign 1) or -angle (sign -1): with
// R = [[c, -s], [s, c]], the forward is y = R x and its backward dx = R^T dy, the rotation by -angle.
void Rope::rotate_pairs(MatRef x, float sign, int first_position) const {
  require(x.cols() == d_head, "rope expects rows of d_head (", d_head, "), got ", x.cols());
  require(first_position >= 0 && first_position + x.rows() <= max_len, "rope: sequence length (",
          x.rows(), ") from position ", first_position, " exceeds the table's ", max_len,
          " positions");
  for (Eigen::Index t = 0; t < x.rows(); ++t)
    for (Eigen::Index i = 0; i < d_head / 2; ++i) {
      const Eigen::Index p = first_position + t;
      const float a = x(t, 2 * i), b = x(t, 2 * i + 1), c = cos_table(p, i),
                  s = sign * sin_table(p, i);
      x(t, 2 * i) = a * c - b * s;
      x(t, 2 * i + 1) = a * s + b * c;
    }
}

void Rope::rotate(MatRef x, int first_position) const { rotate_pairs(x, 1.0f, first_position); }

void Rope::rotate_backward(MatRef dx) const { rotate_pairs(dx, -1.0f, 0); }

std::vector<float> alibi_slopes(int n_heads) {
  require_config(n_heads >= 1, "n_heads", "n_heads (", n_heads, ") must be >= 1");
  std::vector<float> m(static_cast<size_t>(n_heads));
  for (int h = 0; h < n_heads; ++h)
    m[size_t(h)] = static_cast<float>(std::exp2(-8.0 * double(h + 1) / double(n_heads)));
  return m;
}

void add_alibi_bias(MatRef scores, float slope, int first_row, int first_col) {
  for (Eigen::Index r = 0; r < scores.rows(); ++r)
    for (Eigen::Index c = 0; c < scores.cols(); ++c) {
      const Eigen::Index i = first_row + r, j = first_col + c;
      const float dist = static_cast<float>(i >= j ? i - j : j - i);
      scores(r, c) += -(slope * dist);
    }
}

}  // namespace attn
