// The safetensors reader and writer: layout, round trip, and one test per hostile-file case
// (each must be a one-line std::invalid_argument, never a crash or a read past the buffer).
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "attn/base/rng.h"
#include "attn/io/safetensors.h"

using attn::parse_safetensors;
using attn::SafetensorsFile;
using attn::TensorOut;
using attn::write_safetensors;
using Catch::Matchers::Contains;

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint64_t kHeaderSize = ~uint64_t(0);

// [u64 LE n][header][data]. n defaults to header.size().
Bytes make_file(const std::string& header, const Bytes& data = {}, uint64_t n = kHeaderSize) {
  const uint64_t len = n == kHeaderSize ? header.size() : n;
  Bytes out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(len >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// The one-line message of the std::invalid_argument that parsing bytes throws.
std::string header_parse_error(const Bytes& bytes) {
  try {
    // parse from an exact-size heap copy, so a sanitizer build flags any over-read
    const Bytes exact(bytes);
    parse_safetensors(exact.data(), exact.size());
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    CHECK_THAT(msg, Contains("safetensors"));
    return msg;
  }
  FAIL("parse_safetensors accepted the file");
  return "";
}

// A valid two-tensor file: "a" F32 (2,3) = 0..5, "b" I64 (2) = {7, -1}.
Bytes valid_file() {
  const float a[6] = {0, 1, 2, 3, 4, 5};
  const int64_t b[2] = {7, -1};
  return write_safetensors({{"a", "F32", {2, 3}, a}, {"b", "I64", {2}, b}}, {{"k", "v"}});
}

Bytes f32_bytes(std::initializer_list<float> values) {
  Bytes out(values.size() * 4);
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

}  // namespace

TEST_CASE("safetensors: writer layout is deterministic, sorted, compact and 8-byte aligned") {
  const Bytes bytes = valid_file();
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[static_cast<size_t>(i)];
  CHECK(n % 8 == 0);
  const std::string header(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(n));
  // {"__metadata__":...,"a":...,"b":...} then spaces to the 8-byte boundary
  const std::string json =
      R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("b":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})";
  CHECK(header.substr(0, json.size()) == json);
  CHECK(header.find_first_not_of(' ', json.size()) == std::string::npos);
  CHECK(bytes.size() == 8 + n + 40);
  CHECK(valid_file() == bytes);

  // Input order does not matter: tensors are sorted by name.
  const float x = 1.0f, y = 2.0f;
  CHECK(write_safetensors({{"y", "F32", {1}, &y}, {"x", "F32", {1}, &x}}, {}) ==
        write_safetensors({{"x", "F32", {1}, &x}, {"y", "F32", {1}, &y}}, {}));
}

TEST_CASE("safetensors: round trip of F32, I32 and I64, scalars and empty tensors") {
  const Bytes bytes = valid_file();
  const SafetensorsFile f = parse_safetensors(bytes.data(), bytes.size());
  CHECK(f.metadata.at("k") == "v");
  REQUIRE(f.tensors.size() == 2);
  const std::vector<int64_t> shape = {2, 3};
  CHECK(f.f32("a", &shape) == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(f.ids("b") == std::vector<int32_t>{7, -1});
  CHECK(f.get("a").numel == 6);
  CHECK(f.find("zz") == nullptr);

  const int32_t i32[3] = {1, -2, 3};
  const float scalar = 4.5f;
  const Bytes more = write_safetensors(
      {{"i", "I32", {3}, i32}, {"s", "F32", {}, &scalar}, {"e", "F32", {0, 5}, nullptr}}, {});
  const SafetensorsFile g = parse_safetensors(more.data(), more.size());
  CHECK(g.metadata.empty());
  CHECK(g.ids("i") == std::vector<int32_t>{1, -2, 3});
  CHECK(g.f32("s") == std::vector<float>{4.5f});
  CHECK(g.get("s").shape.empty());
  CHECK(g.f32("e").empty());
}

TEST_CASE("safetensors: typed getters check dtype, shape and int32 range") {
  const Bytes bytes = valid_file();
  const SafetensorsFile f = parse_safetensors(bytes.data(), bytes.size());
  const std::vector<int64_t> wrong = {3, 2};
  CHECK_THROWS_WITH(f.f32("a", &wrong), Contains("has shape (2,3), expected (3,2)"));
  CHECK_THROWS_WITH(f.f32("b"), Contains("has dtype I64, expected F32"));
  CHECK_THROWS_WITH(f.ids("a"), Contains("has dtype F32, expected I64 or I32"));
  CHECK_THROWS_WITH(f.get("zz", "input"), Contains("input: missing tensor \"zz\""));

  const int64_t big[2] = {1, int64_t(1) << 40};
  const Bytes b2 = write_safetensors({{"ids", "I64", {2}, big}}, {});
  const SafetensorsFile g = parse_safetensors(b2.data(), b2.size());
  CHECK_THROWS_WITH(g.ids("ids"), Contains("1099511627776 at index 1 does not fit in int32"));
}

TEST_CASE("safetensors: the writer refuses bad tensors") {
  const float x = 0;
  CHECK_THROWS_AS(write_safetensors({{"a", "F32", {1}, &x}, {"a", "F32", {1}, &x}}, {}),
                  std::invalid_argument);
  CHECK_THROWS_AS(write_safetensors({{"__metadata__", "F32", {1}, &x}}, {}), std::invalid_argument);
  CHECK_THROWS_AS(write_safetensors({{"a", "Q4", {1}, &x}}, {}), std::invalid_argument);
  CHECK_THROWS_AS(write_safetensors({{"a", "F32", {-1}, &x}}, {}), std::invalid_argument);
}

TEST_CASE("safetensors hostile: empty file") {
  CHECK_THAT(header_parse_error({}), Contains("empty"));
}

TEST_CASE("safetensors hostile: truncated file") {
  const Bytes good = valid_file();
  CHECK_THAT(header_parse_error(Bytes(good.begin(), good.begin() + 5)), Contains("truncated"));
  // Cut inside the header: the length now runs past the end.
  CHECK_THAT(header_parse_error(Bytes(good.begin(), good.begin() + 20)), Contains("past the end"));
  // Cut inside the data: the offsets no longer fit.
  CHECK_THAT(header_parse_error(Bytes(good.begin(), good.end() - 1)), Contains("out of range"));
  // Every prefix is rejected, and none is read past its end.
  for (size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    const Bytes prefix(good.begin(), good.begin() + static_cast<long>(n));
    CHECK_THROWS_AS(parse_safetensors(prefix.data(), prefix.size()), std::invalid_argument);
  }
}

TEST_CASE("safetensors hostile: header length past the end of the file") {
  CHECK_THAT(header_parse_error(make_file("{}", {}, 3)), Contains("header length 3 runs past the end"));
  CHECK_THAT(header_parse_error(make_file("{}", {}, kHeaderSize - 1)), Contains("over the limit"));
}

TEST_CASE("safetensors hostile: header length over 100 MB") {
  // Refused from the length alone: no 100 MB buffer is needed to trigger it.
  CHECK_THAT(header_parse_error(make_file("{}", {}, 100 * 1024 * 1024 + 1)),
             Contains("header length 104857601 is over the limit of 104857600"));
}

TEST_CASE("safetensors hostile: invalid JSON") {
  CHECK_THAT(header_parse_error(make_file("{\"a\":")), Contains("invalid JSON at byte 5"));
  CHECK_THAT(header_parse_error(make_file("{\"a\":{\"dtype\":\"F32\",}}")), Contains("invalid JSON"));
  CHECK_THAT(header_parse_error(make_file("{} trailing")), Contains("invalid JSON"));
  CHECK_THAT(header_parse_error(make_file("")), Contains("header is empty"));
  CHECK_THAT(header_parse_error(make_file("{\"\xFF\":1}")), Contains("invalid UTF-8"));
  CHECK_THAT(header_parse_error(make_file(std::string(1, '{') + std::string(1000, '['))),
             Contains("invalid JSON"));
}

TEST_CASE("safetensors hostile: header that is not an object") {
  CHECK_THAT(header_parse_error(make_file("[1,2]")), Contains("does not start with '{'"));
  CHECK_THAT(header_parse_error(make_file("  {}")), Contains("does not start with '{'"));
  CHECK_THAT(header_parse_error(make_file("{\"a\":5}")), Contains("entry must be an object"));
  CHECK_THAT(header_parse_error(make_file("{\"__metadata__\":[]}")), Contains("__metadata__ must be"));
  CHECK_THAT(header_parse_error(make_file("{\"__metadata__\":{\"n\":4}}")),
             Contains("must be a string"));
}

TEST_CASE("safetensors hostile: duplicate tensor names") {
  const std::string e = R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  CHECK_THAT(header_parse_error(make_file("{\"a\":" + e + ",\"a\":" + e + "}", f32_bytes({1}))),
             Contains("duplicate key \"a\""));
}

TEST_CASE("safetensors hostile: unknown dtype") {
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})",
                                   f32_bytes({1}))),
             Contains("unknown dtype \"F33\""));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})",
                                   f32_bytes({1}))),
             Contains("dtype must be a string"));
}

TEST_CASE("safetensors hostile: wrong dtype for the reader") {
  // A known dtype the caller did not ask for: F64 where F32 is needed.
  const double d[1] = {1.0};
  const Bytes b = write_safetensors({{"a", "F64", {1}, d}}, {});
  const SafetensorsFile f = parse_safetensors(b.data(), b.size());
  CHECK_THROWS_WITH(f.f32("a"), Contains("has dtype F64, expected F32"));
  CHECK_THROWS_WITH(f.ids("a"), Contains("has dtype F64, expected I64 or I32"));
}

TEST_CASE("safetensors hostile: missing or malformed fields") {
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", f32_bytes({1}))),
             Contains("missing \"dtype\""));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", f32_bytes({1}))),
             Contains("missing \"shape\""));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1]}})", f32_bytes({1}))),
             Contains("missing \"data_offsets\""));
  CHECK_THAT(header_parse_error(make_file(
                 R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", f32_bytes({1}))),
             Contains("unexpected field \"x\""));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":1,"data_offsets":[0,4]}})",
                                   f32_bytes({1}))),
             Contains("shape must be an array"));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})",
                                   f32_bytes({1}))),
             Contains("array of 2 integers"));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4.0]}})",
                                   f32_bytes({1}))),
             Contains("non-negative integer"));
}

TEST_CASE("safetensors hostile: negative or fractional shape dimensions") {
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
                                   f32_bytes({1}))),
             Contains("every shape dimension must be a non-negative integer"));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})",
                                   f32_bytes({1}))),
             Contains("non-negative integer"));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}})",
                                   f32_bytes({1}))),
             Contains("17 dimensions"));
}

TEST_CASE("safetensors hostile: huge shape dimensions whose product overflows") {
  // 2^32 * 2^32 = 2^64 wraps to 0 in uint64: must still be refused, not read as empty.
  CHECK_THAT(header_parse_error(make_file(
                 R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})")),
             Contains("needs more bytes than"));
  CHECK_THAT(header_parse_error(make_file(
                 R"({"a":{"dtype":"F32","shape":[9223372036854775807,3],"data_offsets":[0,4]}})",
                 f32_bytes({1}))),
             Contains("needs more bytes than"));
  // numel * 8 overflows though numel alone fits.
  CHECK_THAT(header_parse_error(make_file(
                 R"({"a":{"dtype":"I64","shape":[2305843009213693952],"data_offsets":[0,0]}})")),
             Contains("needs more bytes than"));
  CHECK_THAT(header_parse_error(make_file(
                 R"({"a":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,4]}})",
                 f32_bytes({1}))),
             Contains("non-negative integer"));
  // A zero dimension makes the tensor empty whatever the others are.
  const Bytes ok = make_file(
      R"({"a":{"dtype":"F32","shape":[0,9223372036854775807],"data_offsets":[0,0]}})");
  CHECK(parse_safetensors(ok.data(), ok.size()).get("a").numel == 0);
}

TEST_CASE("safetensors hostile: data_offsets out of range") {
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                   f32_bytes({1}))),
             Contains("data_offsets [4, 8] out of range (data section is 4 bytes)"));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})",
                                   f32_bytes({1}))),
             Contains("out of range"));
  CHECK_THAT(header_parse_error(make_file(
                 R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[18446744073709551615,18446744073709551615]}})")),
             Contains("non-negative integer"));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})",
                                   f32_bytes({1}))),
             Contains("non-negative integer"));
}

TEST_CASE("safetensors hostile: overlapping data_offsets") {
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                   R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                   f32_bytes({1, 2}))),
             Contains("overlap"));
  // Same range twice.
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                   R"("b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                   f32_bytes({1}))),
             Contains("overlap"));
}

TEST_CASE("safetensors hostile: data_offsets disagreeing with shape x dtype size") {
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})",
                                   f32_bytes({1, 2}))),
             Contains("span 4 bytes but shape (2) x F32 needs 8"));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"I64","shape":[1],"data_offsets":[0,4]}})",
                                   f32_bytes({1}))),
             Contains("needs"));
}

TEST_CASE("safetensors hostile: gaps and trailing bytes in the data section") {
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                   f32_bytes({1, 2}))),
             Contains("gap"));
  CHECK_THAT(header_parse_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                   f32_bytes({1, 2}))),
             Contains("4 bytes after the last tensor"));
}

TEST_CASE("safetensors hostile: random corruption throws invalid_argument or parses, never crashes") {
  const Bytes good = valid_file();
  attn::Rng rng(123);
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Bytes b = good;
    const int flips = 1 + static_cast<int>(rng.below(4));
    for (int k = 0; k < flips; ++k)
      b[rng.below(static_cast<uint32_t>(b.size()))] = static_cast<uint8_t>(rng.below(256));
    try {
      const SafetensorsFile f = parse_safetensors(b.data(), b.size());
      // Whatever parsed must lie inside the buffer.
      for (const auto& t : f.tensors) {
        CHECK(t.data >= b.data() + 8);
        CHECK(t.data + t.nbytes <= b.data() + b.size());
      }
    } catch (const std::invalid_argument&) {
      ++rejected;
    }
  }
  CHECK(rejected > 0);
}

TEST_CASE("safetensors hostile: a header of millions of tiny values is refused early") {
  // ~2 MB of "0," would otherwise become ~100 MB of parsed values.
  std::string header = "{\"__metadata__\":{\"a\":[";
  for (int i = 0; i < 1100000; ++i) header += "0,";
  header.back() = ']';
  header += "}}";
  CHECK_THAT(header_parse_error(make_file(header)), Contains("more than 1048576 values"));
}
