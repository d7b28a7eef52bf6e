// The block's position-wise feed-forward network (the course's ffn_relu and ffn_swiglu, as
// PyTorch modules with Linear layers named up, down and gate).
#pragma once

#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "attn/base/names.h"
#include "attn/base/rng.h"
#include "attn/base/tensor.h"
#include "attn/kernels/kernels.h"
#include "attn/nn/linear.h"
#include "attn/nn/report.h"

namespace attn {

// Which FFN a block uses. None is "no FFN" for the config; a FeedForward is never built with it.
enum class FfnKind { None, ReLU, GELU, SwiGLU };
inline constexpr const char* kFfnKindNames[] = {"none", "relu", "gelu", "swiglu"};
inline constexpr EnumNames kFfnKinds = {"ffn", ErrorKind::Config, "ffn", "FfnKind", kFfnKindNames,
                                        int(std::size(kFfnKindNames))};
// A name of kFfnKinds; anything else throws an Error of kind Config on key "ffn".
FfnKind parse_ffn_kind(const std::string& name);
const char* ffn_kind_name(FfnKind kind);

// The hidden width F of an FFN of kind over d_model with ffn_mult, 0 for FfnKind::None: the one
// formula, which the module and its report read (and through them the state dict, the FLOP
// counts and the JS API's shapes). F = floor(ffn_mult * d_model), the multiplier taken as the
// shortest decimal that reads back as it (2.67, not 2.6700000763), as Python's int(d * 2.67)
// computes it: 4 gives 4 D, 2.67 at D 64 gives 170 (the course's capstone).
int ffn_hidden_width(FfnKind kind, int d_model, float ffn_mult);

// The exact GELU (torch's approximate='none'), gelu and gelu_grad, and its row kernels are in
// kernels.h.
// SiLU, x * sigmoid(x), and its derivative s (1 + x (1 - s)) with s = sigmoid(x).
float silu(float x);
float silu_grad(float x);

// With F = ffn_hidden_width(kind, D, ffn_mult) hidden units:
//   relu, gelu: y = down(act(up(x))), up (F,D) + bias (F), down (D,F) + bias (D) (no biases
//               when built with bias false)
//   swiglu:     y = down(silu(gate(x)) * up(x)), gate and up (F,D), down (D,F), no biases
class FeedForward {
 public:
  // Forward cache and backward workspace for one N. Reusing it for the same N allocates nothing.
  struct State {
    Mat x;       // (N,D) input, copied for backward (so y may alias x)
    Mat up;      // (N,F) up(x): the activation's input (relu, gelu) or the linear half (swiglu)
    Mat gate;    // (N,F) gate(x), silu's input (swiglu only)
    Mat hidden;  // (N,F) the input of down: act(up) or silu(gate) * up
    Mat dgelu;   // (N,F) gelu'(up), computed with hidden in one pass (gelu only)
    // Backward: dhidden (N,F) = dL/d(hidden), then reused in place for dL/d(up); dgate (N,F);
    // dx_gate (N,D) the gate branch's share of dx (swiglu).
    Mat dhidden, dgate, dx_gate;
  };

  // Validates (kind not None, d_model >= 1, ffn_mult in [1, 8]) and initialises each Linear as
  // torch.nn.Linear from rng, in this order: relu/gelu up then down (weight then bias each, the
  // biases only with bias); swiglu gate, up, down (weights only).
  FeedForward(FfnKind kind, int d_model, float ffn_mult, Rng& rng, bool bias = true);

  // x (N,D) -> y (N,D); caches x, up, gate, hidden, dgelu. y may alias x.
  void forward(ConstMatRef x, State& s, MatRef y) const;

  // dy (N,D) -> dx (N,D) from the cache of the last forward; overwrites the gradients of up,
  // down and gate. dx may alias dy.
  void backward(State& s, ConstMatRef dy, MatRef dx);

  // Its Linears mounted as "gate." (swiglu), "up." and "down." (report's tensors in init order);
  // caches x (N,D), up, hidden (N,F), gate (N,F, swiglu), dgelu (N,F, gelu). N rows.
  static ModuleReport report(FfnKind kind, int d_model, float ffn_mult, int64_t N,
                             bool bias = true);

  // Appends the parameters in init order as prefix + "up.weight", "up.bias", "down.weight",
  // "down.bias" (relu, gelu; the biases only with bias) or prefix + "gate.weight", "up.weight",
  // "down.weight" (swiglu).
  void append_params(const std::string& prefix, std::vector<ParamRef>& out);

  // The largest ffn_mult the config accepts (hidden width 8 * D).
  static constexpr int kMaxFfnMult = 8;

  FfnKind kind;
  int d_model;
  float ffn_mult;
  int hidden_dim;
  std::optional<Linear> gate;  // (F,D), no bias; swiglu only
  Linear up;                   // (F,D), bias (F) for relu/gelu
  Linear down;                 // (D,F), bias (D) for relu/gelu
};

}  // namespace attn
