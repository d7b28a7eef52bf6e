// What a module says about itself for a batch: its named tensors (PyTorch state-dict names and
// shapes, in the state dict's order), its parameter count, the floats its forward caches, and the
// matrix products its forward and backward run (their FLOPs). Every module in nn/ has a static
// report(...) taking what its constructor takes and the batch; a composite mounts its parts'
// reports under their prefixes (add). Every count of the architecture (the state dict, the
// parameters, a training step's FLOPs and products, the state's size) is read from these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// One tensor of a state dict: its name and its shape, (out, in) for a weight, (out) for a bias.
struct TensorSpec {
  std::string name;            // e.g. "attn.qkv_proj.weight"
  std::vector<int64_t> shape;
  int64_t numel() const;
};

// One matrix product C (m,n) = A B over the inner dimension k, as the kernels run it: its layout
// ("nn", "nt", "tn": which operand is transposed, kernels.h), and how many times a step runs it.
struct ProductSpec {
  std::string name;
  std::string layout;
  int m = 0, n = 0, k = 0;
  int calls = 0;
  double flops() const { return 2.0 * m * n * k * calls; }  // the full product's
};

struct ModuleReport {
  // The parameters in state-dict order. The first `own` are the module's own (a layer's
  // diff_lambda), which PyTorch lists before its submodules'.
  std::vector<TensorSpec> tensors;
  size_t own = 0;
  // Floats of the caches the forward keeps for the batch (training, the plain path, no dropout),
  // its submodules' included. A module's output belongs to whoever holds it.
  int64_t activations = 0;
  // The matrix products of the forward, in the order they run, and of the backward, in the order
  // it runs them (the reverse of the forward's steps).
  std::vector<ProductSpec> forward, backward;

  int64_t param_count() const;  // the sum of the tensors' sizes
  double flops() const;         // the forward's and the backward's products

  // A parameter of the module itself (before any submodule's).
  void own_tensor(const std::string& name, std::vector<int64_t> shape);
  // A step of the module's own with its products: the forward's appended, the backward's put
  // before every later step's (they run first in the backward).
  void step(std::vector<ProductSpec> forward_products, std::vector<ProductSpec> backward_products);
  // sub mounted at prefix ("qkv_proj."), as the module's next step: its tensors' names gain the
  // prefix, and so do its products' names ("qkv_proj dW") unless label_products is false (a stack
  // of layers, whose products repeat). An empty prefix flattens sub into this module: its own
  // tensors join this module's own.
  void add(const ModuleReport& sub, const std::string& prefix, bool label_products = true);
};

}  // namespace attn
