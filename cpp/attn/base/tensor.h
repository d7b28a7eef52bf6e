// Shared types and argument checks for the attention core.
//
// Shape legend, used in every comment of this library:
//   B batch, T sequence length (<= C), C max context length, D d_model,
//   H heads, Dh = D / H, V vocabulary, N = B*T rows of an activation matrix.
// Activations are row-major (N, D) matrices; per-head q/k/v are strided views
// into the fused (N, 3D) projection.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "attn/base/error.h"

namespace attn {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>;
using IntMat = Eigen::Matrix<int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Views that accept a whole matrix, a block, or a strided map without copying.
using MatRef = Eigen::Ref<Mat, 0, Eigen::OuterStride<>>;
using ConstMatRef = Eigen::Ref<const Mat, 0, Eigen::OuterStride<>>;
using MatMap = Eigen::Map<Mat, 0, Eigen::OuterStride<>>;
using ConstMatMap = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;

namespace detail {
// Appends one value as an std::ostream with default flags writes it: numbers as printf's %d and %g
// (6 significant digits), bool as 1 or 0, characters as themselves. Without iostreams, whose
// locale machinery was about a tenth of the wasm module.
inline void append(std::string& out, std::string_view s) { out += s; }
inline void append(std::string& out, const char* s) { out += s; }
inline void append(std::string& out, char c) { out += c; }
inline void append(std::string& out, signed char c) { out += char(c); }
inline void append(std::string& out, unsigned char c) { out += char(c); }
inline void append(std::string& out, bool b) { out += b ? '1' : '0'; }
void append(std::string& out, double x);
inline void append(std::string& out, float x) { append(out, double(x)); }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
void append(std::string& out, T x) {
  out += std::to_string(x);
}
}  // namespace detail

// Concatenates its arguments, each written as operator<< writes it, into one string.
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::string out;
  (detail::append(out, args), ...);
  return out;
}

// Checks that throw an attn::Error (a std::invalid_argument) with the concatenated message when
// cond is false. require is for call arguments (kind Input); the others name their kind.
template <typename... Args>
void require(bool cond, const Args&... args) {
  if (!cond) throw Error(ErrorKind::Input, "", str_cat(args...));
}

// A config value; key is its Trainer config key ("d_model", snake_case), or "" for a value that
// is no config key.
template <typename... Args>
void require_config(bool cond, const char* key, const Args&... args) {
  if (!cond) throw Error(ErrorKind::Config, key, str_cat(args...));
}

// The contents of a safetensors, JSON or weights file.
template <typename... Args>
void require_format(bool cond, const Args&... args) {
  if (!cond) throw Error(ErrorKind::Format, "", str_cat(args...));
}

// A call that needs an earlier one first (e.g. a forward pass).
template <typename... Args>
void require_state(bool cond, const Args&... args) {
  if (!cond) throw Error(ErrorKind::State, "", str_cat(args...));
}

// A named parameter: its value, its gradient (same shape), and its PyTorch shape.
struct ParamRef {
  std::string name;            // PyTorch state-dict name, e.g. "attn.qkv_proj.weight"
  std::vector<int64_t> shape;  // (out, in) for a weight, (out) for a bias
  float* value;                // contiguous, row-major, product(shape) floats
  float* grad;                 // same layout as value
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
};

}  // namespace attn
