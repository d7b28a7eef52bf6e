// A strict JSON reader (RFC 8259) for safetensors headers, on nlohmann/json's parser, and a
// string quoter for writing them. Hostile input gets a one-line std::invalid_argument naming the
// byte offset; nothing is read past the end of the given text and nesting is bounded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::json {

struct Value {
  enum class Type { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  double number = 0.0;      // every Number
  bool is_int = false;      // the literal had no fraction/exponent and fits int64_t
  int64_t integer = 0;      // valid when is_int
  std::string string;       // String, UTF-8 with escapes decoded
  std::vector<Value> array;  // Array
  std::vector<std::pair<std::string, Value>> object;  // Object, in file order, keys unique

  // The member named key, or nullptr (also when this is not an object).
  const Value* find(std::string_view key) const;
  bool is_object() const { return type == Type::Object; }
  bool is_array() const { return type == Type::Array; }
  bool is_string() const { return type == Type::String; }
};

// Returns "object", "array", "string", "number", "true/false" or "null".
const char* type_name(Value::Type type);

constexpr int kDefaultMaxDepth = 64;
// Bounds memory: a Value is ~100 bytes, so a huge header of tiny values cannot blow up 20-fold.
constexpr size_t kDefaultMaxValues = size_t(1) << 20;

// Parses one JSON value; only whitespace may follow it. Rejects duplicate object keys,
// invalid UTF-8, unescaped control characters, lone surrogates, leading zeros, a byte order mark,
// numbers beyond a double, nesting deeper than max_depth and more than max_values values in all.
// Linear time (duplicate keys are found with a hash set). Errors: an attn::Error
// (std::invalid_argument) of kind Format, "invalid JSON at byte N: ...".
Value parse(std::string_view text, int max_depth = kDefaultMaxDepth,
            size_t max_values = kDefaultMaxValues);

// s as a JSON string literal with quotes; control characters become \u00XX escapes.
std::string quote(std::string_view s);

// s for an error message: quoted as above and cut to max_len bytes (with "..."), so a hostile
// name can never break the one-line rule.
std::string printable(std::string_view s, size_t max_len = 80);

}  // namespace attn::json
