// The safetensors format (https://huggingface.co/docs/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON header, then the raw little-endian tensor data.
// Header: {"__metadata__": {str: str}, name: {"dtype": "F32", "shape": [..],
// "data_offsets": [begin, end]}, ...}, offsets relative to the start of the data.
//
// The reader is written for hostile input: every failure is a one-line std::invalid_argument
// (an attn::Error of kind Format), and no byte outside the given buffer is ever read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn {

// Headers larger than this are refused before any parsing (and before any allocation).
constexpr uint64_t kMaxSafetensorsHeader = 100ull * 1024 * 1024;

// Bytes per element of a safetensors dtype name ("F32" -> 4), or 0 when the name is unknown.
size_t safetensors_dtype_size(const std::string& dtype);

// One tensor of a parsed file: a view into the caller's buffer (not owned, maybe unaligned).
struct TensorView {
  std::string name;
  std::string dtype;           // "F32", "I64", ...
  std::vector<int64_t> shape;  // () for a scalar
  int64_t numel = 0;           // product of shape, checked against overflow
  const uint8_t* data = nullptr;
  size_t nbytes = 0;           // numel * dtype size == data_offsets[1] - data_offsets[0]
};

// A parsed file. Views point into the buffer given to parse_safetensors, which must outlive it.
struct SafetensorsFile {
  std::map<std::string, std::string> metadata;  // __metadata__, empty when absent
  std::vector<TensorView> tensors;              // in header order

  const TensorView* find(const std::string& name) const;  // nullptr when absent
  // The named tensor; throws an Error of kind Format, "<what>: missing tensor "name"", when
  // absent.
  const TensorView& get(const std::string& name, const std::string& what = "file") const;

  // Copies of the data, after checking the dtype (and the shape, when given). Throw an Error
  // of kind Format naming the tensor and what was expected.
  std::vector<float> f32(const std::string& name, const std::vector<int64_t>* shape = nullptr,
                         const std::string& what = "file") const;
  // I32 or I64 tensor as int32 (an I64 value outside int32 is an error naming it).
  std::vector<int32_t> ids(const std::string& name, const std::string& what = "file") const;
};

// Parses and validates the whole layout: header length within the file and <= 100 MB, JSON
// object header, known dtypes, non-negative shapes without overflow, data_offsets in range,
// matching shape x dtype size, and together tiling the data exactly (no overlap, no gap, no
// trailing bytes), as the reference implementation requires.
SafetensorsFile parse_safetensors(const uint8_t* data, size_t size);

// One tensor to write; data holds product(shape) elements of dtype, little-endian.
struct TensorOut {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  const void* data;
};

// A safetensors file: tensors sorted by name, data in that order, the header JSON without
// spaces and padded with spaces so that the data starts at a multiple of 8 bytes. Throws (kind
// Input) on a duplicate or reserved name, an unknown dtype or a negative dimension.
std::vector<uint8_t> write_safetensors(std::vector<TensorOut> tensors,
                                       const std::map<std::string, std::string>& metadata);

// Shape as "(2,3)" for messages.
std::string shape_str(const std::vector<int64_t>& shape);

}  // namespace attn
