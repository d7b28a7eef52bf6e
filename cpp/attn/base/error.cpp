#include "attn/base/error.h"

#include <cstdio>

#include "attn/base/tensor.h"

namespace attn {

// str_cat's numbers: "%g", what an std::ostream with default flags writes.
void detail::append(std::string& out, double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  out += buf;
}

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Config: return "config";
    case ErrorKind::Input: return "input";
    case ErrorKind::NonFinite: return "nonFinite";
    case ErrorKind::Format: return "format";
    case ErrorKind::State: return "state";
    case ErrorKind::Io: return "io";
    case ErrorKind::Internal: return "internal";
  }
  return "internal";
}

ErrorKind error_kind(const std::exception& e) {
  if (const auto* a = dynamic_cast<const Error*>(&e)) return a->kind();
  if (const auto* r = dynamic_cast<const RuntimeError*>(&e)) return r->kind();
  return ErrorKind::Internal;
}

std::string error_key(const std::exception& e) {
  if (const auto* a = dynamic_cast<const Error*>(&e)) return a->key();
  if (const auto* r = dynamic_cast<const RuntimeError*>(&e)) return r->key();
  return "";
}

std::string key_name(std::string_view snake_name, KeyNamer namer) {
  return namer ? namer(snake_name) : std::string(snake_name);
}

}  // namespace attn
