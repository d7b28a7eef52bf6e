// The JSON reader: nlohmann/json's lexer and parser, driven through its SAX interface, build our
// Value tree. nlohmann checks the grammar, numbers, escapes, surrogates and UTF-8. This file adds
// the rules it lacks (duplicate keys, nesting depth, the value cap, no byte order mark, no NUL
// byte) and words every error as "invalid JSON at byte N: ...". The words and the N are those of
// the hand-written reader this replaced (a differential fuzz of the two agreed on every input),
// except that a number too large for a double is now an error instead of infinity.
#include "attn/json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <iterator>
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

bool is_number_byte(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// nlohmann's SAX handler: builds the Value tree and enforces our rules. Every error throws.
class Builder {
 public:
  Builder(std::string_view text, const char* const* read, int max_depth, size_t max_values)
      : text_(text), read_(read), max_depth_(max_depth), max_values_(max_values) {}

  Value take_root() { return std::move(root_); }

  // ---- nlohmann::json_sax interface. Returning false would stop the parse; we throw instead.
  bool null() { return add_scalar(Value{}, literal_start(4)); }
  bool boolean(bool b) {
    Value v;
    v.type = Value::Type::Bool;
    v.boolean = b;
    return add_scalar(std::move(v), literal_start(b ? 4 : 5));
  }
  bool number_integer(int64_t i) {  // nlohmann: a literal with a '-' that fits int64
    Value v;
    v.type = Value::Type::Number;
    v.is_int = true;
    v.integer = i;
    v.number = static_cast<double>(i);
    return add_scalar(std::move(v), number_start());
  }
  bool number_unsigned(uint64_t u) {  // nlohmann: a literal without '-' that fits uint64
    Value v;
    v.type = Value::Type::Number;
    v.is_int = u <= uint64_t(INT64_MAX);
    v.integer = v.is_int ? static_cast<int64_t>(u) : 0;
    v.number = static_cast<double>(u);
    return add_scalar(std::move(v), number_start());
  }
  bool number_float(double d, const std::string&) {  // a fraction, an exponent or out of int64
    Value v;
    v.type = Value::Type::Number;
    v.number = d;
    return add_scalar(std::move(v), number_start());
  }
  bool string(std::string& s) {
    Value v;
    v.type = Value::Type::String;
    v.string = std::move(s);
    return add_scalar(std::move(v), string_start(here()));
  }
  bool binary(nlohmann::json::binary_t&) { return false; }  // JSON text has none
  bool start_object(std::size_t) { return open(Value::Type::Object); }
  bool start_array(std::size_t) { return open(Value::Type::Array); }
  bool key(std::string& k) {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) fail(string_start(here()), "duplicate key ", printable(k));
    key_ = std::move(k);
    key_pending_ = true;
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  // nlohmann found an error. position: bytes its lexer has read, the end of input counting as
  // one more. token: its token string (control bytes spelled <U+XXXX>), which begins at the
  // token only for strings and numbers. ex: a parse_error whose message is "... while parsing
  // <context> - <what>", <what> being the lexer's complaint ("invalid string: ...", "invalid
  // number; ...", "invalid literal") when it rejected the token, else "unexpected <token>".
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::json::exception& ex) {
    const size_t n = text_.size();
    const bool eof = position > n;
    const size_t end = std::min(position, n);  // just past the last byte read
    const size_t at = eof ? n : position - 1;  // the byte at fault, or n for the end of input
    const std::string what = ex.what();
    const size_t dash = what.find(" - ");
    const std::string complaint = dash == std::string::npos ? what : what.substr(dash + 3);
    auto complains = [&](const char* s) { return complaint.rfind(s, 0) == 0; };
    const bool bad_string = complains("invalid string: ");
    size_t start;  // where the token at fault begins
    if (bad_string || complains("invalid number; ")) start = spelled_start(token, end);
    else if (complains("invalid literal")) start = literal_prefix_start(at);
    else start = eof ? n : valid_token_start(token, end);

    if (ex.id == 406) fail(start, "number out of range");  // nlohmann: it overflows a double
    if (start > 0 && start < n && is_digit(text_[start]) && is_digit(text_[start - 1]))
      fail(start - 1, "leading zero in number");  // "0" was a whole number; a digit follows
    if (root_done_) fail(start, "unexpected ", describe(start), " after the value");

    // What the grammar wanted here follows from the byte before the token and what is open.
    // Only where a string (or a value) may stand does the token's own fault count.
    const char prev = previous_byte(start);
    const bool after_separator = prev == '\0' || prev == '[' || prev == '{' || prev == ',';
    const bool in_object = !frames_.empty() && frames_.back().value->is_object();
    if (bad_string && (after_separator || prev == ':')) string_error(complaint, at);
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

  // Where a string or number token ending at end begins, given its token string: walks back
  // over the bytes it spells, a control byte spelled as the 8 characters <U+XXXX>.
  size_t spelled_start(const std::string& token, size_t end) const {
    size_t left = token.size(), i = end;
    while (left > 0 && i > 0) {
      const size_t width = static_cast<unsigned char>(text_[i - 1]) < 0x20 ? 8 : 1;
      if (left < width) break;
      left -= width;
      --i;
    }
    return i;
  }

  // Where a token that scanned (but came where the grammar does not allow it) begins; it ends
  // just before end. Strings and numbers are their token string; a literal is true, false or
  // null; anything else is one byte.
  size_t valid_token_start(const std::string& token, size_t end) const {
    const char last = text_[end - 1];
    size_t length = 1;
    if (last == '"' || is_digit(last)) length = token.size();
    else if (last == 'e') length = end >= 5 && text_.compare(end - 5, 5, "false") == 0 ? 5 : 4;
    else if (last == 'l') length = 4;
    return end - std::min(length, end);
  }

  // Where a literal that did not scan begins: the lexer read a prefix of true, false or null and
  // stopped at byte at. With no such prefix, the byte at is itself the stray token.
  size_t literal_prefix_start(size_t at) const {
    for (const char* literal : {"true", "false", "null"})
      for (size_t k = std::strlen(literal) - 1; k >= 1; --k)
        if (k <= at && text_.compare(at - k, k, literal, k) == 0) return at - k;
    return at;
  }

  // The opening quote of the string literal that ends just before end: the nearest '"' not
  // escaped, i.e. not preceded by an odd run of backslashes.
  size_t string_start(size_t end) const {
    size_t i = end - 1;  // the closing quote
    while (i > 0) {
      --i;
      if (text_[i] != '"') continue;
      size_t slashes = 0;
      while (i > slashes && text_[i - 1 - slashes] == '\\') ++slashes;
      if (slashes % 2 == 0) return i;
    }
    return 0;
  }

  size_t literal_start(size_t length) const { return here() - length; }

  // The lexer read one byte past a number unless the input ended: step back over it.
  size_t number_start() const {
    size_t i = here();
    if (i > 0 && !is_number_byte(text_[i - 1])) --i;
    while (i > 0 && is_number_byte(text_[i - 1])) --i;
    return i;
  }

  // Fails with our words for nlohmann's complaint about a string ("invalid string: missing
  // closing quote; last read: ..."), at the byte the old hand-written reader named: a \\u escape
  // after its digits, a UTF-8 sequence at its lead byte. at: the byte nlohmann stopped at.
  [[noreturn]] void string_error(const std::string& complaint, size_t at) const {
    const bool eof = at == text_.size();
    const std::string theirs = complaint.substr(0, complaint.find("; last read"));
    auto says = [&](const char* s) { return theirs.find(s) != std::string::npos; };
    if (says("missing closing quote")) fail(at, "unterminated string");
    if (says("forbidden character after backslash")) {
      if (eof) fail(at, "unterminated escape");
      fail(at, "invalid escape ", describe(at));
    }
    if (says("4 hex digits")) {
      size_t digits = at;  // the first digit after "\\u": the lexer read valid ones up to at
      while (digits > 0 && at - digits < 3 &&
             std::isxdigit(static_cast<unsigned char>(text_[digits - 1])))
        --digits;
      if (text_.size() - digits < 4) fail(digits, "\\u escape needs 4 hex digits");
      fail(at, "invalid hex digit ", describe(at), " in \\u escape");
    }
    if (says("must be followed by U+DC00")) {
      // It read "\\u" and four digits that are no low surrogate, or stopped at what is not "\\u".
      if (at >= 5 && text_[at - 5] == '\\' && text_[at - 4] == 'u')
        fail(at + 1, "high surrogate not followed by a low surrogate");
      fail(text_[at - 1] == '\\' ? at - 1 : at,
           "high surrogate not followed by a \\u low surrogate");
    }
    if (says("must follow U+D800")) fail(at + 1, "lone low surrogate in \\u escape");
    if (says("control character"))
      fail(at, "unescaped control character ", describe(at), " in string");
    if (says("ill-formed UTF-8")) {
      const size_t lead = utf8_lead(at);
      if (lead == text_.size()) fail(lead, "truncated UTF-8 sequence");
      const unsigned char c = static_cast<unsigned char>(text_[lead]);
      const size_t length = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                            : c >= 0xF0 && c <= 0xF4 ? 4 : 1;
      if (text_.size() - lead < length) fail(lead, "truncated UTF-8 sequence");
      fail(lead, "invalid UTF-8 ", describe(lead));
    }
    fail(at, theirs);  // a case not listed above: nlohmann's own words
  }

  // The lead byte of the UTF-8 sequence that byte at was meant to continue, or at itself when it
  // starts one (or stands alone).
  size_t utf8_lead(size_t at) const {
    size_t i = at;
    while (i > 0 && at - i < 3 && (static_cast<unsigned char>(text_[i - 1]) & 0xC0) == 0x80) --i;
    if (i == 0) return at;
    const unsigned char lead = static_cast<unsigned char>(text_[i - 1]);
    const size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return at - (i - 1) < length ? i - 1 : at;
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

  bool add_scalar(Value&& v, size_t start) {
    count_value(start);
    place(std::move(v));
    root_done_ = frames_.empty();
    return true;
  }

  bool open(Value::Type type) {
    const size_t at = here() - 1;  // the bracket
    count_value(at);
    if (int(frames_.size()) + 1 > max_depth_) fail(at, "nesting deeper than ", max_depth_);
    Value v;
    v.type = type;
    // The parent's vector does not grow while this child is open, so the pointer stays valid.
    frames_.push_back({&place(std::move(v)), {}});
    return true;
  }

  bool close() {
    frames_.pop_back();
    root_done_ = frames_.empty();
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
