// TrainerConfig, every setting of a model and its training, and the config schema: one row per
// setting (config_keys()) with its names, type, bounds or choices, help, group and whether a
// weights file keeps it. A key is declared here once, as a member with its default and a row;
// everything else is derived from the row: TrainerConfig::validate, the CLI's flags and help
// (cli/config_flags.cpp), the JS config (wasm/convert.cpp), the weights file's __metadata__
// (io/weights.cpp), `attn schema` and configSchema() (config_schema_json), and from those the web
// page's settings, URL hash keys, element attributes and anywidget traits. Adding a key:
// cpp/README.md, "Adding a config key".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/base/error.h"
#include "attn/base/names.h"
#include "attn/data/tasks.h"
#include "attn/model/model.h"

namespace attn {

// Defaults are the curriculum's DemoConfig.
struct TrainerConfig {
  int vocab_size = 64;  // V
  int d_model = 32;     // D
  int n_heads = 4;      // H
  int seq_len = 12;     // T, also the model's max context length C
  int batch_size = 16;  // B
  float lr = 5e-3f;
  uint64_t seed = 42;
  float attn_dropout = 0.0f;
  float out_dropout = 0.0f;
  std::string task = "repeat";
  int n_layers = 1;       // L: attention layers, in [1, kMaxLayers]
  bool residual = false;  // each layer adds its output to the residual stream
  // The transformer block; the defaults keep the curriculum's model.
  int kv_heads = 0;                   // K/V heads, dividing n_heads; 0 means n_heads
  std::string positions = "sinusoidal";  // kPositionKinds
  int max_seq_len = 0;                // the model's C (>= seq_len); 0 means seq_len
  std::string norm = "none";          // kNormKinds
  std::string norm_position = "pre";  // kNormPositions
  std::string ffn = "none";           // kFfnKinds
  int ffn_mult = 4;                   // the FFN's hidden width is ffn_mult * d_model
  // The token embedding's init std: the curriculum's 0.02; a larger one makes the
  // induction preset form its head sooner (bench/results/induction.md,
  // "The embedding's init scale").
  float emb_init_std = 0.02f;
  // Masked language modelling (objective mlm) and the attention variants; the defaults keep the
  // causal model with full attention.
  std::string objective = "causal";  // kObjectives
  float mask_rate = 0.15f;           // mlm: the chance that a token is selected
  std::string attention = "full";    // kAttentionKinds
  int window = 4;                    // W: the window's keys, the query's own included
  int stride = 4;                    // S: strided keys at multiples of S
  bool differential = false;         // two softmax maps per head, the second weighed by lambda
  std::string family = "lm";         // kFamilies: the kind of model (model/family.h)

  // Throws an Error of kind Config naming the first bad value; its key is the key's snake_case
  // name ("" for a config too large as a whole). Messages name keys as namer spells them
  // (nullptr: snake_case), so each edge words them its own way. Bounds keep the state under
  // kMaxStateElements floats so a hostile config cannot exhaust memory.
  void validate(KeyNamer namer = nullptr) const;
  // The model's part: one line per key of group Model or Block (below the rows).
  ModelConfig model_config() const;
};

// Upper bound on parameters + activations of one Trainer, in floats.
constexpr int64_t kMaxStateElements = 64LL * 1024 * 1024;

// ---- The schema

// A String key is always one of its choices (an enum's names).
enum class ConfigType { Int, UInt64, Float, Bool, String };
// What a key is about: the model's size and depth, the transformer block, training, the task.
enum class ConfigGroup { Model, Block, Training, Task };
// Where a weights file keeps a key (io/weights.h). No: not at all (training, the init). Shape:
// in the tensors' shapes. The others in __metadata__: Always in every file; Depth in any file
// but the curriculum's one-layer model's (written when a Depth, Block or Changed key is off its
// default); Block in a transformer-block model's (written when a Block or Changed key is off its
// default: ModelConfig::legacy() is false); Changed when the key itself is off its default. An absent key reads as its default, so older files
// keep their meaning. A new key that shapes the model is Changed: the file of every config that
// leaves it at its default keeps its bytes.
enum class InWeights { No, Shape, Always, Depth, Block, Changed };

struct ConfigKey {
  const char* name;  // snake_case: the member, the core's errors' key, the metadata key
  // kebab-case: the `attn` flag (without "--"), the URL hash key and the element attribute (the
  // anywidget trait is it with "_" for "-"); mostly the name's, shorter for a few (heads, batch).
  const char* flag;
  ConfigType type;
  ConfigGroup group;
  const char* symbol;  // the value's name in usage text: the model's notation ("V"), else e.g. "LR"
  // One line. "{key}" stands for another key, which the reader spells its own way; "{choices}"
  // for the choices ("a, b or c").
  const char* help;

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
  const char* hi_key = nullptr;      // a key whose value bounds this one from above too
  const char* divides = nullptr;     // a key whose value this one must divide
  const char* zero_means = nullptr;  // 0 stands for this key's value (kv_heads 0: n_heads)
  const EnumNames* choices = nullptr;  // a String's allowed values
  InWeights weights = InWeights::No;
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
  template <typename... Names>
  ConfigRow& applies_when(const char* key, Names... values) {
    applies_key = key, applies_values = {values...};
    return *this;
  }
};
inline ConfigRow config_row(const char* name, const char* flag, ConfigType type, ConfigGroup g,
                            const char* symbol, const char* help) {
  ConfigRow r;
  static_cast<ConfigKey&>(r) = ConfigKey{name, flag, type, g, symbol, help};
  return r;
}
inline ConfigRow config_key(const char* name, const char* flag, ConfigGroup g,
                            int TrainerConfig::*m, const char* symbol, const char* help) {
  ConfigRow r = config_row(name, flag, ConfigType::Int, g, symbol, help);
  return r.int_member = m, r;
}
inline ConfigRow config_key(const char* name, const char* flag, ConfigGroup g,
                            uint64_t TrainerConfig::*m, const char* symbol, const char* help) {
  ConfigRow r = config_row(name, flag, ConfigType::UInt64, g, symbol, help);
  return r.u64_member = m, r;
}
inline ConfigRow config_key(const char* name, const char* flag, ConfigGroup g,
                            float TrainerConfig::*m, const char* symbol, const char* help) {
  ConfigRow r = config_row(name, flag, ConfigType::Float, g, symbol, help);
  return r.float_member = m, r;
}
inline ConfigRow config_key(const char* name, const char* flag, ConfigGroup g,
                            bool TrainerConfig::*m, const char* help) {
  ConfigRow r = config_row(name, flag, ConfigType::Bool, g, "", help);
  return r.bool_member = m, r;
}
inline ConfigRow config_key(const char* name, const char* flag, ConfigGroup g,
                            std::string TrainerConfig::*m, const char* symbol, const char* help) {
  ConfigRow r = config_row(name, flag, ConfigType::String, g, symbol, help);
  return r.string_member = m, r;
}

// The rows, one per member of TrainerConfig, in its order (which is also the order of the JS
// config object, the flags and the page's controls). Bounds keep a Trainer's state under
// kMaxStateElements floats for any one key; the total is TrainerConfig::validate's to check.
inline std::vector<ConfigKey> config_key_rows() {
  using C = TrainerConfig;
  using G = ConfigGroup;
  using W = InWeights;
  const ConfigRow rows[] = {
      config_key("vocab_size", "vocab-size", G::Model, &C::vocab_size, "V", "vocabulary size")
          .in(1, 65536).kept(W::Shape),
      config_key("d_model", "d-model", G::Model, &C::d_model, "D",
                 "model width (even, divisible by {n_heads})")
          .in(2, 4096).kept(W::Shape),
      config_key("n_heads", "heads", G::Model, &C::n_heads, "H", "attention heads")
          .in(1, 4096).at_most("d_model").dividing("d_model").kept(W::Always),
      config_key("seq_len", "seq-len", G::Task, &C::seq_len, "T",
                 "sequence length (= max context length)")
          .in(1, 4096),
      config_key("batch_size", "batch", G::Training, &C::batch_size, "B", "sequences per step")
          .in(1, 4096),
      config_key("lr", "lr", G::Training, &C::lr, "LR", "Adam learning rate")
          .in(0, 10, true, false),
      config_key("seed", "seed", G::Training, &C::seed, "N",
                 "seed for weights, batches and dropout"),
      config_key("attn_dropout", "attn-dropout", G::Training, &C::attn_dropout, "P",
                 "dropout on attention weights, in [0, 1)")
          .in(0, 1, false, true),
      config_key("out_dropout", "out-dropout", G::Training, &C::out_dropout, "P",
                 "dropout on the attention output, in [0, 1)")
          .in(0, 1, false, true),
      config_key("task", "task", G::Task, &C::task, "NAME",
                 "training task: {choices} (text: the characters of a corpus)")
          .one_of(kTasks),
      config_key("n_layers", "layers", G::Model, &C::n_layers, "L", "attention layers, 1 to 4")
          .in(1, kMaxLayers).kept(W::Depth),
      config_key("residual", "residual", G::Model, &C::residual,
                 "add each layer's output to the residual stream (x = x + attn(x))")
          .kept(W::Depth),
      config_key("kv_heads", "kv-heads", G::Block, &C::kv_heads, "KV",
                 "key/value heads, dividing {n_heads} (1 = multi-query); 0 = {n_heads}")
          .in(0, 4096).at_most("n_heads").zero_is("n_heads").kept(W::Block),
      config_key("positions", "positions", G::Block, &C::positions, "KIND",
                 "position method: {choices}")
          .one_of(kPositionKinds).kept(W::Block),
      config_key("max_seq_len", "max-seq-len", G::Block, &C::max_seq_len, "C",
                 "longest sequence the model accepts (rows of a learned table), >= {seq_len}; "
                 "0 = {seq_len}")
          .in(0, 4096).zero_is("seq_len").kept(W::Block),
      config_key("norm", "norm", G::Block, &C::norm, "KIND", "norm in each block: {choices}")
          .one_of(kNormKinds).kept(W::Block),
      config_key("norm_position", "norm-position", G::Block, &C::norm_position, "WHERE",
                 "norm before each sublayer (pre) or after each sum (post)")
          .one_of(kNormPositions).kept(W::Block).applies_when("norm", "layernorm", "rmsnorm"),
      config_key("ffn", "ffn", G::Block, &C::ffn, "KIND", "feed-forward network: {choices}")
          .one_of(kFfnKinds).kept(W::Block),
      config_key("ffn_mult", "ffn-mult", G::Block, &C::ffn_mult, "M",
                 "FFN hidden width in multiples of {d_model}, 1 to 8")
          .in(1, FeedForward::kMaxFfnMult).kept(W::Block)
          .applies_when("ffn", "relu", "gelu", "swiglu"),
      config_key("emb_init_std", "emb-init-std", G::Training, &C::emb_init_std, "S",
                 "std of the token embedding's initial values (0.02 in the curriculum)")
          .in(0, 10, true, false),
      config_key("objective", "objective", G::Model, &C::objective, "KIND",
                 "causal (predict the next token) or mlm (masked language modelling: "
                 "bidirectional attention, predict the selected tokens; one more id, [MASK])")
          .one_of(kObjectives).kept(W::Changed),
      config_key("mask_rate", "mask-rate", G::Training, &C::mask_rate, "P",
                 "mlm: the chance that each token is selected (80% become [MASK], 10% another "
                 "token, 10% stay)")
          .in(0.01, 0.5).applies_when("objective", "mlm"),
      config_key("attention", "attention", G::Block, &C::attention, "KIND",
                 "which keys a query sees: full, window (the last {window}) or strided "
                 "(the window and every {stride}-th position)")
          .one_of(kAttentionKinds).kept(W::Changed),
      config_key("window", "window", G::Block, &C::window, "W",
                 "attention window in keys, the query's own included (window, strided)")
          .in(1, kMaxPatternSize).kept(W::Changed).applies_when("attention", "window", "strided"),
      config_key("stride", "stride", G::Block, &C::stride, "S",
                 "strided keys at the multiples of S (strided)")
          .in(1, kMaxPatternSize).kept(W::Changed).applies_when("attention", "strided"),
      config_key("differential", "differential", G::Block, &C::differential,
                 "differential attention: two softmax maps per head, the second weighed by a "
                 "learned lambda (0.5 at init)")
          .kept(W::Changed),
      config_key("family", "family", G::Model, &C::family, "NAME",
                 "the kind of model: {choices} (a language model, causal or masked)")
          .one_of(kFamilies).kept(W::Changed),
  };
  return std::vector<ConfigKey>(std::begin(rows), std::end(rows));
}

inline ModelConfig TrainerConfig::model_config() const {
  ModelConfig m;
  m.vocab_size = vocab_size;
  m.d_model = d_model;
  m.n_heads = n_heads;
  m.max_context_length = max_seq_len > 0 ? max_seq_len : seq_len;
  m.attn_dropout = attn_dropout;
  m.out_dropout = out_dropout;
  m.n_layers = n_layers;
  m.residual = residual;
  m.kv_heads = kv_heads;
  m.positions = parse_position_kind(positions);
  m.norm = parse_norm_kind(norm);
  m.norm_position = parse_norm_position(norm_position);
  m.ffn = parse_ffn_kind(ffn);
  m.ffn_mult = ffn_mult;
  m.emb_init_std = emb_init_std;
  m.objective = parse_objective(objective);
  if (m.objective == Objective::Mlm) ++m.vocab_size;  // the last id is [MASK]
  m.attention = parse_attention_kind(attention);
  m.window = window;
  m.stride = stride;
  m.differential = differential;
  return m;
}

// The inverse of model_config(), the training keys at their defaults, in one form per model:
// seq_len is m's C and max_seq_len 0, kv_heads 0 when it equals n_heads. So a key is off its
// default exactly when the model differs from the curriculum's in it (io/weights.cpp writes
// the metadata from it).
inline TrainerConfig trainer_config_of(const ModelConfig& m) {
  TrainerConfig c;
  c.vocab_size = m.real_vocab_size();  // an mlm model's [MASK] is not one of the task's ids
  c.d_model = m.d_model;
  c.n_heads = m.n_heads;
  c.seq_len = m.max_context_length;
  c.max_seq_len = 0;
  c.attn_dropout = m.attn_dropout;
  c.out_dropout = m.out_dropout;
  c.n_layers = m.n_layers;
  c.residual = m.residual;
  c.kv_heads = m.kv_heads_resolved() == m.n_heads ? 0 : m.kv_heads;
  c.positions = position_kind_name(m.positions);
  c.norm = norm_kind_name(m.norm);
  c.norm_position = norm_position_name(m.norm_position);
  c.ffn = ffn_kind_name(m.ffn);
  c.ffn_mult = m.ffn_mult;
  c.emb_init_std = m.emb_init_std;
  c.objective = objective_name(m.objective);
  c.attention = attention_kind_name(m.attention);
  c.window = m.window;
  c.stride = m.stride;
  c.differential = m.differential;
  return c;
}

// ---- Reading the schema (config.cpp)

// Every key, in TrainerConfig's order: config_key_rows(), made once.
const std::vector<ConfigKey>& config_keys();

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

// The shortest decimal that reads back as f (config() shows lr 0.005, not 0.004999999888).
double shortest_decimal(float f);

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
// numbers), max_key, divides and zero_means (when set), choices and choices_type (enums),
// applies_when ({"key", "in": [values]}, when set), help
// (keys spelled snake_case), symbol, group ("model", "block", "training" or "task") and
// in_weights (a weights file keeps it). One object per line.
std::string config_schema_json();

// A core config key (snake_case) in the JS API's spelling, camelCase: vocab_size -> vocabSize.
std::string js_key(std::string_view snake_name);

}  // namespace attn
