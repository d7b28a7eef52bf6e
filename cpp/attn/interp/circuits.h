// Circuit measurements of trained heads: the previous-token and prefix-matching scores
// of each head's attention, the K-composition between heads of consecutive layers, and the
// phase change in a loss curve. Free functions over weights and attention maps; the Trainer
// gathers them (head_scores in readouts.h, Trainer::phase_change_step).
//
// Convention: row vectors, as the code computes x W^T with PyTorch's (out, in) weights. For head h
// of a layer with qkv_proj.weight Wqkv (3D,D) and out_proj.weight Wo (D,D), Dh = D / H:
//   W_Q^h = Wqkv[h*Dh : (h+1)*Dh, :]^T          (D,Dh)   q = x W_Q^h (+ bias)
//   W_K^h = Wqkv[D + h*Dh : D + (h+1)*Dh, :]^T  (D,Dh)   k = x W_K^h
//   W_V^h = Wqkv[2D + h*Dh : 2D + (h+1)*Dh, :]^T (D,Dh)  v = x W_V^h
//   W_O^h = Wo[:, h*Dh : (h+1)*Dh]^T             (Dh,D)  the head's share of out_proj
//   W_QK^h = W_Q^h (W_K^h)^T (D,D): the score of query x_i on key x_j is x_i W_QK^h x_j^T
//   W_OV^h = W_V^h W_O^h     (D,D): a head attending fully to x_j writes x_j W_OV^h to the stream
// Biases and the 1/sqrt(Dh) scale are left out (they do not change which directions compose).
#pragma once

#include <cstdint>
#include <vector>

#include "attn/base/tensor.h"
#include "attn/nn/multihead.h"

namespace attn {

// A mean built up over batches.
struct ScoreSum {
  double sum = 0.0;
  int64_t count = 0;
  float mean() const;  // NaN when nothing was added
};

// weights (B*H*T,T) = (B,H,T,T) of one layer. Adds, per head h, the weight of every query i >= 1
// on key i - 1: the previous-token score is its mean. per_head has H entries.
void add_previous_token(ConstMatRef weights, int B, int H, int T, ScoreSum* per_head);

// weights (B,H,T,T) of one layer for the sequences ids (B,T). For each row with a repeated
// segment (find_repeat), adds, per head, the weight of each query t in the second occurrence on
// key first + (t - second) + 1, the position just after the first occurrence of x[t]: the
// prefix-matching score is its mean. Rows without a repeat add nothing.
void add_prefix_matching(ConstMatRef weights, const int32_t* ids, int B, int H, int T,
                         ScoreSum* per_head);

// W_QK^h and W_OV^h of head h (D,D each), as above. A differential head's W_QK is its first
// map's (the second one's is subtracted after a softmax, which no single matrix shows).
Mat qk_circuit(const MultiHeadSelfAttention& layer, int h);
Mat ov_circuit(const MultiHeadSelfAttention& layer, int h);

// K-composition of a head writing W_OV (D,D) into the keys of a later head with W_QK (D,D).
// In the row convention the later head's score on a key that holds x_j W_OV is
// x_i W_QK (x_j W_OV)^T = x_i (W_QK W_OV^T) x_j^T, so the score is
//   ||W_QK W_OV^T||_F / (||W_QK||_F ||W_OV||_F),
// which is Elhage et al.'s ||W_QK W_OV||_F / (||W_QK||_F ||W_OV||_F) written in their
// column-vector convention (their W_QK is ours, their W_OV is our W_OV^T). In [0, 1].
float k_composition(ConstMatRef w_qk, ConstMatRef w_ov);

// The mean k_composition of random heads of the same shapes: W_Q, W_K, W_V (D,Dh) and
// W_O (Dh,D) with independent N(0, 1) entries (the ratio ignores each factor's scale), over
// `samples` draws from Rng(seed). Deterministic for given arguments on every platform.
float k_composition_baseline(int D, int Dh, int samples, uint64_t seed);

// The phase change of a loss curve: a smoothed loss that sat on a plateau while still high
// falls by a large fraction within a short window. With the defaults (in steps):
//   s(t)      = mean of the losses of steps t - 24 .. t (smooth_steps = 25);
//   a plateau = 100 consecutive s values whose spread (max - min) is <= 10% of their mean, with
//               that mean >= half of the first s (the loss has not yet been learned away);
//   the phase change is the first step t with s(t) <= half the mean of the latest plateau before
//   t, if that plateau ended at most 400 steps before t (window_steps).
// A loss that falls from the start (no plateau), drifts down slowly, or only wobbles has none.
struct PhaseChangeRule {
  int smooth_steps = 25;
  int plateau_steps = 100;
  float flatness = 0.1f;
  float still_high = 0.5f;
  float drop = 0.5f;
  int window_steps = 400;
};

// Applies the rule to a loss history as the Trainer keeps it: entry k is the loss of step
// k * stride + 1 (steps counted from 1). Incremental: update() reads only the entries added since
// the last call (it starts over when the stride changes, or the history got shorter). Once found,
// the step stays.
class PhaseChangeDetector {
 public:
  explicit PhaseChangeDetector(PhaseChangeRule rule = {}) : rule_(rule) {}
  // Returns step().
  int64_t update(const float* losses, size_t n, int64_t stride);
  // The step of the phase change, or -1 while none is found.
  int64_t step() const { return step_; }

 private:
  void restart(int64_t stride);
  PhaseChangeRule rule_;
  int64_t step_ = -1;
  int64_t stride_ = 0;
  size_t seen_ = 0;
  std::vector<double> cumsum_;  // cumsum_[k] = sum of the first k losses
  std::vector<float> smooth_;   // s at entries smooth - 1, smooth, ...
  float plateau_level_ = 0.0f;
  int64_t plateau_end_ = -1;    // entry where the last plateau ended
};

}  // namespace attn
