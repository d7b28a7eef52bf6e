#include "attn/train/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "attn/base/json.h"
#include "attn/base/tensor.h"

namespace attn {

namespace {

// Rough count of floats a Trainer holds: parameters x 4 (value, grad, Adam m, v) + activations.
int64_t state_elements(const TrainerConfig& c) {
  const int64_t V = c.vocab_size, D = c.d_model, H = c.n_heads, T = c.seq_len, B = c.batch_size;
  const int64_t L = c.n_layers, C = std::max(c.max_seq_len, c.seq_len);
  const int64_t F = c.ffn == "none" ? 0 : int64_t(c.ffn_mult) * D;  // FFN hidden width
  const int64_t params = 2 * V * D + C * D + L * (6 * D * D + 8 * D + 3 * F * D + F) + V;
  const int64_t acts = B * T * (L * (16 * D + 8 * F) + 2 * V) + L * 3 * B * H * T * T;
  return 4 * params + acts + C * D;
}

const ConfigKey& key_named(std::string_view name) {
  const ConfigKey* k = find_config_key(name);
  if (!k) throw std::logic_error(str_cat("no config key ", name));
  return *k;
}

const char* type_name(ConfigType t) {
  switch (t) {
    case ConfigType::Int: return "int";
    case ConfigType::UInt64: return "uint64";
    case ConfigType::Float: return "float";
    case ConfigType::Bool: return "bool";
    case ConfigType::String: return "enum";
  }
  return "";
}

const char* group_name(ConfigGroup g) {
  switch (g) {
    case ConfigGroup::Model: return "model";
    case ConfigGroup::Block: return "block";
    case ConfigGroup::Training: return "training";
    case ConfigGroup::Task: return "task";
  }
  return "";
}

// A value as a JSON literal: numbers and booleans bare, strings quoted.
std::string json_value(const TrainerConfig& c, const ConfigKey& k) {
  const std::string text = value_text(c, k);
  return k.type == ConfigType::String ? json::quote(text) : text;
}

// A bound as a JSON number: integers without a fraction.
std::string json_number(double v) {
  return v == std::trunc(v) && std::abs(v) < 1e15 ? std::to_string(int64_t(v)) : str_cat(v);
}

}  // namespace

void TrainerConfig::validate(KeyNamer namer) const {
  check_config_keys(*this, namer);
  const std::string d_model_name = key_name("d_model", namer);
  require_config(d_model % 2 == 0, "d_model", d_model_name, " (", d_model,
                 ") must be even for sinusoidal positions");
  require_config(kv_heads == 0 || n_heads % kv_heads == 0, "kv_heads", key_name("n_heads", namer),
                 " (", n_heads, ") must be divisible by ", key_name("kv_heads", namer), " (",
                 kv_heads, ")");
  require_config(max_seq_len == 0 || max_seq_len >= seq_len, "max_seq_len",
                 key_name("max_seq_len", namer), " (", max_seq_len, ") must be 0 or >= ",
                 key_name("seq_len", namer), " (", seq_len, ")");
  require_config(positions != "rope" || (d_model / n_heads) % 2 == 0, "positions",
                 key_name("positions", namer), " rope needs an even head width, but ",
                 d_model_name, " / ", key_name("n_heads", namer), " is ", d_model / n_heads);
  // A norm or an FFN sits on the residual stream: both keys are named.
  for (const char* k : {"norm", "ffn"}) {
    const std::string& v = std::string(k) == "norm" ? norm : ffn;
    require_config(v == "none" || residual, k, key_name(k, namer), " (", v, ") needs ",
                   key_name("residual", namer), " (true): it works on the residual stream");
  }
  require_config(objective != "mlm" || vocab_size >= 2, "vocab_size", key_name("objective", namer),
                 " mlm replaces some selected tokens by another one: it needs ",
                 key_name("vocab_size", namer), " >= 2, got ", vocab_size);
  try {
    check_task(parse_task(task), vocab_size, seq_len);
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::Config, "task", str_cat(key_name("task", namer), ": ", e.what()));
  }
  // No single key: any of the four sizes can bring it down.
  const int64_t n = state_elements(*this);
  require_config(n <= kMaxStateElements, "", "this config needs about ", n,
                 " floats of state, more than the ", kMaxStateElements, " allowed; reduce ",
                 key_name("vocab_size", namer), ", ", d_model_name, ", ",
                 key_name("seq_len", namer), " or ", key_name("batch_size", namer));
}

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = config_key_rows();
  return keys;
}

const ConfigKey* find_config_key(std::string_view snake_name) {
  for (const ConfigKey& k : config_keys())
    if (snake_name == k.name) return &k;
  return nullptr;
}

std::string key_help(const ConfigKey& k, KeyNamer namer) {
  const std::string_view help = k.help;
  std::string out;
  size_t i = 0;
  while (i < help.size()) {
    const size_t open = help.find('{', i), close = help.find('}', open);
    if (open == std::string_view::npos || close == std::string_view::npos) break;
    out.append(help.substr(i, open - i));
    const std::string_view name = help.substr(open + 1, close - open - 1);
    out += name == "choices" && k.choices ? choices_text(*k.choices) : key_name(name, namer);
    i = close + 1;
  }
  if (i < help.size()) out.append(help.substr(i));
  return out;
}

double number_value(const TrainerConfig& c, const ConfigKey& k) {
  switch (k.type) {
    case ConfigType::Int: return c.*k.int_member;
    case ConfigType::UInt64: return static_cast<double>(c.*k.u64_member);
    case ConfigType::Float: return c.*k.float_member;
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

std::string value_text(const TrainerConfig& c, const ConfigKey& k) {
  switch (k.type) {
    case ConfigType::Int: return std::to_string(c.*k.int_member);
    case ConfigType::UInt64: return std::to_string(c.*k.u64_member);
    case ConfigType::Float: return str_cat(shortest_decimal(c.*k.float_member));
    case ConfigType::Bool: return c.*k.bool_member ? "true" : "false";
    case ConfigType::String: return c.*k.string_member;
  }
  return "";
}

bool at_default(const TrainerConfig& c, const ConfigKey& k) {
  return value_text(c, k) == value_text(TrainerConfig(), k);
}

bool set_value_text(TrainerConfig& c, const ConfigKey& k, const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  const bool no_space = !text.empty() && !std::isspace(static_cast<unsigned char>(text[0]));
  switch (k.type) {
    case ConfigType::Int: {
      const long long v = std::strtoll(s, &end, 10);
      if (!no_space || *end || errno || v < std::numeric_limits<int>::min() ||
          v > std::numeric_limits<int>::max())
        return false;
      c.*k.int_member = static_cast<int>(v);
      return true;
    }
    case ConfigType::UInt64: {
      const unsigned long long v = std::strtoull(s, &end, 10);
      if (!no_space || text[0] == '-' || *end || errno) return false;
      c.*k.u64_member = v;
      return true;
    }
    case ConfigType::Float: {
      const float v = std::strtof(s, &end);
      if (!no_space || *end || errno || !std::isfinite(v)) return false;
      c.*k.float_member = v;
      return true;
    }
    case ConfigType::Bool:
      if (text != "true" && text != "false") return false;
      c.*k.bool_member = text == "true";
      return true;
    case ConfigType::String:
      for (int i = 0; i < k.choices->count; ++i)
        if (text == k.choices->names[i]) return c.*k.string_member = text, true;
      return false;
  }
  return false;
}

void check_config_keys(const TrainerConfig& c, KeyNamer namer) {
  for (const ConfigKey& k : config_keys()) {
    const std::string name = key_name(k.name, namer);
    if (k.choices) {
      try {
        parse_enum(*k.choices, c.*k.string_member);
      } catch (const std::invalid_argument& e) {
        throw Error(ErrorKind::Config, k.name, str_cat(name, ": ", e.what()));
      }
    }
    if (!k.bounded) continue;
    const double hi = k.hi_key ? std::min(k.hi, number_value(c, key_named(k.hi_key))) : k.hi;
    if (k.type == ConfigType::Float) {
      // Compared with the bounds as floats, so that a bound such as 0.01 accepts itself.
      const float v = c.*k.float_member, lo_f = static_cast<float>(k.lo);
      const float hi_f = static_cast<float>(hi);
      const bool ok = std::isfinite(v) && (k.lo_open ? v > lo_f : v >= lo_f) &&
                      (k.hi_open ? v < hi_f : v <= hi_f);
      require_config(ok, k.name, name, " (", v, ") must be in ", k.lo_open ? "(" : "[", k.lo,
                     ", ", hi, k.hi_open ? ")" : "]");
    } else {
      const double v = number_value(c, k);
      const bool ok = (k.lo_open ? v > k.lo : v >= k.lo) && (k.hi_open ? v < hi : v <= hi);
      require_config(ok, k.name, name, " (", value_text(c, k), ") must be in ",
                     k.lo_open ? "(" : "[", static_cast<int64_t>(k.lo), ", ",
                     static_cast<int64_t>(hi), k.hi_open ? ")" : "]");
    }
    if (k.divides) {
      const ConfigKey& whole = key_named(k.divides);
      const int64_t w = static_cast<int64_t>(number_value(c, whole));
      const int64_t part = static_cast<int64_t>(number_value(c, k));
      require_config(w % part == 0, whole.name, key_name(whole.name, namer), " (", w,
                     ") must be divisible by ", name, " (", part, ")");
    }
  }
}

std::string config_schema_json() {
  const TrainerConfig d;
  std::string out = "[\n";
  for (const ConfigKey& k : config_keys()) {
    std::string o = str_cat("{\"name\":", json::quote(k.name), ",\"flag\":", json::quote(k.flag),
                            ",\"js\":", json::quote(js_key(k.name)), ",\"type\":\"",
                            type_name(k.type), "\",\"default\":", json_value(d, k));
    if (k.bounded)
      o += str_cat(",\"min\":", json_number(k.lo), ",\"max\":", json_number(k.hi),
                   ",\"min_exclusive\":", k.lo_open ? "true" : "false",
                   ",\"max_exclusive\":", k.hi_open ? "true" : "false");
    if (k.hi_key) o += str_cat(",\"max_key\":", json::quote(k.hi_key));
    if (k.divides) o += str_cat(",\"divides\":", json::quote(k.divides));
    if (k.zero_means) o += str_cat(",\"zero_means\":", json::quote(k.zero_means));
    if (k.choices) {
      o += ",\"choices\":[";
      for (int i = 0; i < k.choices->count; ++i)
        o += str_cat(i ? "," : "", json::quote(k.choices->names[i]));
      o += str_cat("],\"choices_type\":", json::quote(k.choices->js_type));
    }
    if (k.applies_key) {
      o += str_cat(",\"applies_when\":{\"key\":", json::quote(k.applies_key), ",\"in\":[");
      for (size_t i = 0; i < k.applies_values.size(); ++i)
        o += str_cat(i ? "," : "", json::quote(k.applies_values[i]));
      o += "]}";
    }
    o += str_cat(",\"help\":", json::quote(key_help(k, nullptr)),
                 ",\"symbol\":", json::quote(k.symbol), ",\"group\":\"", group_name(k.group),
                 "\",\"in_weights\":", k.weights == InWeights::No ? "false" : "true", "}");
    out += str_cat(o, &k == &config_keys().back() ? "\n" : ",\n");
  }
  return out + "]\n";
}

std::string js_key(std::string_view snake_name) {
  std::string out;
  for (size_t i = 0; i < snake_name.size(); ++i) {
    const bool cap = snake_name[i] == '_' && i + 1 < snake_name.size();
    if (cap) ++i;
    out += cap ? char(std::toupper(static_cast<unsigned char>(snake_name[i]))) : snake_name[i];
  }
  return out;
}

}  // namespace attn
