// TrainerConfig, every setting of a model and its training, and the config schema: one row per
// setting (config_keys()) with its names, type, bounds or choices, help, group, families and
// whether a weights file keeps it (base/config_row.h). A key is declared once, as a member of
// its struct with its default and a row beside the struct's others: ModelConfig's in
// model/model_config.cpp, TrainingConfig's and TaskConfig's in config.cpp. Everything else is
// derived from the rows: the validations, the CLI's flags and help (cli/config_flags.cpp), the
// JS config (wasm/convert.cpp), the weights file's __metadata__ (io/weights.cpp), `attn schema`
// and configSchema() (config_schema_json), and from those the web page's settings, URL hash
// keys, element attributes and anywidget traits. Adding a key: cpp/README.md, "Adding a config
// key".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/base/config_row.h"
#include "attn/base/error.h"
#include "attn/base/names.h"
#include "attn/data/tasks.h"
#include "attn/data/text.h"
#include "attn/model/model.h"

namespace attn {

// The training's keys: its rows are training_config_keys().
struct TrainingConfig {
  int batch_size = 16;  // B
  float lr = 5e-3f;
  uint64_t seed = 42;
  float mask_rate = 0.15f;  // mlm: the chance that a token is selected
  // AdamW's decoupled weight decay (0: Adam), Adam's beta2, and the gradients' global L2 norm
  // clipped to grad_clip (0: off), as torch.nn.utils.clip_grad_norm_.
  float weight_decay = 0.0f;
  float adam_beta2 = 0.999f;
  float grad_clip = 0.0f;
};

// The task's keys: its rows are task_config_keys().
struct TaskConfig {
  std::string name = "repeat";  // the key task: one of kTasks
  int seq_len = 12;             // T, also the model's max context length C (max_seq_len 0)
  // text: the built-in text a Trainer given no corpus trains on.
  BuiltinText builtin_text = BuiltinText::Sentences;
  int markov_order = 2;         // markov: k, the symbols the next one depends on
  int markov_symbols = 8;       // markov: S, the chain's ids (the model's vocabulary)
  int lag = 1;                  // lag: k, the target at t is the input at t - k

  // The settings the tasks read (data/tasks.h).
  TaskParams params() const {
    TaskParams p;
    p.markov_order = markov_order, p.markov_symbols = markov_symbols, p.lag = lag;
    return p;
  }
};

// A trainer's config: the model's, the training's and the task's, each with its own rows, which
// config_keys() composes. Defaults are the curriculum's DemoConfig.
struct TrainerConfig {
  // The model's keys as written: vocab_size counts the task's ids and max_context_length holds
  // the key max_seq_len (0: seq_len); model_config() resolves both.
  ModelConfig model = model_keys_default();
  TrainingConfig training;
  TaskConfig task;

  // Throws an Error of kind Config naming the first bad value; its key is the key's snake_case
  // name ("" for a config too large as a whole). Messages name keys as namer spells them
  // (nullptr: snake_case), so each edge words them its own way. Bounds keep the state under
  // kMaxStateElements floats so a hostile config cannot exhaust memory.
  void validate(KeyNamer namer = nullptr) const;
  // The model to build: model with [MASK] added to an mlm model's ids and C resolved.
  ModelConfig model_config() const;

  static ModelConfig model_keys_default() {
    ModelConfig m;
    m.max_context_length = 0;  // max_seq_len's default
    return m;
  }
};

// The curriculum's config at other sizes: V, D, H, T (seq_len) and B (batch_size).
inline TrainerConfig sized_config(int V, int D, int H, int T, int B) {
  TrainerConfig c;
  c.model.vocab_size = V, c.model.d_model = D, c.model.n_heads = H;
  c.task.seq_len = T, c.training.batch_size = B;
  return c;
}

// The inverse of model_config(), the training keys at their defaults, in one form per model:
// seq_len is m's C and max_seq_len 0, kv_heads 0 when it equals n_heads. So a key is off its
// default exactly when the model differs from the curriculum's in it (io/weights.cpp writes
// the metadata from it).
TrainerConfig trainer_config_of(const ModelConfig& m);

// The keys a block model's weights file keeps (InWeights Block or Changed), " name=value" each (a
// 0 that stands for another key shown as that key's value); "" for a legacy() model.
std::string block_keys_text(const ModelConfig& m);

// Upper bound on parameters + activations of one Trainer, in floats.
constexpr int64_t kMaxStateElements = 64LL * 1024 * 1024;

// ---- The schema

// The training's rows and the task's, one per member of their structs.
const std::vector<ConfigKey>& training_config_keys();
const std::vector<ConfigKey>& task_config_keys();

// ---- Reading the schema (config.cpp)

// Every key: the model's, the training's and the task's rows, in the schema's order (that of
// the JS config object, the flags and the page's controls; a new key goes last), made once.
const std::vector<ConfigKey>& config_keys();

// The keys that apply to the model family named family, in config_keys()' order (rows: any
// table of them, e.g. config_keys()).
std::vector<const ConfigKey*> keys_for_family(std::string_view family,
                                              const std::vector<ConfigKey>& rows);

// Throws an Error of kind Config keyed by the first key of rows that is off its default in c but
// does not apply to family, naming the key (as namer spells it) and the family. A key at its
// default is not set: the edges fill every key.
void check_family_keys(const TrainerConfig& c, std::string_view family,
                       const std::vector<ConfigKey>& rows, KeyNamer namer);

// The struct of c that holds k's member (ModelConfig, TrainingConfig or TaskConfig).
void* key_owner(TrainerConfig& c, const ConfigKey& k);
const void* key_owner(const TrainerConfig& c, const ConfigKey& k);

// k's member in c; T must be its type (Int: int, UInt64: uint64_t, Float: float, Bool: bool).
template <typename T> T& key_value(TrainerConfig& c, const ConfigKey& k) {
  return row_value<T>(k, key_owner(c, k));
}
template <typename T> const T& key_value(const TrainerConfig& c, const ConfigKey& k) {
  return row_value<T>(k, key_owner(c, k));
}

// Sets a String key to the choice named name, or throws an Error of kind Config naming the key
// (as namer spells it) and the choices.
void set_choice(TrainerConfig& c, const ConfigKey& k, const std::string& name, KeyNamer namer);

// The key named snake_name, or nullptr.
const ConfigKey* find_config_key(std::string_view snake_name);

// k's help with every "{key}" spelled as namer spells it and "{choices}" filled in.
std::string key_help(const ConfigKey& k, KeyNamer namer);

// A number key's value (Int, UInt64 or Float) as a double.
double number_value(const TrainerConfig& c, const ConfigKey& k);

// The value as text: integers in decimal, floats in the shortest decimal that reads back as the
// same float ("0.005", "0"), booleans "true"/"false", strings as they are.
std::string value_text(const TrainerConfig& c, const ConfigKey& k);

// Whether c has k at its default (TrainerConfig{}'s value).
bool at_default(const TrainerConfig& c, const ConfigKey& k);

// Sets k in c from text written by value_text; false (c unchanged) for text that is not such a
// value: an integer in decimal within the member's type, a finite float, true or false, or one of
// the choices. The key's bounds are validate()'s to check.
bool set_value_text(TrainerConfig& c, const ConfigKey& k, const std::string& text);

// Checks each key of c on its own row (bounds, hi_key, divides, choices), in table order;
// throws an Error of kind Config keyed by the key's snake_case name, the message naming keys as
// namer spells them. The rules across keys are TrainerConfig::validate's.
void check_config_keys(const TrainerConfig& c, KeyNamer namer);

// The schema as JSON, what `attn schema` prints and configSchema() returns: an array of one
// object per key, in table order, with name, flag, js (camelCase), type ("int", "uint64",
// "float", "bool" or "enum"), default, min and max with min_exclusive and max_exclusive (bounded
// numbers), max_key, divides and zero_means (when set), choices and choices_type (enums), help
// (keys spelled snake_case), symbol, group ("model", "block", "training" or "task"), in_weights
// (a weights file keeps it) and families (the names of those it applies to). One object per line.
std::string config_schema_json();

// A core config key (snake_case) in the JS API's spelling, camelCase: vocab_size -> vocabSize.
std::string js_key(std::string_view snake_name);

}  // namespace attn
