// The config schema (attn/train/config.h): the members its rows reach, validate() enforcing each
// row's bounds under the row's own name, the text and JSON forms of the rows, and the mapping to
// the model's config. The public names and defaults are tests/contract/public-names.txt's.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "attn/base/error.h"
#include "attn/base/json.h"
#include "attn/train/config.h"

using namespace attn;

namespace {

// The message and key of what validate() throws ("" and "" when it accepts c).
struct Refusal {
  std::string key, message;
};
Refusal refusal(const TrainerConfig& c, KeyNamer namer = nullptr) {
  try {
    c.validate(namer);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Config);
    return {e.key(), e.what()};
  }
  return {};
}

std::string bracketed(std::string_view key) { return "<" + std::string(key) + ">"; }

// A value of k other than its default, as text: the next integer (or the one before, at the
// upper bound), the float plus a half, the other boolean, the last choice but the default.
std::string off_default(const ConfigKey& k) {
  const TrainerConfig d;
  switch (k.type) {
    case ConfigType::Int: {
      const int v = key_value<int>(d, k);
      return std::to_string(k.bounded && v + 1 > k.hi ? v - 1 : v + 1);
    }
    case ConfigType::UInt64: return std::to_string(key_value<uint64_t>(d, k) + 1);
    case ConfigType::Float: return str_cat(key_value<float>(d, k) + 0.5f);
    case ConfigType::Bool: return key_value<bool>(d, k) ? "false" : "true";
    case ConfigType::String:
      for (int i = k.choices->count - 1; i >= 0; --i)
        if (k.choices->names[i] != value_text(d, k)) return k.choices->names[i];
  }
  return "";
}

}  // namespace

TEST_CASE("config keys: one row per name and flag, each found by its name", "[config]") {
  const std::vector<ConfigKey>& keys = config_keys();
  for (size_t i = 0; i < keys.size(); ++i) {
    CAPTURE(keys[i].name);
    CHECK(find_config_key(keys[i].name) == &keys[i]);
    for (size_t j = 0; j < i; ++j) CHECK(std::string(keys[j].flag) != keys[i].flag);
    // A member of one of the three structs, read as the row's type says.
    REQUIRE(keys[i].owner != nullptr);
    const bool choice = keys[i].type == ConfigType::String;
    CHECK(bool(keys[i].member) == !choice);
    CHECK(bool(keys[i].choice_name) == choice);
    CHECK(bool(keys[i].set_choice) == choice);
    CHECK((keys[i].type == ConfigType::String) == (keys[i].choices != nullptr));
  }
  CHECK(find_config_key("vocabSize") == nullptr);
}

TEST_CASE("config keys: every value reads back from its text, and every default is valid",
          "[config]") {
  const TrainerConfig d;
  CHECK_NOTHROW(d.validate());
  for (const ConfigKey& k : config_keys()) {
    CAPTURE(k.name);
    TrainerConfig c;
    CHECK(at_default(c, k));
    REQUIRE(set_value_text(c, k, value_text(d, k)));
    CHECK(value_text(c, k) == value_text(d, k));
    CHECK_FALSE(set_value_text(c, k, "x"));
    CHECK_FALSE(set_value_text(c, k, ""));
    CHECK(value_text(c, k) == value_text(d, k));  // unchanged by a refused text
  }
  TrainerConfig c;
  CHECK(set_value_text(c, *find_config_key("lr"), "0.25"));
  CHECK(c.training.lr == 0.25f);
  CHECK_FALSE(set_value_text(c, *find_config_key("lr"), "inf"));
  CHECK_FALSE(set_value_text(c, *find_config_key("n_heads"), " 4"));
  CHECK_FALSE(set_value_text(c, *find_config_key("n_heads"), "99999999999"));
  CHECK_FALSE(set_value_text(c, *find_config_key("seed"), "-1"));
  CHECK(set_value_text(c, *find_config_key("ffn"), "gelu"));
  CHECK(c.model.ffn == FfnKind::GELU);
  CHECK_FALSE(at_default(c, *find_config_key("ffn")));
  CHECK_FALSE(set_value_text(c, *find_config_key("ffn"), "GELU"));
}

TEST_CASE("config keys: the model's config and back; ModelConfig's defaults are the schema's",
          "[config]") {
  // A ModelConfig built without the schema has every model key at the schema's default.
  const TrainerConfig from_model = trainer_config_of(ModelConfig());
  for (const ConfigKey& k : config_keys()) {
    CAPTURE(k.name);
    CHECK(at_default(from_model, k));
  }
  // Every key of the model's struct survives model_config() and trainer_config_of(): each set
  // off its default, from the rows, so that a new model key cannot be left out.
  TrainerConfig c;
  c.task.seq_len = 9;
  for (const ConfigKey& k : model_config_keys()) {
    CAPTURE(k.name);
    if (k.type == ConfigType::String && k.choices->count == 1) continue;  // family: lm only
    REQUIRE(set_value_text(c, k, off_default(k)));
    CHECK_FALSE(at_default(c, k));
  }
  const TrainerConfig back = trainer_config_of(c.model_config());
  for (const ConfigKey& k : model_config_keys()) {
    CAPTURE(k.name);
    // max_seq_len's one form is 0: the model's C comes back as seq_len.
    if (std::string(k.name) == "max_seq_len") continue;
    CHECK(value_text(back, k) == value_text(c, k));
  }
  CHECK(back.task.seq_len == c.model.max_context_length);
  CHECK(back.model.max_context_length == 0);
  c = TrainerConfig();
  // One form per model: kv_heads equal to n_heads is 0, max_seq_len becomes seq_len.
  c.model.n_heads = 6, c.model.kv_heads = 6, c.model.max_context_length = 12;
  const TrainerConfig one = trainer_config_of(c.model_config());
  CHECK(one.model.kv_heads == 0);
  CHECK(one.model.max_context_length == 0);
  CHECK(one.task.seq_len == 12);
}

TEST_CASE("config keys: the schema is the model's, the training's and the task's rows, each key "
          "once, each through its own struct",
          "[config]") {
  const std::vector<ConfigKey>& keys = config_keys();
  const std::pair<const std::vector<ConfigKey>*, const std::type_info*> parts[] = {
      {&model_config_keys(), &typeid(ModelConfig)},
      {&training_config_keys(), &typeid(TrainingConfig)},
      {&task_config_keys(), &typeid(TaskConfig)},
  };
  size_t total = 0;
  for (const auto& [rows, owner] : parts) {
    total += rows->size();
    for (const ConfigKey& row : *rows) {
      CAPTURE(row.name);
      CHECK(*row.owner == *owner);
      const ConfigKey* k = find_config_key(row.name);
      REQUIRE(k != nullptr);
      CHECK(*k->owner == *owner);
      CHECK(std::string(k->flag) == row.flag);
    }
  }
  CHECK(keys.size() == total);  // no key lost, none twice (names are unique: above)
  // Each key set through the trainer's config lands in its own struct and nowhere else.
  for (const ConfigKey& k : keys) {
    CAPTURE(k.name);
    if (k.type == ConfigType::String && k.choices->count == 1) continue;
    TrainerConfig c;
    REQUIRE(set_value_text(c, k, off_default(k)));
    CHECK(row_text(k, key_owner(c, k)) == off_default(k));
    for (const ConfigKey& other : keys)
      if (&other != &k) CHECK(at_default(c, other));
  }
}

TEST_CASE("config keys: which keys apply to a family, and a key set for a family it does not "
          "apply to is refused",
          "[config]") {
  // Every key applies to lm, the one family; a family the block keys do not name (a test-only
  // name) keeps only the keys of every family.
  CHECK(keys_for_family("lm", config_keys()).size() == config_keys().size());
  const std::vector<const ConfigKey*> other = keys_for_family("test_family", config_keys());
  std::vector<std::string> names;
  for (const ConfigKey* k : other) names.push_back(k->name);
  for (const ConfigKey& k : config_keys()) {
    CAPTURE(k.name);
    const bool kept = std::find(names.begin(), names.end(), k.name) != names.end();
    CHECK(kept == k.families.empty());
    if (k.group == ConfigGroup::Block) CHECK_FALSE(kept);
  }
  for (const char* k : {"vocab_size", "d_model", "seq_len", "lr", "task", "family"})
    CHECK(std::find(names.begin(), names.end(), k) != names.end());
  // Rows over a struct of the test's own, through the same functions.
  struct Probe {
    int width = 1;
    bool gate = false;
  };
  const std::vector<ConfigKey> rows = {
      config_key("width", "width", ConfigGroup::Model, &Probe::width, "W", "width").in(1, 8),
      config_key("gate", "gate", ConfigGroup::Block, &Probe::gate, "a gate")
          .for_families({"test_family", "lm"}),
  };
  CHECK(keys_for_family("lm", rows).size() == 2);
  CHECK(keys_for_family("seq2seq", rows).size() == 1);
  CHECK(keys_for_family("seq2seq", rows)[0] == &rows[0]);
  Probe p;
  row_value<bool>(rows[1], &p) = true;
  CHECK(p.gate);

  // The default config passes under any family: a key at its default is not set.
  const TrainerConfig d;
  CHECK_NOTHROW(check_family_keys(d, "test_family", config_keys(), nullptr));
  TrainerConfig c;
  c.model.residual = true;
  c.model.norm = NormKind::RMSNorm;
  CHECK_NOTHROW(check_family_keys(c, "lm", config_keys(), nullptr));
  CHECK_NOTHROW(c.validate());
  try {
    check_family_keys(c, "test_family", config_keys(), &bracketed);
    FAIL("norm was accepted for test_family");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Config);
    CHECK(std::string(e.key()) == "norm");
    CHECK(std::string(e.what()) == "<norm> (rmsnorm) does not apply to <family> test_family");
  }
  // residual applies to every family: it passes alone.
  c.model.norm = NormKind::None;
  CHECK_NOTHROW(check_family_keys(c, "test_family", config_keys(), nullptr));
}

TEST_CASE("config keys: the schema as JSON, one object per row with the row's fields",
          "[config]") {
  const json::Value schema = json::parse(config_schema_json());
  REQUIRE(schema.is_array());
  REQUIRE(schema.array.size() == config_keys().size());
  const TrainerConfig d;
  for (size_t i = 0; i < schema.array.size(); ++i) {
    const json::Value& o = schema.array[i];
    const ConfigKey& k = config_keys()[i];
    CAPTURE(k.name);
    REQUIRE(o.is_object());
    CHECK(o.find("name")->string == k.name);
    CHECK(o.find("flag")->string == k.flag);
    CHECK(o.find("js")->string == js_key(k.name));
    CHECK(o.find("help")->string == key_help(k, nullptr));
    CHECK(o.find("help")->string.find('{') == std::string::npos);
    CHECK((o.find("in_weights")->boolean) == (k.weights != InWeights::No));
    const json::Value& def = *o.find("default");
    switch (k.type) {
      case ConfigType::Bool: CHECK(def.boolean == key_value<bool>(d, k)); break;
      case ConfigType::String: CHECK(def.string == value_text(d, k)); break;
      case ConfigType::Float: CHECK(def.number == shortest_decimal(key_value<float>(d, k))); break;
      default: CHECK(def.number == number_value(d, k)); break;
    }
    // The families it applies to: every family of kFamilies that applies_to says so of.
    const json::Value* families = o.find("families");
    REQUIRE(families != nullptr);
    std::vector<std::string> expected, got;
    for (int f = 0; f < kFamilies.count; ++f)
      if (applies_to(k, kFamilies.names[f])) expected.push_back(kFamilies.names[f]);
    for (const json::Value& f : families->array) got.push_back(f.string);
    CHECK(got == expected);
    CHECK((o.find("min") != nullptr) == k.bounded);
    if (k.bounded) {
      CHECK(o.find("min")->number == k.lo);
      CHECK(o.find("max")->number == k.hi);
      CHECK(o.find("min_exclusive")->boolean == k.lo_open);
      CHECK(o.find("max_exclusive")->boolean == k.hi_open);
    }
    CHECK((o.find("choices") != nullptr) == (k.choices != nullptr));
    if (k.choices) {
      REQUIRE(o.find("choices")->array.size() == size_t(k.choices->count));
      for (int c = 0; c < k.choices->count; ++c)
        CHECK(o.find("choices")->array[size_t(c)].string == k.choices->names[c]);
      CHECK(o.find("choices_type")->string == k.choices->js_type);
    }
    const json::Value* applies = o.find("applies_when");
    CHECK((applies != nullptr) == (k.applies_key != nullptr));
    if (k.applies_key) {
      CHECK(applies->find("key")->string == k.applies_key);
      REQUIRE(applies->find("in")->array.size() == k.applies_values.size());
      for (size_t v = 0; v < k.applies_values.size(); ++v)
        CHECK(applies->find("in")->array[v].string == k.applies_values[v]);
    }
  }
}

TEST_CASE("config keys: applies_when names another key with choices, and some of its choices "
          "but not its default", "[config]") {
  // A key that applied to no value, or to every value, of the key it follows would be a typo.
  const TrainerConfig d;
  int annotated = 0;
  for (const ConfigKey& k : config_keys()) {
    if (!k.applies_key) continue;
    CAPTURE(k.name, k.applies_key);
    ++annotated;
    const ConfigKey* on = find_config_key(k.applies_key);
    REQUIRE(on != nullptr);
    CHECK(on != &k);
    REQUIRE(on->choices != nullptr);
    REQUIRE(!k.applies_values.empty());
    CHECK(k.applies_values.size() < size_t(on->choices->count));
    for (const char* v : k.applies_values) {
      CAPTURE(v);
      bool known = false;
      for (int c = 0; c < on->choices->count; ++c) known |= std::string_view(on->choices->names[c]) == v;
      CHECK(known);
      CHECK(value_text(d, *on) != v);  // at the defaults the key does not apply
    }
  }
  // window, stride, mask_rate, norm_position, ffn_mult, pos_init_std, builtin_text, markov_order,
  // markov_symbols, lag
  CHECK(annotated == 10);
}

TEST_CASE("config keys: each row writes its own member", "[config]") {
  TrainerConfig c;
  const ConfigKey& heads = *find_config_key("n_heads");
  key_value<int>(c, heads) = 8;
  CHECK(c.model.n_heads == 8);
  CHECK(number_value(c, heads) == 8.0);
  key_value<uint64_t>(c, *find_config_key("seed")) = 7;
  CHECK(c.training.seed == 7u);
  key_value<float>(c, *find_config_key("out_dropout")) = 0.25f;
  CHECK(c.model.out_dropout == 0.25f);
  CHECK(value_text(c, *find_config_key("out_dropout")) == "0.25");
  key_value<bool>(c, *find_config_key("residual")) = true;
  CHECK(c.model.residual);
  set_choice(c, *find_config_key("task"), "copy", nullptr);
  CHECK(c.task.name == "copy");
  set_choice(c, *find_config_key("positions"), "rope", nullptr);
  CHECK(c.model.positions == PositionKind::Rope);
  CHECK(value_text(c, *find_config_key("positions")) == "rope");
}

TEST_CASE("config keys: validate() refuses a value just outside each row's bounds, under the "
          "row's name", "[config]") {
  struct Case {
    const char* key;
    void (*spoil)(TrainerConfig&);
    const char* message;
  };
  const Case cases[] = {
      {"vocab_size", [](TrainerConfig& c) { c.model.vocab_size = 65537; },
       "vocab_size (65537) must be in [1, 65536]"},
      {"d_model", [](TrainerConfig& c) { c.model.d_model = 1; }, "d_model (1) must be in [2, 4096]"},
      // The upper bound is another key's value (hi_key).
      {"n_heads", [](TrainerConfig& c) { c.model.n_heads = 33; }, "n_heads (33) must be in [1, 32]"},
      // A key that must divide another is refused under the other's name.
      {"d_model", [](TrainerConfig& c) { c.model.n_heads = 3; },
       "d_model (32) must be divisible by n_heads (3)"},
      {"seq_len", [](TrainerConfig& c) { c.task.seq_len = 0; }, "seq_len (0) must be in [1, 4096]"},
      {"batch_size", [](TrainerConfig& c) { c.training.batch_size = 4097; },
       "batch_size (4097) must be in [1, 4096]"},
      // An open bound refuses the bound itself.
      {"lr", [](TrainerConfig& c) { c.training.lr = 0.0f; }, "lr (0) must be in (0, 10]"},
      {"attn_dropout", [](TrainerConfig& c) { c.model.attn_dropout = 1.0f; },
       "attn_dropout (1) must be in [0, 1)"},
      {"out_dropout", [](TrainerConfig& c) { c.model.out_dropout = -0.0001f; },
       "out_dropout (-0.0001) must be in [0, 1)"},
      {"task", [](TrainerConfig& c) { c.task.name = ""; },
       "task: unknown task '' (expected repeat, shift, copy, reverse, sort, future, induction, text, markov or lag)"},
      {"n_layers", [](TrainerConfig& c) { c.model.n_layers = kMaxLayers + 1; },
       "n_layers (5) must be in [1, 4]"},
      {"objective", [](TrainerConfig& c) { set_choice(c, *find_config_key("objective"), "bert", nullptr); },
       "objective: unknown objective 'bert' (expected causal or mlm)"},
      {"mask_rate", [](TrainerConfig& c) { c.training.mask_rate = 0.0099f; },
       "mask_rate (0.0099) must be in [0.01, 0.5]"},
      {"mask_rate", [](TrainerConfig& c) { c.training.mask_rate = 0.51f; },
       "mask_rate (0.51) must be in [0.01, 0.5]"},
      {"attention", [](TrainerConfig& c) { set_choice(c, *find_config_key("attention"), "sparse", nullptr); },
       "attention: unknown attention 'sparse' (expected full, window or strided)"},
      {"window", [](TrainerConfig& c) { c.model.window = 0; }, "window (0) must be in [1, 4096]"},
      {"stride", [](TrainerConfig& c) { c.model.stride = 0; }, "stride (0) must be in [1, 4096]"},
      {"vocab_size", [](TrainerConfig& c) { c.model.objective = Objective::Mlm, c.model.vocab_size = 1; },
       "objective mlm replaces some selected tokens by another one: it needs vocab_size >= 2, "
       "got 1"},
  };
  for (const Case& k : cases) {
    TrainerConfig c;
    Refusal r;
    try {
      k.spoil(c);  // an enum's unknown name is refused as it is set
      r = refusal(c);
    } catch (const Error& e) {
      r = {e.key(), e.what()};
    }
    CAPTURE(k.key, r.message);
    CHECK(r.key == k.key);
    CHECK(r.message == k.message);
  }
  // The bounds themselves pass.
  TrainerConfig edge;
  edge.training.lr = 10.0f;
  edge.model.attn_dropout = 0.0f;
  edge.model.n_heads = 32;
  edge.model.n_layers = kMaxLayers;
  edge.training.seed = ~uint64_t{0};
  CHECK(refusal(edge).message.empty());
  edge.training.mask_rate = 0.01f;  // compared as floats: the bound accepts itself
  CHECK(refusal(edge).message.empty());
  edge.training.mask_rate = 0.5f;
  edge.model.window = edge.model.stride = 1;
  CHECK(refusal(edge).message.empty());
}

TEST_CASE("config keys: messages and help spell keys through the namer", "[config]") {
  TrainerConfig c;
  c.model.n_heads = 3;
  CHECK(refusal(c, &bracketed).message == "<d_model> (32) must be divisible by <n_heads> (3)");
  CHECK(refusal(c, &bracketed).key == "d_model");
  CHECK(key_help(*find_config_key("d_model"), &bracketed) ==
        "model width (even, divisible by <n_heads>)");
  CHECK(key_help(*find_config_key("max_seq_len"), nullptr) ==
        "longest sequence the model accepts (rows of a learned table), >= seq_len; 0 = seq_len");
  // {choices} spells the row's choices as a list ("a, b or c"): read from the row, so a new FFN
  // kind needs no edit here.
  const ConfigKey& ffn = *find_config_key("ffn");
  REQUIRE(ffn.choices != nullptr);
  REQUIRE(ffn.choices->count >= 2);
  std::string listed;
  for (int i = 0; i < ffn.choices->count; ++i)
    listed += std::string(i == 0 ? "" : i + 1 == ffn.choices->count ? " or " : ", ") + ffn.choices->names[i];
  CHECK(key_help(ffn, &bracketed) == "feed-forward network: " + listed);
  CHECK(key_help(*find_config_key("lr"), &bracketed) == "Adam learning rate");
}
