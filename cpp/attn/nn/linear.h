// Fully connected layer in PyTorch's layout: weight (out,in), bias (out) or none.
#pragma once

#include "attn/base/rng.h"
#include "attn/base/tensor.h"
#include "attn/nn/report.h"

namespace attn {

class Linear {
 public:
  // Init as torch.nn.Linear: weight, then bias, each ~ U(-1/sqrt(in), 1/sqrt(in)). With
  // with_bias false (torch's bias=False) the bias is empty and no draws are made for it.
  Linear(int in_features, int out_features, Rng& rng, bool with_bias = true);

  // x (N,in) -> y (N,out) = x W^T + b.
  void forward(ConstMatRef x, MatRef y) const;

  // Given the forward's x and dy (N,out): overwrites dweight, dbias; writes dx (N,in).
  void backward(ConstMatRef x, ConstMatRef dy, MatRef dx);

  // "weight" (out,in) and "bias" (out) when it has one; no cache (its input and output are the
  // caller's); for N rows the products y = x W^T ("nt"), then dW = dy^T x ("tn") and dx = dy W
  // ("nn"), named "", "dW" and "dx" (mounted as "qkv_proj": "qkv_proj dW").
  static ModuleReport report(int in_features, int out_features, bool with_bias, int64_t N);
  // Appends weight (and bias) as prefix + "weight" / "bias", in report's order.
  void append_params(const std::string& prefix, std::vector<ParamRef>& out);

  // False for a layer built with with_bias = false.
  bool has_bias() const { return bias.size() != 0; }

  int in_features, out_features;
  Mat weight;    // (out,in)
  RowVec bias;   // (out), or (0) without a bias
  Mat dweight;   // (out,in)
  RowVec dbias;  // same size as bias
};

}  // namespace attn
