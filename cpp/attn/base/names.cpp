#include "attn/base/names.h"

namespace attn {

int parse_enum(const EnumNames& e, const std::string& name) {
  for (int i = 0; i < e.count; ++i)
    if (name == e.names[i]) return i;
  throw Error(e.kind, e.key,
              str_cat("unknown ", e.what, " '", name, "' (expected ", choices_text(e), ")"));
}

std::string choices_text(const EnumNames& e) {
  std::string out;
  for (int i = 0; i < e.count; ++i)
    out += str_cat(i == 0 ? "" : i + 1 == e.count ? " or " : ", ", e.names[i]);
  return out;
}

}  // namespace attn
