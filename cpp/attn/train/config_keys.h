// The Trainer config's keys as one table, in the core's only spelling (snake_case): each key's
// type, bounds, default and the member it reads and writes. TrainerConfig::validate checks a
// config against it, and the edges derive from it their own spellings (camelCase in the JS
// bindings, --kebab-case flags in the CLI), their readers and their help. A new key is one row
// here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/train/config.h"

namespace attn {

enum class ConfigType { Int, UInt64, Float, Bool, String };

struct ConfigKey {
  const char* name;    // snake_case, e.g. "vocab_size"
  ConfigType type;
  const char* symbol;  // the value's name in usage text: the model's notation ("V"), else e.g. "LR"
  // One line for help text. "{key}" stands for another key, which the reader spells its own way.
  const char* doc;

  // The member of TrainerConfig: the one pointer of the key's type is set, the others are null.
  int TrainerConfig::*int_member = nullptr;
  uint64_t TrainerConfig::*u64_member = nullptr;
  float TrainerConfig::*float_member = nullptr;
  bool TrainerConfig::*bool_member = nullptr;
  std::string TrainerConfig::*string_member = nullptr;

  // A number's bounds; unbounded keys (the seed) skip the check. *_open excludes the bound.
  bool bounded = false;
  double lo = 0.0, hi = 0.0;
  bool lo_open = false, hi_open = false;
  const char* hi_key = nullptr;   // a key whose value bounds this one from above too
  const char* divides = nullptr;  // a key whose value this one must divide
  // A String's own check (the value alone, not how it fits the rest): throws
  // std::invalid_argument with a message that does not name the key.
  void (*check_text)(const std::string&) = nullptr;
};

// Every key, in TrainerConfig's order (which is also the order of the JS config object).
const std::vector<ConfigKey>& config_keys();

// The key named snake_name, or nullptr.
const ConfigKey* find_config_key(std::string_view snake_name);

// doc with every "{key}" replaced by that key's name as namer spells it.
std::string expand_keys(std::string_view doc, KeyNamer namer);

// A number key's value (Int, UInt64 or Float) as a double.
double number_value(const TrainerConfig& c, const ConfigKey& k);

// The value as text: integers in decimal, floats in the shortest decimal that reads back as the
// same float ("0.005", "0"), booleans "true"/"false", strings as they are.
std::string value_text(const TrainerConfig& c, const ConfigKey& k);

// The shortest decimal that reads back as f (config() shows lr 0.005, not 0.004999999888).
double shortest_decimal(float f);

// Checks each key of c on its own row (type bounds, hi_key, divides, check_text), in table order;
// throws an Error of kind Config keyed by the key's snake_case name, the message naming keys as
// namer spells them. The rules across keys are TrainerConfig::validate's.
void check_config_keys(const TrainerConfig& c, KeyNamer namer);

}  // namespace attn
