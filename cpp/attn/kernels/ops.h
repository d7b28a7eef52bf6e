// Row-wise primitives shared by the attention layers: softmax, masking, dropout.
#pragma once

#include <iterator>
#include <string>

#include "attn/base/names.h"
#include "attn/base/rng.h"
#include "attn/base/tensor.h"

namespace attn {

// Stable softmax of each row: x (R,S) -> y (R,S); subtracts the row max. y may alias x.
// A row whose entries are all -inf becomes all zeros (never NaN).
void softmax_rows(ConstMatRef x, MatRef y);

// Backward of y = softmax_rows(x): dx = y * (dy - rowsum(dy * y)). dx may alias dy.
void softmax_rows_backward(ConstMatRef y, ConstMatRef dy, MatRef dx);

// The textbook softmax of each row, exp(x) / rowsum(exp(x)) in float32, WITHOUT subtracting
// the row max: exp overflows to inf once a logit passes ~88.7, and the row becomes NaN. Kept
// to show why softmax_rows subtracts the max; no layer uses it. x (R,S) -> y (R,S).
void softmax_rows_naive(ConstMatRef x, MatRef y);

// One row's softmax taken apart, in float32, for the stability lesson. subtract_max = true is
// softmax_rows' recipe (a row of all -inf gives zeros, as there); false is softmax_rows_naive's.
struct SoftmaxSteps {
  float max = 0.0f;  // the max that was subtracted (0 when subtract_max is false)
  RowVec shifted;    // (S) x - max
  RowVec exps;       // (S) exp(shifted)
  float sum = 0.0f;  // sum of exps, in order
  RowVec weights;    // (S) exps / sum
};
SoftmaxSteps softmax_steps(const RowVec& x, bool subtract_max);

// Sets scores[i][j] = -inf for j > i (future keys), in place. scores (T,T).
void apply_causal_mask(MatRef scores);

// How attention scores are masked. Causal is the curriculum's mask. The other two are teaching
// faults: None skips the mask, Inverted is the classic bug that fills kBrokenMaskFill at the
// wrong cells (the past, j < i) and so leaves every future key visible.
enum class MaskMode { Causal, None, Inverted };
inline constexpr const char* kMaskModeNames[] = {"causal", "none", "inverted"};
inline constexpr EnumNames kMaskModes = {"mask", ErrorKind::Input, "", "MaskMode", kMaskModeNames,
                                         int(std::size(kMaskModeNames))};
constexpr float kBrokenMaskFill = -1e4f;
// A name of kMaskModes; anything else throws an Error of kind Input.
MaskMode parse_mask_mode(const std::string& name);
const char* mask_mode_name(MaskMode mode);
// Applies mode to scores (T,T) in place.
void apply_mask(MatRef scores, MaskMode mode);

// Inverted dropout in place: keeps each entry with probability 1-p and scales it by
// 1/(1-p); writes the multiplier (0 or 1/(1-p)) of each entry to mask. x, mask (R,S).
void dropout_forward(MatRef x, MatRef mask, float p, Rng& rng);

// The check shared by every dropout layer: p must be in [0, 1). name is the config key
// ("attn_dropout"), in the message and as the error's key.
void check_dropout_p(const char* name, float p);

}  // namespace attn
