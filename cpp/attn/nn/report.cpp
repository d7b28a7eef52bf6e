#include "attn/nn/report.h"

#include <iterator>

namespace attn {

int64_t TensorSpec::numel() const {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return n;
}

int64_t ModuleReport::param_count() const {
  int64_t n = 0;
  for (const TensorSpec& t : tensors) n += t.numel();
  return n;
}

double ModuleReport::flops() const {
  double f = 0.0;
  for (const ProductSpec& p : forward) f += p.flops();
  for (const ProductSpec& p : backward) f += p.flops();
  return f;
}

void ModuleReport::own_tensor(const std::string& name, std::vector<int64_t> shape) {
  tensors.insert(tensors.begin() + std::ptrdiff_t(own), TensorSpec{name, std::move(shape)});
  ++own;
}

void ModuleReport::step(std::vector<ProductSpec> f, std::vector<ProductSpec> b) {
  forward.insert(forward.end(), f.begin(), f.end());
  backward.insert(backward.begin(), b.begin(), b.end());
}

void ModuleReport::add(const ModuleReport& sub, const std::string& prefix, bool label_products) {
  // "ffn.up." labels products "ffn up": the prefix's dots as spaces, the last one dropped.
  std::string label = prefix;
  if (!label.empty() && label.back() == '.') label.pop_back();
  for (char& ch : label)
    if (ch == '.') ch = ' ';
  auto labelled = [&](std::vector<ProductSpec> products) {
    if (!label_products || label.empty()) return products;
    for (ProductSpec& p : products) p.name = p.name.empty() ? label : label + " " + p.name;
    return products;
  };
  for (size_t i = 0; i < sub.tensors.size(); ++i) {
    TensorSpec t{prefix + sub.tensors[i].name, sub.tensors[i].shape};
    if (prefix.empty() && i < sub.own) own_tensor(t.name, t.shape);
    else tensors.push_back(std::move(t));
  }
  activations += sub.activations;
  step(labelled(sub.forward), labelled(sub.backward));
}

}  // namespace attn
