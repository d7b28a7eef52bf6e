// A config key's row: its names, type, bounds or choices, help, group, the model families it
// applies to and whether a weights file keeps it, over a member of the struct that holds its
// value. Each struct lists its own rows (ModelConfig: model/model.h; the training's and the task's:
// train/config.h), and the functions below read and check a key of any of them; TrainerConfig
// composes the structs and their rows into the schema (train/config.h).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "attn/base/error.h"
#include "attn/base/names.h"

namespace attn {

// A String key is always one of its choices (an enum's names).
enum class ConfigType { Int, UInt64, Float, Bool, String };
// What a key is about: the model's size and depth, the transformer block, training, the task.
enum class ConfigGroup { Model, Block, Training, Task };
// Where a weights file keeps a key (io/weights.h). No: not at all (training, the init). Shape:
// in the tensors' shapes. The others in __metadata__: Always in every file; Depth in any file
// but the curriculum's one-layer model's (written when a Depth, Block or Changed key is off its
// default); Block in a transformer-block model's (written when a Block or Changed key is off its
// default: ModelConfig::legacy() is false); Changed when the key itself is off its default. An
// absent key reads as its default, so older files keep their meaning. A new key that shapes the
// model is Changed: the file of every config that leaves it at its default keeps its bytes.
enum class InWeights { No, Shape, Always, Depth, Block, Changed };

struct ConfigKey {
  const char* name = "";  // snake_case: the core's errors' key, the metadata key
  // kebab-case: the `attn` flag (without "--"), the URL hash key and the element attribute (the
  // anywidget trait is it with "_" for "-"); mostly the name's, shorter for a few (heads, batch).
  const char* flag = "";
  ConfigType type = ConfigType::Int;
  ConfigGroup group = ConfigGroup::Model;
  // The value's name in usage text: the model's notation ("V"), else e.g. "LR".
  const char* symbol = "";
  // One line. "{key}" stands for another key, which the reader spells its own way; "{choices}"
  // for the choices ("a, b or c").
  const char* help = "";

  // The member, set by config_key() from a member pointer into the struct *owner: member gives
  // the address of an Int, UInt64, Float or Bool member (int, uint64_t, float, bool) in a struct;
  // a String's member (an enum or a std::string) is read as its name and set by its choice's index.
  const std::type_info* owner = nullptr;
  std::function<void*(void*)> member;
  std::function<std::string(const ConfigKey&, const void*)> choice_name;
  std::function<void(const ConfigKey&, void*, int)> set_choice;

  // A number's bounds; unbounded keys (the seed) skip the check. *_open excludes the bound.
  bool bounded = false;
  double lo = 0.0, hi = 0.0;
  bool lo_open = false, hi_open = false;
  const char* hi_key = nullptr;      // a key whose value bounds this one from above too
  const char* divides = nullptr;     // a key whose value this one must divide
  const char* zero_means = nullptr;  // 0 stands for this key's value (kv_heads 0: n_heads)
  const EnumNames* choices = nullptr;  // a String's allowed values
  InWeights weights = InWeights::No;
  // The model families the key applies to (the names of kFamilies); empty: every family.
  std::vector<const char*> families;
  // The key matters only while another key (a String's) holds one of these values (window:
  // attention window or strided); the config keeps it either way. The page hides it otherwise.
  const char* applies_key = nullptr;
  std::vector<const char*> applies_values{};
};

// Row builders, one per member type, and setters that return the row for chaining.
struct ConfigRow : ConfigKey {
  ConfigRow& in(double low, double high, bool low_open = false, bool high_open = false) {
    bounded = true;
    lo = low, hi = high, lo_open = low_open, hi_open = high_open;
    return *this;
  }
  ConfigRow& at_most(const char* key) { return hi_key = key, *this; }
  ConfigRow& dividing(const char* key) { return divides = key, *this; }
  ConfigRow& zero_is(const char* key) { return zero_means = key, *this; }
  ConfigRow& one_of(const EnumNames& names) { return choices = &names, *this; }
  ConfigRow& kept(InWeights where) { return weights = where, *this; }
  ConfigRow& for_families(std::initializer_list<const char*> names) {
    return families.assign(names), *this;
  }
  template <typename... Names>
  ConfigRow& applies_when(const char* key, Names... values) {
    applies_key = key, applies_values = {values...};
    return *this;
  }
  ConfigRow& applies_when(const char* key, std::vector<const char*> values) {
    applies_key = key, applies_values = std::move(values);
    return *this;
  }
};

namespace config_row_detail {
template <typename T> constexpr ConfigType scalar_type() {
  if constexpr (std::is_same_v<T, int>) return ConfigType::Int;
  if constexpr (std::is_same_v<T, uint64_t>) return ConfigType::UInt64;
  if constexpr (std::is_same_v<T, float>) return ConfigType::Float;
  return ConfigType::Bool;
}
}  // namespace config_row_detail

// A row over S's member m: an int, uint64_t, float or bool is that type's key; an enum or a
// std::string is a String key (give its choices with one_of).
template <typename S, typename T>
ConfigRow config_key(const char* name, const char* flag, ConfigGroup g, T S::*m,
                     const char* symbol, const char* help) {
  ConfigRow r;
  r.name = name, r.flag = flag, r.type = ConfigType::String, r.group = g;
  r.symbol = symbol, r.help = help;
  r.owner = &typeid(S);
  if constexpr (std::is_enum_v<T>) {
    r.choice_name = [m](const ConfigKey& k, const void* s) -> std::string {
      return k.choices->names[static_cast<int>(static_cast<const S*>(s)->*m)];
    };
    r.set_choice = [m](const ConfigKey&, void* s, int i) {
      static_cast<S*>(s)->*m = static_cast<T>(i);
    };
  } else if constexpr (std::is_same_v<T, std::string>) {
    r.choice_name = [m](const ConfigKey&, const void* s) { return static_cast<const S*>(s)->*m; };
    r.set_choice = [m](const ConfigKey& k, void* s, int i) {
      static_cast<S*>(s)->*m = k.choices->names[i];
    };
  } else {
    static_assert(std::is_same_v<T, int> || std::is_same_v<T, uint64_t> ||
                  std::is_same_v<T, float> || std::is_same_v<T, bool>);
    r.type = config_row_detail::scalar_type<T>();
    r.member = [m](void* s) -> void* { return &(static_cast<S*>(s)->*m); };
  }
  return r;
}
// A Bool key has no value to name in usage text.
template <typename S>
ConfigRow config_key(const char* name, const char* flag, ConfigGroup g, bool S::*m,
                     const char* help) {
  return config_key(name, flag, g, m, "", help);
}

// ---- Reading a row's member in its struct s (of k's owner)

// The member of an Int, UInt64, Float or Bool key; T must be its type.
template <typename T> T& row_value(const ConfigKey& k, void* s) {
  return *static_cast<T*>(k.member(s));
}
template <typename T> const T& row_value(const ConfigKey& k, const void* s) {
  return *static_cast<const T*>(k.member(const_cast<void*>(s)));
}

// A number key's value (Int, UInt64 or Float) as a double.
double row_number(const ConfigKey& k, const void* s);

// The value as text: integers in decimal, floats in the shortest decimal that reads back as the
// same float ("0.005", "0"), booleans "true"/"false", a String's name.
std::string row_text(const ConfigKey& k, const void* s);

// Sets k from text written by row_text; false (s unchanged) for text that is not such a value: an
// integer in decimal within the member's type, a finite float, true or false, or one of the
// choices. The key's bounds are check_row's to check.
bool row_set_text(const ConfigKey& k, void* s, const std::string& text);

// Sets a String key to the choice named name; anything else throws an Error of kind Config keyed
// by k, its message naming k as namer spells it and the choices.
void row_set_choice(const ConfigKey& k, void* s, const std::string& name, KeyNamer namer);

// Copies k's value from one struct of its owner to another.
void row_copy(const ConfigKey& k, const void* from, void* to);

// Checks k's value in s on its row (choices, bounds, hi_key, divides; the keys those name are
// looked up in rows, over the same struct); throws an Error of kind Config keyed by k's name
// (divides: by the whole's), the message naming keys as namer spells them.
void check_row(const ConfigKey& k, const void* s, const std::vector<ConfigKey>& rows,
               KeyNamer namer);

// The row named name in rows, or nullptr.
const ConfigKey* find_row(const std::vector<ConfigKey>& rows, std::string_view name);

// Whether k applies to the model family named family (k lists none: every family).
bool applies_to(const ConfigKey& k, std::string_view family);

// The shortest decimal that reads back as f (config() shows lr 0.005, not 0.004999999888).
double shortest_decimal(float f);

}  // namespace attn
