#include "cli/config_flags.h"

#include <cfloat>
#include <climits>
#include <cstdlib>
#include <string>
#include <string_view>

#include "attn/train/config.h"

namespace attn::cli {

std::string config_flag_name(std::string_view key) {
  const ConfigKey* k = find_config_key(key);
  return str_cat("--", k ? k->flag : std::string(key));
}

std::vector<Flag> trainer_flags() {
  const TrainerConfig d;
  std::vector<Flag> flags;
  for (const ConfigKey& k : config_keys()) {
    Flag f{k.flag, k.symbol, "", key_help(k, &config_flag_name)};
    f.families.assign(k.families.begin(), k.families.end());
    if (k.type != ConfigType::Bool || *k.symbol) f.default_value = value_text(d, k);
    flags.push_back(std::move(f));
  }
  return flags;
}

TrainerConfig trainer_config_from(const Args& a, const TrainerConfig* base) {
  TrainerConfig c = base ? *base : TrainerConfig();
  // Parsing checks only that a value converts (to an int, a float); TrainerConfig::validate
  // gives each key's rule, in flag names.
  for (const ConfigKey& k : config_keys()) {
    if (base && !a.has(k.flag)) continue;
    if (k.type == ConfigType::Bool && *k.symbol) {  // --bias true|false
      const std::string v = a.get(k.flag);
      if (v != "true" && v != "false")
        throw UsageError(str_cat("--", k.flag, " must be true or false, got '", v, "'"));
      key_value<bool>(c, k) = v == "true";
      continue;
    }
    switch (k.type) {
      case ConfigType::Int: key_value<int>(c, k) = a.get_int(k.flag, INT_MIN, INT_MAX); break;
      case ConfigType::UInt64: key_value<uint64_t>(c, k) = a.get_u64(k.flag); break;
      case ConfigType::Float:
        key_value<float>(c, k) = a.get_float(k.flag, -FLT_MAX, FLT_MAX);
        break;
      case ConfigType::Bool: key_value<bool>(c, k) = a.has(k.flag); break;
      case ConfigType::String: set_choice(c, k, a.get(k.flag), &config_flag_name); break;
    }
  }
  c.validate(&config_flag_name);
  return c;
}

std::vector<Flag> ablation_flags() {
  return {
      {"mask", "MODE", "causal", "causal, none, or inverted (-1e4 on the past: the future leaks)"},
      {"no-scale-scores", "", "", "do not divide the scores by sqrt(dk)"},
      {"heads-off", "LIST", "",
       "heads whose output is zero, 1-based, e.g. 1,3; with --layers, layer l's head h is "
       "l*H + h (layer-major, both 0-based) + 1"},
      {"heads-frozen", "LIST", "", "heads whose projections stop updating, 1-based, e.g. 2"},
  };
}

namespace {

// "1,3" -> flags (n_heads) with heads 1 and 3 set; empty -> none set.
std::vector<uint8_t> head_list(const Args& a, const std::string& name, int n_heads) {
  std::vector<uint8_t> flags(static_cast<size_t>(n_heads), 0);
  const std::string text = a.get(name);
  size_t pos = 0;
  while (pos <= text.size() && !text.empty()) {
    const size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    const long h = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || end != item.c_str() + item.size() || h < 1 || h > n_heads)
      throw UsageError(str_cat("--", name, ": '", item, "' is not a head number in [1, ", n_heads, "]"));
    flags[static_cast<size_t>(h - 1)] = 1;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return flags;
}

}  // namespace

Trainer::Ablation ablation_from(const Args& a, const TrainerConfig& c) {
  const int n_heads = c.model.n_layers * c.model.n_heads;  // global, layer-major
  Trainer::Ablation ab;
  try {
    ab.mask = parse_mask_mode(a.get("mask"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(str_cat("--mask: ", e.what()));
  }
  ab.scale_scores = !a.has("no-scale-scores");
  ab.heads_off = head_list(a, "heads-off", n_heads);
  ab.heads_frozen = head_list(a, "heads-frozen", n_heads);
  return ab;
}

}  // namespace attn::cli
