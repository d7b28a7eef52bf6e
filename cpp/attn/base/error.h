// The core's errors: each carries a kind and, for a bad config value, the config key, so callers
// (the JS bindings, the worker, the page) branch on the kind and never on the message text.
// Messages are one line and name the offending value; the kind and key add no text to them.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace attn {

// What went wrong. error_kind_name gives the JS spelling (the Error's .kind).
enum class ErrorKind {
  Config,     // "config": a bad model or training config value; key names it
  Input,      // "input": bad call arguments (ids out of range, wrong shapes, a bad head index)
  NonFinite,  // "nonFinite": a training step produced a non-finite loss or gradient
  Format,     // "format": a malformed safetensors, JSON or weights file, or one that does not fit
  State,      // "state": a call made before what it needs (e.g. no forward pass yet)
  Io,         // "io": a file could not be opened, read or written (native only)
  Internal,   // "internal": any other exception, i.e. a bug (never thrown by the core itself)
};

// "config", "input", "nonFinite", "format", "state", "io" or "internal".
const char* error_kind_name(ErrorKind kind);

// A rejected argument, config value or file. key is the config key of the bad value in the
// core's spelling ("d_model", "lr", "task", ...; the edges respell it) or "" when there is none.
class Error : public std::invalid_argument {
 public:
  Error(ErrorKind kind, std::string key, const std::string& message)
      : std::invalid_argument(message), kind_(kind), key_(std::move(key)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& key() const { return key_; }

 private:
  ErrorKind kind_;
  std::string key_;
};

// A valid request that failed while running (a non-finite training step, a file that cannot
// be read); same kind and key as Error.
class RuntimeError : public std::runtime_error {
 public:
  RuntimeError(ErrorKind kind, std::string key, const std::string& message)
      : std::runtime_error(message), kind_(kind), key_(std::move(key)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& key() const { return key_; }

 private:
  ErrorKind kind_;
  std::string key_;
};

// The kind of any exception: that of an Error or RuntimeError, else Internal.
ErrorKind error_kind(const std::exception& e);
// The key of an Error or RuntimeError; "" for any other exception.
std::string error_key(const std::exception& e);

// How an edge spells a config key in its messages, given the key's snake_case name (the core's
// only spelling); nullptr keeps snake_case. See config_keys.h.
using KeyNamer = std::string (*)(std::string_view snake_name);

// snake_name as namer spells it.
std::string key_name(std::string_view snake_name, KeyNamer namer);

}  // namespace attn
