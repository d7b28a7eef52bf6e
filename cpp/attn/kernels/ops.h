// Row-wise primitives shared by the attention layers: softmax, masking, dropout.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "attn/base/names.h"
#include "attn/base/rng.h"
#include "attn/base/tensor.h"

namespace attn {

// Stable softmax of each row: x (R,S) -> y (R,S); subtracts the row max. y may alias x.
// A row whose entries are all -inf becomes all zeros (never NaN).
void softmax_rows(ConstMatRef x, MatRef y);

// Backward of y = softmax_rows(x): dx = y * (dy - rowsum(dy * y)). dx may alias dy.
void softmax_rows_backward(ConstMatRef y, ConstMatRef dy, MatRef dx);

// The causal mask and softmax at once, for square scores x (T,T) whose entries above the
// diagonal may be unspecified: row i is the softmax of x(i, 0..i), and zeros after. In place.
// The same numbers as apply_causal_mask then softmax_rows.
void softmax_rows_causal(MatRef x);

// Backward of softmax_rows_causal: row i of dx is softmax_backward over entries 0..i, zeros
// after; dy's entries above the diagonal are not read. The same numbers as softmax_rows_backward
// on a finite dy. dx may alias dy.
void softmax_rows_backward_causal(ConstMatRef y, ConstMatRef dy, MatRef dx);

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

// Which keys a query may see: the causal (or bidirectional) mask, optionally narrowed to a
// sliding window and widened again by strided keys (the course's swa_mask and strided_mask).
//   causal:  key j is visible to query i when j <= i and (no window, or i - j < window, or
//            (stride > 0 and j mod stride == 0));
//   bidirectional (causal false): the causal pattern mirrored across the diagonal, i.e. j is
//            visible to i when the causal pattern lets max(i, j) see min(i, j): no window,
//            or |i - j| < window, or (stride > 0 and min(i, j) mod stride == 0). A stride
//            position is then seen by every later query and sees every later key.
// The query always sees itself (window >= 1), so no row is ever empty. A window >= T hides
// nothing past the causal mask: window T is exactly causal.
struct MaskPattern {
  bool causal = true;
  int window = 0;  // W >= 1 keys counting the query's own, or 0: no window (full attention)
  int stride = 0;  // S >= 1 with a window: the strided pattern; 0: none
  bool visible(int64_t i, int64_t j) const;
};

// The pattern of T positions as cells: (T,T) row-major, 1 where query i may see key j, else 0.
std::vector<uint8_t> visible_keys(const MaskPattern& pattern, int T);

// Sets scores[r][c] = -inf where query i = first_row + r may not see key j = first_col + c,
// in place (absolute positions). scores (R,S). A full causal pattern is apply_causal_mask's
// loop; the windowed ones test every cell.
void apply_mask_pattern(MatRef scores, const MaskPattern& pattern, int64_t first_row = 0,
                        int64_t first_col = 0);

// Inverted dropout in place: keeps each entry with probability 1-p and scales it by
// 1/(1-p); writes the multiplier (0 or 1/(1-p)) of each entry to mask. x, mask (R,S).
void dropout_forward(MatRef x, MatRef mask, float p, Rng& rng);

// The check shared by every dropout layer: p must be in [0, 1). name is the config key
// ("attn_dropout"), in the message and as the error's key.
void check_dropout_p(const char* name, float p);

}  // namespace attn
