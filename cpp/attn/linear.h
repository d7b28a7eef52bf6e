// Fully connected layer in PyTorch's layout: weight (out,in), bias (out).
#pragma once

#include "attn/rng.h"
#include "attn/tensor.h"

namespace attn {

class Linear {
 public:
  // Init as torch.nn.Linear: weight, then bias, each ~ U(-1/sqrt(in), 1/sqrt(in)).
  Linear(int in_features, int out_features, Rng& rng);

  // x (N,in) -> y (N,out) = x W^T + b.
  void forward(ConstMatRef x, MatRef y) const;

  // Given the forward's x and dy (N,out): overwrites dweight, dbias; writes dx (N,in).
  void backward(ConstMatRef x, ConstMatRef dy, MatRef dx);

  int in_features, out_features;
  Mat weight;    // (out,in)
  RowVec bias;   // (out)
  Mat dweight;   // (out,in)
  RowVec dbias;  // (out)
};

}  // namespace attn
