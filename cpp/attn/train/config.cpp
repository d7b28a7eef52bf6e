#include "attn/train/config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <typeinfo>

#include "attn/base/json.h"
#include "attn/base/tensor.h"
#include "attn/model/family.h"

namespace attn {

namespace {

// Rough count of floats a Trainer holds, from the model's report (model_report): parameters x 4
// (value, grad, Adam m, v), the activations and as much again for their gradients, and the
// position table (C,D).
int64_t state_elements(const TrainerConfig& c) {
  const ModelConfig m = c.model_config();
  const ModuleReport r = model_report(m, c.training.batch_size, c.task.seq_len);
  return 4 * r.param_count() + 2 * r.activations + int64_t(m.max_context_length) * m.d_model;
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

// The schema's order of the keys (the JS config object's, the flags', the controls'): the order
// in which they were added, the parts interleaved. A new key goes last.
constexpr const char* kKeyOrder[] = {
    "vocab_size", "d_model",   "n_heads",   "seq_len",       "batch_size",  "lr",
    "seed",       "attn_dropout", "out_dropout", "task",      "n_layers",    "residual",
    "kv_heads",   "positions", "max_seq_len", "norm",        "norm_position", "ffn",
    "ffn_mult",   "emb_init_std", "objective", "mask_rate",  "attention",   "window",
    "stride",     "differential", "family",
    "tie_embeddings", "bias", "pos_init_std", "weight_decay", "adam_beta2", "grad_clip",
    "builtin_text", "markov_order", "markov_symbols", "lag"};

// The three structs' rows in kKeyOrder; throws std::logic_error when a row is missing from the
// order or the order names a key that no struct has.
std::vector<ConfigKey> composed_keys() {
  std::vector<const ConfigKey*> all;
  for (const auto* rows : {&model_config_keys(), &training_config_keys(), &task_config_keys()})
    for (const ConfigKey& k : *rows) all.push_back(&k);
  if (all.size() != std::size(kKeyOrder))
    throw std::logic_error(str_cat("the config has ", all.size(), " keys but kKeyOrder ",
                                   std::size(kKeyOrder)));
  std::vector<ConfigKey> keys;
  for (const char* name : kKeyOrder) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const ConfigKey* k) {
      return std::string_view(k->name) == name;
    });
    if (it == all.end()) throw std::logic_error(str_cat("no config key ", name));
    keys.push_back(**it);
  }
  return keys;
}

}  // namespace

const std::vector<ConfigKey>& training_config_keys() {
  using T = TrainingConfig;
  using G = ConfigGroup;
  static const ConfigRow rows[] = {
      config_key("batch_size", "batch", G::Training, &T::batch_size, "B", "sequences per step")
          .in(1, 4096),
      config_key("lr", "lr", G::Training, &T::lr, "LR", "Adam learning rate")
          .in(0, 10, true, false),
      config_key("seed", "seed", G::Training, &T::seed, "N",
                 "seed for weights, batches and dropout"),
      config_key("mask_rate", "mask-rate", G::Training, &T::mask_rate, "P",
                 "mlm: the chance that each token is selected (80% become [MASK], 10% another "
                 "token, 10% stay)")
          .in(0.01, 0.5).applies_when("objective", "mlm").for_families({"lm"}),
      config_key("weight_decay", "weight-decay", G::Training, &T::weight_decay, "WD",
                 "AdamW's decoupled weight decay on every parameter, p *= 1 - lr WD before the "
                 "Adam step (0: Adam)")
          .in(0, 1),
      config_key("adam_beta2", "adam-beta2", G::Training, &T::adam_beta2, "B2",
                 "Adam's beta2, the decay of the squared-gradient average")
          .in(0, 1, false, true),
      config_key("grad_clip", "grad-clip", G::Training, &T::grad_clip, "C",
                 "clip the gradients' global L2 norm to C before each step (0: off)")
          .in(0, 1e6),
  };
  static const std::vector<ConfigKey> keys(std::begin(rows), std::end(rows));
  return keys;
}

const std::vector<ConfigKey>& task_config_keys() {
  using T = TaskConfig;
  using G = ConfigGroup;
  static const ConfigRow rows[] = {
      config_key("task", "task", G::Task, &T::name, "NAME",
                 "training task: {choices} (text: the characters of a corpus)")
          .one_of(kTasks),
      config_key("seq_len", "seq-len", G::Task, &T::seq_len, "T",
                 "sequence length (= max context length)")
          .in(1, 4096),
      config_key("builtin_text", "builtin-text", G::Task, &T::builtin_text, "NAME",
                 "the text task's built-in text, when no other is given: {choices}")
          .one_of(kBuiltinTexts).applies_when("task", "text"),
      config_key("markov_order", "markov-order", G::Task, &T::markov_order, "K",
                 "markov: the order of the chain, how many symbols the next one depends on")
          .in(1, 3).applies_when("task", "markov"),
      config_key("markov_symbols", "markov-symbols", G::Task, &T::markov_symbols, "S",
                 "markov: the chain's symbols, the model's vocabulary (its {vocab_size} is ignored)")
          .in(2, 32).applies_when("task", "markov"),
      config_key("lag", "lag", G::Task, &T::lag, "K",
                 "lag: the target at position t is the token at t - K (must be < {seq_len})")
          .in(1, 4095).applies_when("task", "lag"),
  };
  static const std::vector<ConfigKey> keys(std::begin(rows), std::end(rows));
  return keys;
}

ModelConfig TrainerConfig::model_config() const {
  ModelConfig m = model;
  if (m.objective == Objective::Mlm) ++m.vocab_size;  // the last id is [MASK]
  if (m.max_context_length == 0) m.max_context_length = task.seq_len;
  return m;
}

TrainerConfig trainer_config_of(const ModelConfig& m) {
  TrainerConfig c;
  c.model = m;
  c.model.vocab_size = m.real_vocab_size();  // an mlm model's [MASK] is not one of the task's ids
  c.task.seq_len = m.max_context_length;
  c.model.max_context_length = 0;
  if (m.kv_heads_resolved() == m.n_heads) c.model.kv_heads = 0;
  return c;
}

std::string block_keys_text(const ModelConfig& m) {
  if (m.legacy()) return "";
  const TrainerConfig c = trainer_config_of(m);
  std::string out;
  for (const ConfigKey& k : config_keys()) {
    if (k.weights != InWeights::Block && k.weights != InWeights::Changed) continue;
    const bool other = k.zero_means && number_value(c, k) == 0;
    out += str_cat(" ", k.name, "=", value_text(c, other ? *find_config_key(k.zero_means) : k));
  }
  return out;
}

void TrainerConfig::validate(KeyNamer namer) const {
  check_config_keys(*this, namer);
  check_family_keys(*this, row_text(*find_config_key("family"), &model), config_keys(), namer);
  require_config(model.max_context_length == 0 || model.max_context_length >= task.seq_len,
                 "max_seq_len", key_name("max_seq_len", namer), " (", model.max_context_length,
                 ") must be 0 or >= ", key_name("seq_len", namer), " (", task.seq_len, ")");
  model_config().validate(namer);
  const Task kind = parse_task(task.name);
  require_config(kind != Task::Lag || task.lag < task.seq_len, "lag", key_name("lag", namer), " (",
                 task.lag, ") must be < ", key_name("seq_len", namer), " (", task.seq_len, ")");
  try {
    check_task(kind, model.vocab_size, task.seq_len, task.params());
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::Config, "task", str_cat(key_name("task", namer), ": ", e.what()));
  }
  // No single key: any of the four sizes can bring it down.
  const int64_t n = state_elements(*this);
  require_config(n <= kMaxStateElements, "", "this config needs about ", n,
                 " floats of state, more than the ", kMaxStateElements, " allowed; reduce ",
                 key_name("vocab_size", namer), ", ", key_name("d_model", namer), ", ",
                 key_name("seq_len", namer), " or ", key_name("batch_size", namer));
}

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = composed_keys();
  return keys;
}

std::vector<const ConfigKey*> keys_for_family(std::string_view family,
                                              const std::vector<ConfigKey>& rows) {
  std::vector<const ConfigKey*> out;
  for (const ConfigKey& k : rows)
    if (applies_to(k, family)) out.push_back(&k);
  return out;
}

void check_family_keys(const TrainerConfig& c, std::string_view family,
                       const std::vector<ConfigKey>& rows, KeyNamer namer) {
  for (const ConfigKey& k : rows)
    require_config(applies_to(k, family) || at_default(c, k), k.name, key_name(k.name, namer),
                   " (", value_text(c, k), ") does not apply to ", key_name("family", namer),
                   " ", family);
}

void* key_owner(TrainerConfig& c, const ConfigKey& k) {
  return const_cast<void*>(key_owner(static_cast<const TrainerConfig&>(c), k));
}

const void* key_owner(const TrainerConfig& c, const ConfigKey& k) {
  if (*k.owner == typeid(ModelConfig)) return &c.model;
  if (*k.owner == typeid(TrainingConfig)) return &c.training;
  if (*k.owner == typeid(TaskConfig)) return &c.task;
  throw std::logic_error(str_cat("config key ", k.name, " is a member of no part of the config"));
}

void set_choice(TrainerConfig& c, const ConfigKey& k, const std::string& name, KeyNamer namer) {
  row_set_choice(k, key_owner(c, k), name, namer);
}

const ConfigKey* find_config_key(std::string_view snake_name) {
  return find_row(config_keys(), snake_name);
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
  return row_number(k, key_owner(c, k));
}

std::string value_text(const TrainerConfig& c, const ConfigKey& k) {
  return row_text(k, key_owner(c, k));
}

bool at_default(const TrainerConfig& c, const ConfigKey& k) {
  return value_text(c, k) == value_text(TrainerConfig(), k);
}

bool set_value_text(TrainerConfig& c, const ConfigKey& k, const std::string& text) {
  return row_set_text(k, key_owner(c, k), text);
}

void check_config_keys(const TrainerConfig& c, KeyNamer namer) {
  for (const ConfigKey& k : config_keys()) check_row(k, key_owner(c, k), config_keys(), namer);
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
    std::string families;
    for (int i = 0; i < kFamilies.count; ++i)
      if (applies_to(k, kFamilies.names[i]))
        families += str_cat(families.empty() ? "" : ",", json::quote(kFamilies.names[i]));
    o += str_cat(",\"help\":", json::quote(key_help(k, nullptr)),
                 ",\"symbol\":", json::quote(k.symbol), ",\"group\":\"", group_name(k.group),
                 "\",\"in_weights\":", k.weights == InWeights::No ? "false" : "true",
                 ",\"families\":[", families, "]}");
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
