#include "attn/base/config_row.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "attn/base/tensor.h"

namespace attn {

namespace {

const ConfigKey& row_named(const std::vector<ConfigKey>& rows, const ConfigKey& from,
                           std::string_view name) {
  const ConfigKey* k = find_row(rows, name);
  if (!k || k->owner != from.owner)
    throw std::logic_error(str_cat("config key ", from.name, " names ", name,
                                   ", which is not a key of the same struct"));
  return *k;
}

}  // namespace

double row_number(const ConfigKey& k, const void* s) {
  switch (k.type) {
    case ConfigType::Int: return row_value<int>(k, s);
    case ConfigType::UInt64: return static_cast<double>(row_value<uint64_t>(k, s));
    case ConfigType::Float: return row_value<float>(k, s);
    default: throw std::logic_error(str_cat("config key ", k.name, " is not a number"));
  }
}

double shortest_decimal(float f) {
  for (int digits = 6;; ++digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*g", digits, double(f));
    const double d = std::strtod(buf, nullptr);
    if (static_cast<float>(d) == f || digits == 9) return d;
  }
}

std::string row_text(const ConfigKey& k, const void* s) {
  switch (k.type) {
    case ConfigType::Int: return std::to_string(row_value<int>(k, s));
    case ConfigType::UInt64: return std::to_string(row_value<uint64_t>(k, s));
    case ConfigType::Float: return str_cat(shortest_decimal(row_value<float>(k, s)));
    case ConfigType::Bool: return row_value<bool>(k, s) ? "true" : "false";
    case ConfigType::String: return k.choice_name(k, s);
  }
  return "";
}

bool row_set_text(const ConfigKey& k, void* s, const std::string& text) {
  const char* t = text.c_str();
  char* end = nullptr;
  errno = 0;
  const bool no_space = !text.empty() && !std::isspace(static_cast<unsigned char>(text[0]));
  switch (k.type) {
    case ConfigType::Int: {
      const long long v = std::strtoll(t, &end, 10);
      if (!no_space || *end || errno || v < std::numeric_limits<int>::min() ||
          v > std::numeric_limits<int>::max())
        return false;
      row_value<int>(k, s) = static_cast<int>(v);
      return true;
    }
    case ConfigType::UInt64: {
      const unsigned long long v = std::strtoull(t, &end, 10);
      if (!no_space || text[0] == '-' || *end || errno) return false;
      row_value<uint64_t>(k, s) = v;
      return true;
    }
    case ConfigType::Float: {
      const float v = std::strtof(t, &end);
      if (!no_space || *end || errno || !std::isfinite(v)) return false;
      row_value<float>(k, s) = v;
      return true;
    }
    case ConfigType::Bool:
      if (text != "true" && text != "false") return false;
      row_value<bool>(k, s) = text == "true";
      return true;
    case ConfigType::String:
      for (int i = 0; i < k.choices->count; ++i)
        if (text == k.choices->names[i]) return k.set_choice(k, s, i), true;
      return false;
  }
  return false;
}

void row_set_choice(const ConfigKey& k, void* s, const std::string& name, KeyNamer namer) {
  try {
    k.set_choice(k, s, parse_enum(*k.choices, name));
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::Config, k.name, str_cat(key_name(k.name, namer), ": ", e.what()));
  }
}

void row_copy(const ConfigKey& k, const void* from, void* to) {
  if (!row_set_text(k, to, row_text(k, from)))
    throw std::logic_error(str_cat("config key ", k.name, " does not copy"));
}

void check_row(const ConfigKey& k, const void* s, const std::vector<ConfigKey>& rows,
               KeyNamer namer) {
  const std::string name = key_name(k.name, namer);
  if (k.choices) {
    try {
      parse_enum(*k.choices, row_text(k, s));
    } catch (const std::invalid_argument& e) {
      throw Error(ErrorKind::Config, k.name, str_cat(name, ": ", e.what()));
    }
  }
  if (!k.bounded) return;
  const double hi =
      k.hi_key ? std::min(k.hi, row_number(row_named(rows, k, k.hi_key), s)) : k.hi;
  if (k.type == ConfigType::Float) {
    // Compared with the bounds as floats, so that a bound such as 0.01 accepts itself.
    const float v = row_value<float>(k, s), lo_f = static_cast<float>(k.lo);
    const float hi_f = static_cast<float>(hi);
    const bool ok = std::isfinite(v) && (k.lo_open ? v > lo_f : v >= lo_f) &&
                    (k.hi_open ? v < hi_f : v <= hi_f);
    require_config(ok, k.name, name, " (", v, ") must be in ", k.lo_open ? "(" : "[", k.lo, ", ",
                   hi, k.hi_open ? ")" : "]");
  } else {
    const double v = row_number(k, s);
    const bool ok = (k.lo_open ? v > k.lo : v >= k.lo) && (k.hi_open ? v < hi : v <= hi);
    require_config(ok, k.name, name, " (", row_text(k, s), ") must be in ", k.lo_open ? "(" : "[",
                   static_cast<int64_t>(k.lo), ", ", static_cast<int64_t>(hi),
                   k.hi_open ? ")" : "]");
  }
  if (k.divides) {
    const ConfigKey& whole = row_named(rows, k, k.divides);
    const int64_t w = static_cast<int64_t>(row_number(whole, s));
    const int64_t part = static_cast<int64_t>(row_number(k, s));
    require_config(w % part == 0, whole.name, key_name(whole.name, namer), " (", w,
                   ") must be divisible by ", name, " (", part, ")");
  }
}

const ConfigKey* find_row(const std::vector<ConfigKey>& rows, std::string_view name) {
  for (const ConfigKey& k : rows)
    if (name == k.name) return &k;
  return nullptr;
}

bool applies_to(const ConfigKey& k, std::string_view family) {
  return k.families.empty() ||
         std::any_of(k.families.begin(), k.families.end(),
                     [&](const char* f) { return family == f; });
}

}  // namespace attn
