// Per-row normalisation of the residual stream: LayerNorm and RMSNorm, as torch.nn.LayerNorm
// and torch.nn.RMSNorm over the last dimension (the course's layer_norm and rms_norm, with a
// learned scale and, for LayerNorm, a shift).
#pragma once

#include <iterator>
#include <string>
#include <vector>

#include "attn/base/names.h"
#include "attn/base/tensor.h"
#include "attn/nn/report.h"

namespace attn {

// Which normalisation a block uses. None is "no norm layer" for the config; a Norm is never
// built with it.
enum class NormKind { None, LayerNorm, RMSNorm };
inline constexpr const char* kNormKindNames[] = {"none", "layernorm", "rmsnorm"};
inline constexpr EnumNames kNormKinds = {"norm", ErrorKind::Config, "norm", "NormKind",
                                         kNormKindNames, int(std::size(kNormKindNames))};
// A name of kNormKinds; anything else throws an Error of kind Config on key "norm".
NormKind parse_norm_kind(const std::string& name);
const char* norm_kind_name(NormKind kind);

// LayerNorm: y = (x - mean) / sqrt(var + 1e-5) * weight + bias, var the biased variance.
// RMSNorm:   y = x / sqrt(mean(x^2) + 1e-6) * weight, with no bias.
// Row statistics are accumulated in double (float lanes in the SIMD build: kernels.h norm_row),
// then each output is rounded once to float.
class Norm {
 public:
  // Forward cache and backward workspace for one N. Reusing it for the same N allocates nothing.
  struct State {
    Mat xhat;     // (N,D) the normalised input, before weight and bias
    RowVec rstd;  // (N) 1 / sqrt(var + eps) (LayerNorm) or 1 / sqrt(mean(x^2) + eps) (RMSNorm)
  };

  // torch.nn.LayerNorm's default eps, and the course's rms_norm eps.
  static constexpr double kLayerNormEps = 1e-5;
  static constexpr double kRMSNormEps = 1e-6;

  // weight starts at 1 and bias at 0 (RMSNorm has none), so a fresh layer is the course's
  // function. Draws no random numbers. Throws an Error of kind Config for kind None or d < 1.
  Norm(NormKind kind, int d_model);

  // x (N,D) -> y (N,D); caches xhat (N,D) and rstd (N). y may alias x.
  void forward(ConstMatRef x, State& s, MatRef y) const;

  // dy (N,D) -> dx (N,D) from the cache of the last forward; overwrites dweight and dbias.
  // dx may alias dy.
  void backward(const State& s, ConstMatRef dy, MatRef dx);

  // "weight" (D) and, for LayerNorm, "bias" (D); caches xhat (N,D) and rstd (N); no products.
  static ModuleReport report(NormKind kind, int d_model, int64_t N);
  // Appends weight (and bias for LayerNorm) as prefix + "weight" / "bias", shape (D).
  void append_params(const std::string& prefix, std::vector<ParamRef>& out);

  // The eps of this layer's kind.
  double eps() const { return kind == NormKind::LayerNorm ? kLayerNormEps : kRMSNormEps; }

  NormKind kind;
  int d_model;
  RowVec weight;   // (D)
  RowVec bias;     // (D) for LayerNorm, (0) for RMSNorm
  RowVec dweight;  // (D)
  RowVec dbias;    // same size as bias
};

}  // namespace attn
