#include "attn/json.h"

#include <cstdlib>
#include <stdexcept>
#include <unordered_set>

#include "attn/tensor.h"

namespace attn::json {

const Value* Value::find(std::string_view key) const {
  if (type != Type::Object) return nullptr;
  for (const auto& kv : object)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

const char* type_name(Value::Type type) {
  switch (type) {
    case Value::Type::Null: return "null";
    case Value::Type::Bool: return "true/false";
    case Value::Type::Number: return "number";
    case Value::Type::String: return "string";
    case Value::Type::Array: return "array";
    case Value::Type::Object: return "object";
  }
  return "?";
}

namespace {

// Recursive descent over [p, end). Every read checks the bound first.
class Parser {
 public:
  Parser(std::string_view text, int max_depth, size_t max_values)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()),
        max_depth_(max_depth), max_values_(max_values) {}

  Value parse_document() {
    skip_ws();
    Value v = parse_value(0);
    skip_ws();
    if (p_ != end_) fail("unexpected ", describe(), " after the value");
    return v;
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) const {
    throw Error(ErrorKind::Format, "",
                str_cat("invalid JSON at byte ", p_ - begin_, ": ", args...));
  }

  // What is at p_, for messages: "end of input" or the character, printable.
  std::string describe() const {
    if (p_ == end_) return "end of input";
    const unsigned char c = static_cast<unsigned char>(*p_);
    if (c >= 0x20 && c < 0x7f) return str_cat("'", static_cast<char>(c), "'");
    static const char* hex = "0123456789abcdef";
    return str_cat("byte 0x", hex[c >> 4], hex[c & 15]);
  }

  void skip_ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  void expect_literal(std::string_view lit) {
    if (static_cast<size_t>(end_ - p_) < lit.size() || std::string_view(p_, lit.size()) != lit)
      fail("expected '", lit, "'");
    p_ += lit.size();
  }

  Value parse_value(int depth) {
    if (p_ == end_) fail("expected a value, got end of input");
    if (++values_ > max_values_) fail("more than ", max_values_, " values");
    Value v;
    switch (*p_) {
      case '{': return parse_object(depth + 1);
      case '[': return parse_array(depth + 1);
      case '"':
        v.type = Value::Type::String;
        v.string = parse_string();
        return v;
      case 't':
        expect_literal("true");
        v.type = Value::Type::Bool;
        v.boolean = true;
        return v;
      case 'f':
        expect_literal("false");
        v.type = Value::Type::Bool;
        return v;
      case 'n':
        expect_literal("null");
        return v;
      default:
        if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) return parse_number();
        fail("expected a value, got ", describe());
    }
  }

  void check_depth(int depth) const {
    if (depth > max_depth_) fail("nesting deeper than ", max_depth_);
  }

  Value parse_object(int depth) {
    check_depth(depth);
    Value v;
    v.type = Value::Type::Object;
    ++p_;  // '{'
    skip_ws();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      return v;
    }
    std::unordered_set<std::string> seen;
    while (true) {
      skip_ws();
      if (p_ == end_ || *p_ != '"') fail("expected a string key, got ", describe());
      const char* key_at = p_;
      std::string key = parse_string();
      if (!seen.insert(key).second) {
        p_ = key_at;
        fail("duplicate key ", printable(key));
      }
      skip_ws();
      if (p_ == end_ || *p_ != ':') fail("expected ':', got ", describe());
      ++p_;
      skip_ws();
      Value member = parse_value(depth);
      v.object.emplace_back(std::move(key), std::move(member));
      skip_ws();
      if (p_ == end_) fail("expected ',' or '}', got end of input");
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ == '}') {
        ++p_;
        return v;
      }
      fail("expected ',' or '}', got ", describe());
    }
  }

  Value parse_array(int depth) {
    check_depth(depth);
    Value v;
    v.type = Value::Type::Array;
    ++p_;  // '['
    skip_ws();
    if (p_ != end_ && *p_ == ']') {
      ++p_;
      return v;
    }
    while (true) {
      skip_ws();
      v.array.push_back(parse_value(depth));
      skip_ws();
      if (p_ == end_) fail("expected ',' or ']', got end of input");
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ == ']') {
        ++p_;
        return v;
      }
      fail("expected ',' or ']', got ", describe());
    }
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  uint32_t parse_hex4() {
    if (end_ - p_ < 4) fail("\\u escape needs 4 hex digits");
    uint32_t cp = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      const char c = *p_;
      cp <<= 4;
      if (c >= '0' && c <= '9') cp |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') cp |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') cp |= static_cast<uint32_t>(c - 'A' + 10);
      else fail("invalid hex digit ", describe(), " in \\u escape");
    }
    return cp;
  }

  // One UTF-8 sequence starting at p_ (lead byte >= 0x80), validated (no overlongs, no
  // surrogates, <= U+10FFFF) and appended to out.
  void copy_utf8(std::string& out) {
    const unsigned char c0 = static_cast<unsigned char>(*p_);
    int len;
    uint32_t min_cp, cp;
    if (c0 >= 0xC2 && c0 <= 0xDF) {
      len = 2, min_cp = 0x80, cp = c0 & 0x1F;
    } else if (c0 >= 0xE0 && c0 <= 0xEF) {
      len = 3, min_cp = 0x800, cp = c0 & 0x0F;
    } else if (c0 >= 0xF0 && c0 <= 0xF4) {
      len = 4, min_cp = 0x10000, cp = c0 & 0x07;
    } else {
      fail("invalid UTF-8 ", describe());
    }
    if (end_ - p_ < len) fail("truncated UTF-8 sequence");
    for (int i = 1; i < len; ++i) {
      const unsigned char c = static_cast<unsigned char>(p_[i]);
      if ((c & 0xC0) != 0x80) fail("invalid UTF-8 ", describe());
      cp = (cp << 6) | (c & 0x3F);
    }
    if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      fail("invalid UTF-8 ", describe());
    out.append(p_, static_cast<size_t>(len));
    p_ += len;
  }

  std::string parse_string() {
    ++p_;  // opening quote
    std::string out;
    while (true) {
      if (p_ == end_) fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return out;
      }
      if (c < 0x20) fail("unescaped control character ", describe(), " in string");
      if (c >= 0x80) {
        copy_utf8(out);
        continue;
      }
      if (c != '\\') {
        out += static_cast<char>(c);
        ++p_;
        continue;
      }
      ++p_;  // backslash
      if (p_ == end_) fail("unterminated escape");
      const char e = *p_;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          ++p_;
          uint32_t cp = parse_hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate in \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
              fail("high surrogate not followed by a \\u low surrogate");
            p_ += 2;
            const uint32_t lo = parse_hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("high surrogate not followed by a low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, cp);
          continue;  // p_ already past the digits
        }
        default: fail("invalid escape ", describe());
      }
      ++p_;
    }
  }

  Value parse_number() {
    const char* start = p_;
    bool negative = false;
    if (*p_ == '-') {
      negative = true;
      ++p_;
    }
    if (p_ == end_ || !(*p_ >= '0' && *p_ <= '9')) fail("expected a digit, got ", describe());
    bool is_int = true;
    // int64 accumulated as a negative number so INT64_MIN fits.
    int64_t acc = 0;
    bool overflow = false;
    const char* int_start = p_;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
      const int d = *p_ - '0';
      if (acc < (INT64_MIN + d) / 10) overflow = true;
      else acc = acc * 10 - d;
      ++p_;
    }
    if (*int_start == '0' && p_ - int_start > 1) {
      p_ = int_start;
      fail("leading zero in number");
    }
    if (p_ != end_ && *p_ == '.') {
      is_int = false;
      ++p_;
      if (p_ == end_ || !(*p_ >= '0' && *p_ <= '9')) fail("expected a digit after '.'");
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      is_int = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !(*p_ >= '0' && *p_ <= '9')) fail("expected a digit in exponent");
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    }
    Value v;
    v.type = Value::Type::Number;
    if (is_int && !overflow && (negative || acc != INT64_MIN)) {
      v.is_int = true;
      v.integer = negative ? acc : -acc;
      v.number = static_cast<double>(v.integer);
    } else {
      // strtod needs a terminated copy; the literal was validated above.
      const std::string literal(start, static_cast<size_t>(p_ - start));
      v.number = std::strtod(literal.c_str(), nullptr);
    }
    return v;
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  int max_depth_;
  size_t max_values_;
  size_t values_ = 0;
};

void append_escaped(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += ch;
        }
    }
  }
}

}  // namespace

Value parse(std::string_view text, int max_depth, size_t max_values) {
  return Parser(text, max_depth, max_values).parse_document();
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  append_escaped(out, s);
  out += '"';
  return out;
}

std::string printable(std::string_view s, size_t max_len) {
  bool cut = false;
  if (s.size() > max_len) {
    size_t n = max_len;
    // Never split a UTF-8 sequence: back up over continuation bytes.
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    s = s.substr(0, n);
    cut = true;
  }
  std::string out = "\"";
  append_escaped(out, s);
  if (cut) out += "...";
  out += '"';
  return out;
}

}  // namespace attn::json
