// The names of an enum's values, one table per enum, kept beside the enum: the parse and name
// functions read it, and the config schema (train/config.h) lists it as a key's choices.
#pragma once

#include <string>

#include "attn/base/error.h"

namespace attn {

// names[i] names the enum's value i (the tables list the values in the enum's order).
struct EnumNames {
  const char* what;     // the value in an error: "unknown <what> 'x' (expected a, b or c)"
  ErrorKind kind;       // the error's kind, and its key (a config key, or "")
  const char* key;
  const char* js_type;  // the TypeScript type of the names (attention-core.d.ts), e.g. "FfnKind"
  const char* const* names;
  int count;
};

// The index of name in e; anything else throws an Error of e's kind and key naming the value
// and the choices.
int parse_enum(const EnumNames& e, const std::string& name);

// "a, b or c": the names as prose.
std::string choices_text(const EnumNames& e);

}  // namespace attn
