// The JSON reader: nlohmann/json's lexer and parser, driven through its SAX interface, build our
// Value tree. nlohmann checks the grammar, numbers, escapes, surrogates and UTF-8. This file adds
// the rules it lacks (duplicate keys, nesting depth, the value cap, no byte order mark, no NUL
// byte) and words every error as "invalid JSON at byte N: ...". The words and the N are those of
// the hand-written reader this replaced (a differential fuzz of the two agreed on every input),
// except that a number too large for a double is now an error instead of infinity.
//
// Of nlohmann's errors we read only the documented fields, the exception id and the byte offset,
// never the message text: where the fault is and what it is come from the text itself, read on
// from the end of the last token the parser accepted.
#include "attn/base/json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <unordered_set>

#include "attn/base/tensor.h"

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

// A const char* that publishes how far nlohmann's lexer has read (*read), so the SAX handler
// knows byte offsets. The lexer reads one byte at a time and looks one byte past a number.
struct Cursor {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  const char* p;
  const char** read;

  reference operator*() const { return *p; }
  Cursor& operator++() {
    *read = ++p;
    return *this;
  }
  Cursor operator++(int) {
    Cursor old = *this;
    ++*this;
    return old;
  }
  bool operator==(const Cursor& o) const { return p == o.p; }
  bool operator!=(const Cursor& o) const { return p != o.p; }
};

// nlohmann's SAX handler: builds the Value tree and enforces our rules. Every error throws.
class Builder {
 public:
  Builder(std::string_view text, const char* const* read, int max_depth, size_t max_values)
      : text_(text), read_(read), max_depth_(max_depth), max_values_(max_values) {}

  Value take_root() { return std::move(root_); }

  // ---- nlohmann::json_sax interface. Returning false would stop the parse; we throw instead.
  bool null() { return add_scalar(Value{}, token_start(), here()); }
  bool boolean(bool b) {
    Value v;
    v.type = Value::Type::Bool;
    v.boolean = b;
    return add_scalar(std::move(v), token_start(), here());
  }
  bool number_integer(int64_t i) {  // nlohmann: a literal with a '-' that fits int64
    Value v;
    v.type = Value::Type::Number;
    v.is_int = true;
    v.integer = i;
    v.number = static_cast<double>(i);
    return add_number(std::move(v));
  }
  bool number_unsigned(uint64_t u) {  // nlohmann: a literal without '-' that fits uint64
    Value v;
    v.type = Value::Type::Number;
    v.is_int = u <= uint64_t(INT64_MAX);
    v.integer = v.is_int ? static_cast<int64_t>(u) : 0;
    v.number = static_cast<double>(u);
    return add_number(std::move(v));
  }
  bool number_float(double d, const std::string&) {  // a fraction, an exponent or out of int64
    Value v;
    v.type = Value::Type::Number;
    v.number = d;
    return add_number(std::move(v));
  }
  bool string(std::string& s) {
    Value v;
    v.type = Value::Type::String;
    v.string = std::move(s);
    return add_scalar(std::move(v), token_start(), here());
  }
  bool binary(nlohmann::json::binary_t&) { return false; }  // JSON text has none
  bool start_object(std::size_t) { return open(Value::Type::Object); }
  bool start_array(std::size_t) { return open(Value::Type::Array); }
  bool key(std::string& k) {
    const size_t start = token_start();
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) fail(start, "duplicate key ", printable(k));
    key_ = std::move(k);
    key_pending_ = true;
    accepted(here(), false);
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  // nlohmann found an error. Of ex we read the id (406: a number beyond a double) and, for a
  // parse_error, the byte offset: how many bytes its lexer had read, the end of input counting
  // as one more. The fault is at the first token after the last one the parser accepted, past
  // one separator the grammar allows there; what was wrong with it we read from the text.
  bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& ex) {
    const auto* pe = dynamic_cast<const nlohmann::json::parse_error*>(&ex);
    const size_t byte = pe ? pe->byte : position;
    const size_t n = text_.size();
    const size_t at = byte > n ? n : byte - 1;  // where the lexer stopped, or n at the end
    const size_t start = fault_start();         // where the token at fault begins

    if (ex.id == 406) fail(start, "number out of range");  // nlohmann: it overflows a double
    if (start > 0 && start < n && is_digit(text_[start]) && is_digit(text_[start - 1]))
      fail(start - 1, "leading zero in number");  // "0" was a whole number; a digit follows
    if (root_done_) fail(start, "unexpected ", describe(start), " after the value");

    // What the grammar wanted here follows from the byte before the token and what is open.
    // Only where a string (or a value) may stand does the token's own fault count.
    const char prev = previous_byte(start);
    const bool after_separator = prev == '\0' || prev == '[' || prev == '{' || prev == ',';
    const bool in_object = !frames_.empty() && frames_.back().value->is_object();
    if (start < n && text_[start] == '"' && (after_separator || prev == ':'))
      check_string(start);
    if (in_object && !key_pending_ && after_separator)
      fail(start, "expected a string key, got ", describe(start));
    if (!frames_.empty() && !after_separator && prev != ':') {
      if (!in_object) fail(start, "expected ',' or ']', got ", describe(start));
      if (key_pending_) fail(start, "expected ':', got ", describe(start));
      fail(start, "expected ',' or '}', got ", describe(start));
    }
    value_error(start, at);
  }

 private:
  struct Frame {
    Value* value;                          // the open array or object
    std::unordered_set<std::string> keys;  // an object's keys so far
  };

  template <typename... Args>
  [[noreturn]] void fail(size_t at, const Args&... args) const {
    throw Error(ErrorKind::Format, "", str_cat("invalid JSON at byte ", at, ": ", args...));
  }

  size_t here() const { return static_cast<size_t>(*read_ - text_.data()); }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  // What is at byte i, for messages: "end of input" or the character, printable.
  std::string describe(size_t i) const {
    if (i >= text_.size()) return "end of input";
    const unsigned char c = static_cast<unsigned char>(text_[i]);
    if (c >= 0x20 && c < 0x7f) return str_cat("'", static_cast<char>(c), "'");
    static const char* hex = "0123456789abcdef";
    return str_cat("byte 0x", hex[c >> 4], hex[c & 15]);
  }

  // The last byte before i that is not whitespace, or '\0' at the start.
  char previous_byte(size_t i) const {
    while (i > 0) {
      const char c = text_[--i];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return c;
    }
    return '\0';
  }

  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  size_t skip_space(size_t i) const {
    while (i < text_.size() && is_space(text_[i])) ++i;
    return i;
  }

  // Where the token the parser has just accepted began: past the end of the one before, the
  // whitespace and the one separator (',' or ':') the parser took in between.
  size_t token_start() const {
    size_t i = skip_space(end_);
    if (i < text_.size() && (text_[i] == ',' || text_[i] == ':')) i = skip_space(i + 1);
    return i;
  }

  // Where the token the parser refused begins: as token_start, but a separator is passed over
  // only where the grammar allows it (',' after a value inside an array or object, ':' after a
  // key); any other separator is itself the token at fault.
  size_t fault_start() const {
    size_t i = skip_space(end_);
    if (i >= text_.size()) return text_.size();
    const bool comma_ok = text_[i] == ',' && after_value_ && !frames_.empty();
    const bool colon_ok = text_[i] == ':' && key_pending_;
    return comma_ok || colon_ok ? skip_space(i + 1) : i;
  }

  // The parser accepted a token that ends just before end; after_value: it completed a value.
  void accepted(size_t end, bool after_value) {
    end_ = end;
    after_value_ = after_value;
  }

  // The end of the well-formed number at start ('-'? int frac? exp?). The lexer reads one byte
  // past a number, so here() does not say where it ended.
  size_t number_end(size_t i) const {
    const size_t n = text_.size();
    if (i < n && text_[i] == '-') ++i;
    if (i < n && text_[i] == '0') {
      ++i;  // a leading 0 is the whole integer part
    } else {
      while (i < n && is_digit(text_[i])) ++i;
    }
    if (i + 1 < n && text_[i] == '.' && is_digit(text_[i + 1])) {
      i += 1;
      while (i < n && is_digit(text_[i])) ++i;
    }
    if (i < n && (text_[i] == 'e' || text_[i] == 'E')) {
      size_t j = i + 1;
      if (j < n && (text_[j] == '+' || text_[j] == '-')) ++j;
      if (j < n && is_digit(text_[j])) {
        while (j < n && is_digit(text_[j])) ++j;
        i = j;
      }
    }
    return i;
  }

  // The four hex digits of a \\u escape at byte i, or -1 when they are not there.
  long hex4(size_t i) const {
    if (text_.size() - i < 4) return -1;
    long v = 0;
    for (size_t k = i; k < i + 4; ++k) {
      const char c = text_[k];
      if (!std::isxdigit(static_cast<unsigned char>(c))) return -1;
      v = v * 16 + (is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
  }

  // Fails on a \\u escape whose four hex digits, from byte i, are not all there.
  [[noreturn]] void hex_error(size_t i) const {
    if (text_.size() - i < 4) fail(i, "\\u escape needs 4 hex digits");
    size_t k = i;
    while (std::isxdigit(static_cast<unsigned char>(text_[k]))) ++k;
    fail(k, "invalid hex digit ", describe(k), " in \\u escape");
  }

  // How many bytes the UTF-8 sequence at byte i takes when well-formed (RFC 3629: no overlong
  // forms, no surrogates, nothing above U+10FFFF), else 0.
  size_t utf8_length(size_t i) const {
    auto byte = [&](size_t k) {
      return k < text_.size() ? static_cast<unsigned char>(text_[k]) : 0u;
    };
    auto in = [](unsigned c, unsigned lo, unsigned hi) { return c >= lo && c <= hi; };
    const unsigned c = byte(i), c1 = byte(i + 1), c2 = byte(i + 2), c3 = byte(i + 3);
    if (in(c, 0xC2, 0xDF)) return in(c1, 0x80, 0xBF) ? 2 : 0;
    if (in(c, 0xE0, 0xEF)) {
      const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
      return in(c1, lo, hi) && in(c2, 0x80, 0xBF) ? 3 : 0;
    }
    if (in(c, 0xF0, 0xF4)) {
      const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
      return in(c1, lo, hi) && in(c2, 0x80, 0xBF) && in(c3, 0x80, 0xBF) ? 4 : 0;
    }
    return 0;
  }

  // Reads the string literal that opens at byte start and fails at its first fault, at the byte
  // the old hand-written reader named (a \\u escape after its digits, a UTF-8 sequence at its
  // lead byte); returns when the literal is well-formed.
  void check_string(size_t start) const {
    const size_t n = text_.size();
    size_t i = start + 1;
    for (;;) {
      if (i >= n) fail(n, "unterminated string");
      const unsigned char c = static_cast<unsigned char>(text_[i]);
      if (c == '"') return;
      if (c < 0x20) fail(i, "unescaped control character ", describe(i), " in string");
      if (c == '\\') {
        if (i + 1 >= n) fail(n, "unterminated escape");
        const char e = text_[i + 1];
        if (e != 'u') {
          if (e == '\0' || !std::strchr("\"\\/bfnrt", e))
            fail(i + 1, "invalid escape ", describe(i + 1));
          i += 2;
          continue;
        }
        const long cp = hex4(i + 2);
        if (cp < 0) hex_error(i + 2);
        i += 6;
        if (cp >= 0xDC00 && cp <= 0xDFFF) fail(i, "lone low surrogate in \\u escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (!(i + 1 < n && text_[i] == '\\' && text_[i + 1] == 'u'))
            fail(i, "high surrogate not followed by a \\u low surrogate");
          const long low = hex4(i + 2);
          if (low < 0) hex_error(i + 2);
          if (low < 0xDC00 || low > 0xDFFF)
            fail(i + 6, "high surrogate not followed by a low surrogate");
          i += 6;
        }
        continue;
      }
      if (c < 0x80) {
        ++i;
        continue;
      }
      const size_t length = utf8_length(i);
      if (length == 0) {
        const size_t want = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                            : c >= 0xF0 && c <= 0xF4 ? 4 : 1;
        if (n - i < want) fail(i, "truncated UTF-8 sequence");
        fail(i, "invalid UTF-8 ", describe(i));
      }
      i += length;
    }
  }

  // Where a value was due: a number or literal that did not scan, or no value at all.
  [[noreturn]] void value_error(size_t start, size_t at) const {
    const char c = start < text_.size() ? text_[start] : '\0';
    if (c == 't') fail(start, "expected 'true'");
    if (c == 'f') fail(start, "expected 'false'");
    if (c == 'n') fail(start, "expected 'null'");
    if (c == '-' || is_digit(c)) {  // a number stopped at byte `at`
      if (at == start + 1 && c == '-') fail(at, "expected a digit, got ", describe(at));
      if (text_[at - 1] == '.') fail(at, "expected a digit after '.'");
      fail(at, "expected a digit in exponent");
    }
    fail(start, "expected a value, got ", describe(start));
  }

  void count_value(size_t start) {
    if (++values_ > max_values_) fail(start, "more than ", max_values_, " values");
  }

  // Puts v where the parse is: the root, the next array element or the pending key's value.
  Value& place(Value&& v) {
    if (frames_.empty()) return root_ = std::move(v);
    Value& parent = *frames_.back().value;
    if (parent.is_array()) {
      parent.array.push_back(std::move(v));
      return parent.array.back();
    }
    parent.object.emplace_back(std::move(key_), std::move(v));
    key_pending_ = false;
    return parent.object.back().second;
  }

  bool add_scalar(Value&& v, size_t start, size_t end) {
    count_value(start);
    place(std::move(v));
    root_done_ = frames_.empty();
    accepted(end, true);
    return true;
  }

  bool add_number(Value&& v) {
    const size_t start = token_start();
    return add_scalar(std::move(v), start, number_end(start));
  }

  bool open(Value::Type type) {
    const size_t at = token_start();  // the bracket
    count_value(at);
    if (int(frames_.size()) + 1 > max_depth_) fail(at, "nesting deeper than ", max_depth_);
    Value v;
    v.type = type;
    // The parent's vector does not grow while this child is open, so the pointer stays valid.
    frames_.push_back({&place(std::move(v)), {}});
    accepted(at + 1, false);
    return true;
  }

  bool close() {
    frames_.pop_back();
    root_done_ = frames_.empty();
    accepted(here(), true);
    return true;
  }

  std::string_view text_;
  const char* const* read_;
  int max_depth_;
  size_t max_values_;
  size_t values_ = 0;
  Value root_;
  bool root_done_ = false;
  std::vector<Frame> frames_;
  std::string key_;
  bool key_pending_ = false;
  size_t end_ = 0;           // just past the last token the parser accepted
  bool after_value_ = false;  // that token completed a value
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
  const char* const begin = text.data();
  const char* read = begin;
  Builder builder(text, &read, max_depth, max_values);
  // nlohmann skips a UTF-8 byte order mark; RFC 8259 forbids sending one, and we never accept it.
  if (!text.empty() && static_cast<unsigned char>(text[0]) == 0xEF)
    throw Error(ErrorKind::Format, "", "invalid JSON at byte 0: expected a value, got byte 0xef");
  nlohmann::json::sax_parse(Cursor{begin, &read}, Cursor{begin + text.size(), &read}, &builder);
  // nlohmann takes a NUL byte outside a string for the end of input; a valid document has none.
  if (const void* nul = std::memchr(begin, '\0', text.size()))
    throw Error(ErrorKind::Format, "",
                str_cat("invalid JSON at byte ", static_cast<const char*>(nul) - begin,
                        ": unexpected byte 0x00 after the value"));
  return builder.take_root();
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
