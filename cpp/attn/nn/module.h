// What every nn module says about itself, so that a model's size, its activations and its FLOPs
// are sums over its modules, each fact computed once, by the module that has it.
//
// The convention each module (Linear, Norm, FeedForward, the embeddings, the attention pieces)
// follows:
//   void append_params(const std::string& prefix, std::vector<ParamRef>& out);
//       its named tensors under prefix, in init order (names and shapes are the state dict's);
//   int64_t param_count() const;
//       the floats of those tensors;
//   ModuleCost cost(<the batch shape it runs on>) const;
//       one forward and its backward over that batch: cost(N) for a row-wise module over N rows,
//       cost(B, T) for self-attention, cost(B, T, S) for cross-attention (S source positions).
#pragma once

#include <cstdint>

namespace attn {

// One forward pass of a module over a batch and the backward that follows it. A multiply-add
// counts as 2 FLOPs. The backward is reported on its own: it is not always twice the forward (an
// embedding's is a scatter-add, a causal map skips the hidden triangle).
struct ModuleCost {
  int64_t forward_flops = 0;
  int64_t backward_flops = 0;
  int64_t activation_floats = 0;  // floats the forward keeps for the backward
  ModuleCost& operator+=(const ModuleCost& o) {
    forward_flops += o.forward_flops;
    backward_flops += o.backward_flops;
    activation_floats += o.activation_floats;
    return *this;
  }
};

}  // namespace attn
