// Self-test: the curriculum's invariants, measured on a live model, for the page's self-test
// panel and `attn selftest`. Each check reports what it measured, its tolerance and whether it
// passed; a failing check is a result, never an exception.
//
// The checks, in the order run_self_tests returns them:
//   rows_and_mask      eval forward of B=2, T=C random ids: every attention row of every layer
//                      sums to 1 (differential: 1 - its head's lambda; max |sum - 1| <= 1e-5)
//                      and every weight the model's mask hides (above the diagonal; outside a
//                      window or strided pattern) is exactly 0.
//   future_invariance  ids after a cut t0 = (T-1)/2 replaced by other ids: logits and attention
//                      rows <= t0 of every layer unchanged (max |diff| <= 1e-6; expected
//                      exactly 0). A masked language model sees both sides: nothing to check.
//   split_merge        merge_heads(split_heads(x)) == x and head h of split_heads(x) is columns
//                      [h*Dh, (h+1)*Dh) of x, exactly (tolerance 0).
//   fused_qkv          the fused (N,3D) projection each layer computes (on its own input) equals
//                      three separate projections by the weight row blocks [0,D), [D,2D), [2D,3D)
//                      and the bias slices, computed in double: max |fused - sep| / (1 + |sep|)
//                      <= 1e-5, the worst layer counting.
//   gradcheck          the model's backward for the Backward panel's loss (the cross-entropy at
//                      one position alone, TinyAttentionLM::position_loss_backward) against central
//                      differences of that loss, on every parameter of a fresh V=8 D=8 H=2 C=4
//                      model with the live model's n_layers and residual (every layer):
//                      max |a - n| / (max(|a|,|n|) + 0.05) <= 0.02, which is the suite's
//                      |a - n| <= 1e-3 + 2e-2 * max(|a|,|n|) (tests/cpp/gradcheck.h).
//   pytorch_reference  a PyTorch reference case's logits, attention (every layer) and loss:
//                      max |ours - torch| / (1 + |torch|) <= 1e-5, i.e. the suite's
//                      |ours - torch| <= 1e-5 + 1e-5 * |torch| (tests/cpp/test_reference.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/base/check.h"
#include "attn/base/tensor.h"
#include "attn/model/model.h"
#include "attn/nn/linear.h"

namespace attn {

struct SelfTestResult {
  std::string id;      // stable id: rows_and_mask, future_invariance, split_merge, fused_qkv,
                       // gradcheck, pytorch_reference
  std::string name;    // one-line human title
  double max_error;    // the measured max error (abs, or the normalised metric named above)
  double tolerance;    // pass iff max_error <= tolerance (and any extra exactness condition)
  bool pass;
  std::string detail;  // one sentence: what was measured on what shapes
};

// The three safetensors files of one PyTorch reference config (tests/reference/data/<name>.*; the
// shipped one, `attn selftest`'s default and the page's, is cpp/attn/teach/selftest_case/short.*),
// as bytes: weights (state dict + metadata), input (ids, targets: (B,T) I64 or I32) and
// expected (logits (B,T,V), attention (B,H,T,T), or (L,B,H,T,T) for L > 1 layers, loss (1)).
struct ReferenceCase {
  std::vector<uint8_t> weights, input, expected;
};

// Runs every check, in the order above. The model-based checks run `model` in eval mode and
// change none of its weights, gradients or config. reference may be null: then pytorch_reference
// has pass=false and its detail says that no reference case was given. Never throws for a valid
// model: an exception inside a check (e.g. a malformed reference, whose detail then carries the
// loader's message) makes that check fail.
std::vector<SelfTestResult> run_self_tests(TinyAttentionLM& model, const ReferenceCase* reference);

// ---- Tolerances, shared with the Catch2 suite so the panel and the tests agree.

// PyTorch parity of forward outputs (logits, attention, loss): |ours - torch| <= abs + rel*|torch|.
constexpr double kReferenceOutAbs = 1e-5;
constexpr double kReferenceOutRel = 1e-5;

// Finite differences: kGradcheckEps, kGradcheckAbsTol and kGradcheckRelTol in attn/check.h.

// ---- The individual checks, exposed so that tests can show each one failing on a broken input.
// None of them throws: an exception inside becomes a failing result with the message in detail.

// An eval forward: ids (B,T) -> logits (B*T,V) and every layer's attention weights
// (L*B*H*T,T), layer-major (TinyAttentionLM::State::stacked_weights).
using SelfTestForward =
    std::function<void(const int32_t* ids, int B, int T, Mat& logits, Mat& weights)>;
// The live model's eval forward (reads model; the returned function holds a reference to it).
SelfTestForward model_forward(TinyAttentionLM& model);

// row_sums: what each head's rows must sum to, (L*H) global heads (nullptr: 1).
SelfTestResult check_rows_and_mask(const SelfTestForward& forward, const ModelConfig& config,
                                   const std::vector<float>* row_sums = nullptr);
SelfTestResult check_future_invariance(const SelfTestForward& forward, const ModelConfig& config);

using HeadsFn = Mat (*)(ConstMatRef x, int B, int T, int H);
SelfTestResult check_split_merge(const ModelConfig& config, HeadsFn split, HeadsFn merge);

// x (N,D) the projection's input, fused (N,W) the layer's fused projection of x, weight (W,D)
// and bias (W) the parameters the separate projections use, W = D + 2 KV Dh (3D without grouped
// K/V heads); with maps = 2 (differential) W = 2 D + 3 KV Dh, blocks q1 q2 | k1 k2 | v. With
// rope, the layer's q and k are rotated, B sequences of N/B positions each.
SelfTestResult check_fused_qkv(ConstMatRef x, ConstMatRef fused, ConstMatRef weight,
                               ConstMatRef bias, const Rope* rope = nullptr, int B = 1,
                               int maps = 1);
// The same on the live model, for every layer: x = the layer's input in an eval forward of B=2,
// T=C random ids (embeddings + positions for layer 0), fused = the qkv the layer computed from it.
// The result is the worst layer's.
SelfTestResult check_fused_qkv(TinyAttentionLM& model);

// On a fresh small model of n_layers layers, with or without residual.
// block: take the transformer block's settings (positions, norm, FFN, grouped K/V, objective,
// attention pattern with its window and stride capped at 2 and 3, differential) from it.
SelfTestResult check_gradcheck(int n_layers = 1, bool residual = false,
                               const ModelConfig* block = nullptr);
SelfTestResult check_pytorch_reference(const ReferenceCase* reference);

}  // namespace attn
