// libFuzzer target: the safetensors reader (and through it the JSON reader) on arbitrary bytes.
// Every input must either parse or throw std::invalid_argument; nothing else (a crash, an
// over-read, UB, another exception type) is allowed. A file that parses must survive a
// write -> parse round trip unchanged: same metadata, names, dtypes, shapes and bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "attn/io/safetensors.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_safetensors: %s\n", what);
  std::abort();
}

void round_trip(const attn::SafetensorsFile& file) {
  std::vector<attn::TensorOut> out;
  for (const attn::TensorView& t : file.tensors)
    out.push_back({t.name, t.dtype, t.shape, t.data});
  const std::vector<uint8_t> bytes = attn::write_safetensors(out, file.metadata);
  const attn::SafetensorsFile again = attn::parse_safetensors(bytes.data(), bytes.size());
  if (again.metadata != file.metadata) fail("metadata changed in a round trip");
  if (again.tensors.size() != file.tensors.size()) fail("tensor count changed in a round trip");
  for (const attn::TensorView& t : file.tensors) {
    const attn::TensorView* u = again.find(t.name);
    if (!u) fail("a tensor vanished in a round trip");
    if (u->dtype != t.dtype || u->shape != t.shape || u->nbytes != t.nbytes ||
        (t.nbytes && std::memcmp(u->data, t.data, t.nbytes) != 0))
      fail("a tensor changed in a round trip");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::SafetensorsFile file;
  try {
    file = attn::parse_safetensors(data, size);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  for (const attn::TensorView& t : file.tensors) {
    if (t.numel < 0 || t.nbytes != size_t(t.numel) * attn::safetensors_dtype_size(t.dtype))
      fail("a view's nbytes does not match numel x dtype size");
    if (t.nbytes && (t.data < data || t.data + t.nbytes > data + size))
      fail("a view points outside the input");
    // The typed readers: either a copy or a clear error.
    try {
      if (t.dtype == "F32") {
        if (file.f32(t.name).size() != size_t(t.numel)) fail("f32() returned the wrong size");
      } else if (t.dtype == "I32" || t.dtype == "I64") {
        if (file.ids(t.name).size() != size_t(t.numel)) fail("ids() returned the wrong size");
      }
    } catch (const std::invalid_argument&) {
    }
  }
  round_trip(file);
  return 0;
}
