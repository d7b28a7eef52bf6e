#include "attn/nn/ffn.h"

#include <cmath>

#include "attn/base/config_row.h"
#include "attn/kernels/kernels.h"

namespace attn {

FfnKind parse_ffn_kind(const std::string& name) {
  return static_cast<FfnKind>(parse_enum(kFfnKinds, name));
}

const char* ffn_kind_name(FfnKind kind) { return kFfnKindNames[static_cast<int>(kind)]; }

int ffn_hidden_width(FfnKind kind, int d_model, float ffn_mult) {
  return kind == FfnKind::None ? 0 : int(std::floor(shortest_decimal(ffn_mult) * d_model));
}

namespace {

// Runs before any member is built, so a bad config fails before any random number is drawn.
int checked_hidden_dim(FfnKind kind, int d_model, float ffn_mult) {
  require_config(kind != FfnKind::None, "ffn",
                 "a feed-forward layer needs ffn relu, gelu or swiglu");
  require_config(d_model >= 1, "d_model", "d_model (", d_model, ") must be >= 1");
  require_config(ffn_mult >= 1 && ffn_mult <= FeedForward::kMaxFfnMult, "ffn_mult", "ffn_mult (",
                 ffn_mult, ") must be in [1, ", FeedForward::kMaxFfnMult, "]");
  return ffn_hidden_width(kind, d_model, ffn_mult);
}

// The gate exists only in SwiGLU; otherwise nothing is drawn for it.
std::optional<Linear> make_gate(FfnKind kind, int d_model, int hidden, Rng& rng) {
  if (kind != FfnKind::SwiGLU) return std::nullopt;
  return Linear(d_model, hidden, rng, /*with_bias=*/false);
}

}  // namespace

// exp(-x) overflows to inf for x < ~-88; both formulas then give exactly 0 (or -0), not NaN.
float silu(float x) { return x / (1.0f + std::exp(-x)); }

float silu_grad(float x) {
  const float s = 1.0f / (1.0f + std::exp(-x));
  return s * (1.0f + x * (1.0f - s));
}

FeedForward::FeedForward(FfnKind k, int d, float mult, Rng& rng, bool bias)
    : kind(k),
      d_model(d),
      ffn_mult(mult),
      hidden_dim(checked_hidden_dim(k, d, mult)),
      gate(make_gate(k, d, hidden_dim, rng)),
      up(d, hidden_dim, rng, bias && k != FfnKind::SwiGLU),
      down(hidden_dim, d, rng, bias && k != FfnKind::SwiGLU) {}

// x (N,D) -> y (N,D); caches x (N,D), up (N,F), gate (N,F, swiglu), hidden (N,F), dgelu (N,F,
// gelu).
void FeedForward::forward(ConstMatRef x, State& s, MatRef y) const {
  const Eigen::Index N = x.rows(), D = d_model, F = hidden_dim;
  require(x.cols() == D, "expected feature dim ", D, ", got ", x.cols());
  require(y.rows() == N && y.cols() == D, "y must be (", N, ",", D, "), got (", y.rows(), ",",
          y.cols(), ")");
  {
    OpTimer timer("copies");
    s.x.resize(N, D);
    s.x = x;  // from here on only the copy is read, so y may alias x
  }
  s.up.resize(N, F);
  s.hidden.resize(N, F);
  up.forward(s.x, s.up);
  float* h = s.hidden.data();
  const float* u = s.up.data();
  const Eigen::Index n = N * F;
  switch (kind) {
    case FfnKind::ReLU:
      for (Eigen::Index i = 0; i < n; ++i) h[i] = u[i] > 0.0f ? u[i] : 0.0f;
      break;
    case FfnKind::GELU: {
      OpTimer timer("gelu");
      s.dgelu.resize(N, F);
      gelu_forward_rows(u, h, s.dgelu.data(), n);
      break;
    }
    case FfnKind::SwiGLU: {
      s.gate.resize(N, F);
      gate->forward(s.x, s.gate);
      const float* g = s.gate.data();
      for (Eigen::Index i = 0; i < n; ++i) h[i] = silu(g[i]) * u[i];
      break;
    }
    case FfnKind::None:
      break;  // the constructor rejects None
  }
  down.forward(s.hidden, y);
}

// Backward of the forward above. With hidden = act(up) or silu(gate) * up:
//   dhidden = dy W_down;  relu: dup = dhidden * [up > 0];  gelu: dup = dhidden * gelu'(up)
//   (gelu'(up) cached by the forward);
//   swiglu: dup = dhidden * silu(gate), dgate = dhidden * up * silu'(gate);
//   dx = dup W_up (+ dgate W_gate). dy is read only by down's backward, before dx is written.
void FeedForward::backward(State& s, ConstMatRef dy, MatRef dx) {
  const Eigen::Index N = s.x.rows(), D = d_model, F = hidden_dim;
  require_state(N > 0 && s.hidden.rows() == N, "FeedForward::backward needs a forward pass first");
  require(dy.rows() == N && dy.cols() == D, "dy must be (", N, ",", D, "), got (", dy.rows(),
          ",", dy.cols(), ")");
  require(dx.rows() == N && dx.cols() == D, "dx must be (", N, ",", D, "), got (", dx.rows(),
          ",", dx.cols(), ")");
  s.dhidden.resize(N, F);
  down.backward(s.hidden, dy, s.dhidden);
  float* dh = s.dhidden.data();
  const float* u = s.up.data();
  const Eigen::Index n = N * F;
  switch (kind) {
    case FfnKind::ReLU:
      for (Eigen::Index i = 0; i < n; ++i) dh[i] = u[i] > 0.0f ? dh[i] : 0.0f;
      break;
    case FfnKind::GELU: {
      OpTimer timer("gelu backward");
      Eigen::Map<Eigen::ArrayXf>(dh, n) *= Eigen::Map<const Eigen::ArrayXf>(s.dgelu.data(), n);
      break;
    }
    case FfnKind::SwiGLU: {
      s.dgate.resize(N, F);
      float* dg = s.dgate.data();
      const float* g = s.gate.data();
      for (Eigen::Index i = 0; i < n; ++i) {
        dg[i] = dh[i] * u[i] * silu_grad(g[i]);
        dh[i] *= silu(g[i]);
      }
      break;
    }
    case FfnKind::None:
      break;
  }
  up.backward(s.x, s.dhidden, dx);
  if (kind == FfnKind::SwiGLU) {
    s.dx_gate.resize(N, D);
    gate->backward(s.x, s.dgate, s.dx_gate);
    dx += s.dx_gate;
  }
}

ModuleReport FeedForward::report(FfnKind kind, int d_model, float ffn_mult, int64_t N,
                                 bool bias) {
  const int F = ffn_hidden_width(kind, d_model, ffn_mult);
  const bool swiglu = kind == FfnKind::SwiGLU;
  ModuleReport r;
  if (swiglu) r.add(Linear::report(d_model, F, false, N), "gate.");
  r.add(Linear::report(d_model, F, bias && !swiglu, N), "up.");
  r.add(Linear::report(F, d_model, bias && !swiglu, N), "down.");
  const int64_t caches = 2 + (swiglu || kind == FfnKind::GELU ? 1 : 0);  // up, hidden, gate|dgelu
  r.activations = N * d_model + caches * N * F;
  return r;
}

void FeedForward::append_params(const std::string& prefix, std::vector<ParamRef>& out) {
  if (gate) gate->append_params(prefix + "gate.", out);
  up.append_params(prefix + "up.", out);
  down.append_params(prefix + "down.", out);
}

}  // namespace attn
