#include "attn/io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "attn/base/json.h"
#include "attn/base/tensor.h"

// Tensor data is copied with memcpy, so the host must be little-endian like the format
// (x86-64, AArch64 and WebAssembly all are).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors I/O assumes little-endian");

namespace attn {

namespace {

using json::printable;

constexpr size_t kMaxRank = 16;

// A malformed file.
template <typename... Args>
[[noreturn]] void fail(const Args&... args) {
  throw Error(ErrorKind::Format, "", str_cat("safetensors: ", args...));
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A JSON integer >= 0 (also accepts 12.0-free integers only), else fail naming what.
uint64_t non_negative_int(const json::Value& v, const std::string& what) {
  if (v.type != json::Value::Type::Number || !v.is_int || v.integer < 0)
    fail(what, " must be a non-negative integer");
  return static_cast<uint64_t>(v.integer);
}

TensorView parse_tensor_entry(const std::string& name, const json::Value& entry,
                              uint64_t data_size, const uint8_t* data_begin,
                              std::pair<uint64_t, uint64_t>& offsets) {
  const std::string who = str_cat("tensor ", printable(name));
  if (!entry.is_object())
    fail(who, ": entry must be an object, got ", json::type_name(entry.type));
  for (const auto& kv : entry.object)
    if (kv.first != "dtype" && kv.first != "shape" && kv.first != "data_offsets")
      fail(who, ": unexpected field ", printable(kv.first));
  const json::Value* dtype = entry.find("dtype");
  const json::Value* shape = entry.find("shape");
  const json::Value* offs = entry.find("data_offsets");
  if (!dtype) fail(who, ": missing \"dtype\"");
  if (!shape) fail(who, ": missing \"shape\"");
  if (!offs) fail(who, ": missing \"data_offsets\"");

  TensorView t;
  t.name = name;
  if (!dtype->is_string()) fail(who, ": dtype must be a string");
  t.dtype = dtype->string;
  const size_t elem = safetensors_dtype_size(t.dtype);
  if (elem == 0) fail(who, ": unknown dtype ", printable(t.dtype));

  if (!shape->is_array()) fail(who, ": shape must be an array");
  if (shape->array.size() > kMaxRank)
    fail(who, ": shape has ", shape->array.size(), " dimensions, more than ", kMaxRank);
  // numel * elem must fit in the data section, which bounds every product below 2^64.
  uint64_t numel = 1;
  bool too_big = false;
  for (const json::Value& d : shape->array) {
    const uint64_t dim = non_negative_int(d, who + ": every shape dimension");
    t.shape.push_back(static_cast<int64_t>(dim));
    if (dim == 0) {
      numel = 0;
    } else if (!too_big) {
      if (numel > std::numeric_limits<uint64_t>::max() / dim) too_big = true;
      else numel *= dim;
    }
  }
  // A zero dimension anywhere makes the tensor empty, whatever the other dimensions are.
  if (numel != 0 && (too_big || numel > data_size / elem))
    fail(who, ": shape ", shape_str(t.shape), " x ", t.dtype, " needs more bytes than the ",
         data_size, " bytes of data");
  t.numel = static_cast<int64_t>(numel);
  t.nbytes = static_cast<size_t>(numel * elem);

  if (!offs->is_array() || offs->array.size() != 2)
    fail(who, ": data_offsets must be an array of 2 integers");
  const uint64_t begin = non_negative_int(offs->array[0], who + ": data_offsets[0]");
  const uint64_t end = non_negative_int(offs->array[1], who + ": data_offsets[1]");
  if (begin > end || end > data_size)
    fail(who, ": data_offsets [", begin, ", ", end, "] out of range (data section is ",
         data_size, " bytes)");
  if (end - begin != t.nbytes)
    fail(who, ": data_offsets [", begin, ", ", end, "] span ", end - begin,
         " bytes but shape ", shape_str(t.shape), " x ", t.dtype, " needs ", t.nbytes);
  t.data = data_begin + begin;
  offsets = {begin, end};
  return t;
}

}  // namespace

size_t safetensors_dtype_size(const std::string& dtype) {
  static const std::pair<const char*, size_t> kSizes[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8},
  };
  for (const auto& [name, size] : kSizes)
    if (dtype == name) return size;
  return 0;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += str_cat(i ? "," : "", shape[i]);
  return s + ")";
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
  for (const TensorView& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const TensorView& SafetensorsFile::get(const std::string& name, const std::string& what) const {
  const TensorView* t = find(name);
  require_format(t != nullptr, what, ": missing tensor ", printable(name));
  return *t;
}

std::vector<float> SafetensorsFile::f32(const std::string& name,
                                        const std::vector<int64_t>* shape,
                                        const std::string& what) const {
  const TensorView& t = get(name, what);
  require_format(t.dtype == "F32", what, ": tensor ", printable(name), " has dtype ", t.dtype,
                 ", expected F32");
  require_format(!shape || t.shape == *shape, what, ": tensor ", printable(name), " has shape ",
                 shape_str(t.shape), ", expected ", shape ? shape_str(*shape) : "");
  std::vector<float> out(static_cast<size_t>(t.numel));
  if (t.nbytes) std::memcpy(out.data(), t.data, t.nbytes);
  return out;
}

std::vector<int32_t> SafetensorsFile::ids(const std::string& name, const std::string& what) const {
  const TensorView& t = get(name, what);
  std::vector<int32_t> out(static_cast<size_t>(t.numel));
  if (t.dtype == "I32") {
    if (t.nbytes) std::memcpy(out.data(), t.data, t.nbytes);
  } else if (t.dtype == "I64") {
    for (size_t i = 0; i < out.size(); ++i) {
      int64_t v;
      std::memcpy(&v, t.data + 8 * i, 8);
      require_format(
          v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(),
          what, ": tensor ", printable(name), " value ", v, " at index ", i,
          " does not fit in int32");
      out[i] = static_cast<int32_t>(v);
    }
  } else {
    throw Error(ErrorKind::Format, "",
                str_cat(what, ": tensor ", printable(name), " has dtype ", t.dtype,
                        ", expected I64 or I32"));
  }
  return out;
}

SafetensorsFile parse_safetensors(const uint8_t* data, size_t size) {
  if (size == 0) fail("the file is empty");
  if (size < 8) fail("the file is truncated: ", size, " bytes, less than the 8-byte header length");
  const uint64_t n = read_u64_le(data);
  if (n > kMaxSafetensorsHeader)
    fail("header length ", n, " is over the limit of ", kMaxSafetensorsHeader, " bytes");
  if (n > size - 8)
    fail("header length ", n, " runs past the end of the file (", size - 8,
         " bytes after the length; the file is truncated)");
  if (n == 0) fail("the header is empty");
  const std::string_view header(reinterpret_cast<const char*>(data + 8), static_cast<size_t>(n));
  if (header[0] != '{') fail("the header does not start with '{'");

  json::Value root;
  try {
    root = json::parse(header);
  } catch (const std::invalid_argument& e) {
    fail("header: ", e.what());
  }
  if (!root.is_object()) fail("the header is not a JSON object");

  const uint8_t* data_begin = data + 8 + n;
  const uint64_t data_size = size - 8 - n;
  SafetensorsFile file;
  std::vector<std::pair<uint64_t, uint64_t>> offsets;
  for (const auto& [key, value] : root.object) {
    if (key == "__metadata__") {
      if (!value.is_object()) fail("__metadata__ must be an object of strings");
      for (const auto& [mk, mv] : value.object) {
        if (!mv.is_string())
          fail("__metadata__ value of ", printable(mk), " must be a string, got ",
               json::type_name(mv.type));
        file.metadata[mk] = mv.string;
      }
      continue;
    }
    std::pair<uint64_t, uint64_t> off;
    file.tensors.push_back(parse_tensor_entry(key, value, data_size, data_begin, off));
    offsets.push_back(off);
  }

  // The tensors must tile [0, data_size) exactly: first no overlap, then no gap or tail.
  std::vector<size_t> order(offsets.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
  for (size_t k = 1; k < order.size(); ++k) {
    const size_t i = order[k], p = order[k - 1];
    if (offsets[i].first < offsets[p].second)
      fail("tensor ", printable(file.tensors[i].name), " data_offsets [", offsets[i].first, ", ",
           offsets[i].second, "] overlap tensor ", printable(file.tensors[p].name), " [",
           offsets[p].first, ", ", offsets[p].second, "]");
  }
  uint64_t pos = 0;
  for (size_t i : order) {
    if (offsets[i].first != pos)
      fail("tensor ", printable(file.tensors[i].name), " starts at byte ", offsets[i].first,
           ", leaving a gap after byte ", pos, " of the data section");
    pos = offsets[i].second;
  }
  if (pos != data_size)
    fail("the data section has ", data_size - pos, " bytes after the last tensor (", data_size,
         " bytes, tensors cover ", pos, ")");
  return file;
}

std::vector<uint8_t> write_safetensors(std::vector<TensorOut> tensors,
                                       const std::map<std::string, std::string>& metadata) {
  std::sort(tensors.begin(), tensors.end(),
            [](const TensorOut& a, const TensorOut& b) { return a.name < b.name; });
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      header += str_cat(first ? "" : ",", json::quote(k), ":", json::quote(v));
      first = false;
    }
    header += "}";
  }
  uint64_t offset = 0;
  std::vector<size_t> nbytes;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorOut& t = tensors[i];
    require(t.name != "__metadata__", "safetensors: tensor name \"__metadata__\" is reserved");
    require(i == 0 || tensors[i - 1].name != t.name, "safetensors: duplicate tensor name ",
            printable(t.name));
    const size_t elem = safetensors_dtype_size(t.dtype);
    require(elem != 0, "safetensors: unknown dtype ", printable(t.dtype));
    uint64_t numel = 1;
    std::string dims;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      require(t.shape[d] >= 0, "safetensors: tensor ", printable(t.name), " has shape ",
              shape_str(t.shape));
      numel *= static_cast<uint64_t>(t.shape[d]);
      dims += str_cat(d ? "," : "", t.shape[d]);
    }
    nbytes.push_back(static_cast<size_t>(numel * elem));
    header += str_cat(header.size() > 1 ? "," : "", json::quote(t.name), ":{\"dtype\":\"",
                      t.dtype, "\",\"shape\":[", dims, "],\"data_offsets\":[", offset, ",",
                      offset + nbytes.back(), "]}");
    offset += nbytes.back();
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');

  std::vector<uint8_t> out(8 + header.size() + offset);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>(n >> (8 * i));
  std::memcpy(out.data() + 8, header.data(), header.size());
  size_t pos = 8 + header.size();
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (nbytes[i]) std::memcpy(out.data() + pos, tensors[i].data, nbytes[i]);
    pos += nbytes[i];
  }
  return out;
}

}  // namespace attn
