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

}  // namespace

TEST_CASE("config keys: one row per name and flag, each found by its name", "[config]") {
  const std::vector<ConfigKey>& keys = config_keys();
  for (size_t i = 0; i < keys.size(); ++i) {
    CAPTURE(keys[i].name);
    CHECK(find_config_key(keys[i].name) == &keys[i]);
    for (size_t j = 0; j < i; ++j) CHECK(std::string(keys[j].flag) != keys[i].flag);
    // Exactly one member pointer, of the row's type.
    const int members = (keys[i].int_member != nullptr) + (keys[i].u64_member != nullptr) +
                        (keys[i].float_member != nullptr) + (keys[i].bool_member != nullptr) +
                        (keys[i].string_member != nullptr);
    CHECK(members == 1);
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
  CHECK(c.lr == 0.25f);
  CHECK_FALSE(set_value_text(c, *find_config_key("lr"), "inf"));
  CHECK_FALSE(set_value_text(c, *find_config_key("n_heads"), " 4"));
  CHECK_FALSE(set_value_text(c, *find_config_key("n_heads"), "99999999999"));
  CHECK_FALSE(set_value_text(c, *find_config_key("seed"), "-1"));
  CHECK(set_value_text(c, *find_config_key("ffn"), "gelu"));
  CHECK(c.ffn == "gelu");
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
  // Every key of group Model or Block survives model_config() and trainer_config_of().
  TrainerConfig c;
  c.vocab_size = 20, c.d_model = 24, c.n_heads = 6, c.seq_len = 9, c.max_seq_len = 0;
  c.n_layers = 3, c.residual = true, c.kv_heads = 2, c.positions = "rope", c.norm = "rmsnorm";
  c.norm_position = "post", c.ffn = "swiglu", c.ffn_mult = 2, c.emb_init_std = 0.5f;
  c.attn_dropout = 0.25f, c.out_dropout = 0.125f;
  c.objective = "mlm", c.attention = "strided", c.window = 3, c.stride = 2, c.differential = true;
  for (const ConfigKey& k : config_keys()) {
    // From the rows, so that a new model key cannot be left out; max_seq_len's one form is 0.
    if (k.group != ConfigGroup::Model && k.group != ConfigGroup::Block) continue;
    if (std::string(k.name) == "max_seq_len") continue;
    if (k.choices && k.choices->count == 1) continue;  // family: one choice today, never off it
    CAPTURE(k.name);
    CHECK_FALSE(at_default(c, k));
  }
  const TrainerConfig back = trainer_config_of(c.model_config());
  for (const ConfigKey& k : config_keys()) {
    if (k.group != ConfigGroup::Model && k.group != ConfigGroup::Block) continue;
    CAPTURE(k.name);
    CHECK(value_text(back, k) == value_text(c, k));
  }
  // One form per model: kv_heads equal to n_heads is 0, max_seq_len becomes seq_len.
  c.kv_heads = 6, c.max_seq_len = 12;
  const TrainerConfig one = trainer_config_of(c.model_config());
  CHECK(one.kv_heads == 0);
  CHECK(one.max_seq_len == 0);
  CHECK(one.seq_len == 12);
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
      case ConfigType::Bool: CHECK(def.boolean == d.*k.bool_member); break;
      case ConfigType::String: CHECK(def.string == d.*k.string_member); break;
      case ConfigType::Float: CHECK(def.number == shortest_decimal(d.*k.float_member)); break;
      default: CHECK(def.number == number_value(d, k)); break;
    }
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
  // window, stride, mask_rate, norm_position, ffn_mult
  CHECK(annotated == 5);
}

TEST_CASE("config keys: each row writes its own member", "[config]") {
  TrainerConfig c;
  const ConfigKey& heads = *find_config_key("n_heads");
  c.*heads.int_member = 8;
  CHECK(c.n_heads == 8);
  CHECK(number_value(c, heads) == 8.0);
  c.*find_config_key("seed")->u64_member = 7;
  CHECK(c.seed == 7u);
  c.*find_config_key("out_dropout")->float_member = 0.25f;
  CHECK(c.out_dropout == 0.25f);
  CHECK(value_text(c, *find_config_key("out_dropout")) == "0.25");
  c.*find_config_key("residual")->bool_member = true;
  CHECK(c.residual);
  c.*find_config_key("task")->string_member = "copy";
  CHECK(c.task == "copy");
}

TEST_CASE("config keys: validate() refuses a value just outside each row's bounds, under the "
          "row's name", "[config]") {
  struct Case {
    const char* key;
    void (*spoil)(TrainerConfig&);
    const char* message;
  };
  const Case cases[] = {
      {"vocab_size", [](TrainerConfig& c) { c.vocab_size = 65537; },
       "vocab_size (65537) must be in [1, 65536]"},
      {"d_model", [](TrainerConfig& c) { c.d_model = 1; }, "d_model (1) must be in [2, 4096]"},
      // The upper bound is another key's value (hi_key).
      {"n_heads", [](TrainerConfig& c) { c.n_heads = 33; }, "n_heads (33) must be in [1, 32]"},
      // A key that must divide another is refused under the other's name.
      {"d_model", [](TrainerConfig& c) { c.n_heads = 3; },
       "d_model (32) must be divisible by n_heads (3)"},
      {"seq_len", [](TrainerConfig& c) { c.seq_len = 0; }, "seq_len (0) must be in [1, 4096]"},
      {"batch_size", [](TrainerConfig& c) { c.batch_size = 4097; },
       "batch_size (4097) must be in [1, 4096]"},
      // An open bound refuses the bound itself.
      {"lr", [](TrainerConfig& c) { c.lr = 0.0f; }, "lr (0) must be in (0, 10]"},
      {"attn_dropout", [](TrainerConfig& c) { c.attn_dropout = 1.0f; },
       "attn_dropout (1) must be in [0, 1)"},
      {"out_dropout", [](TrainerConfig& c) { c.out_dropout = -0.0001f; },
       "out_dropout (-0.0001) must be in [0, 1)"},
      {"task", [](TrainerConfig& c) { c.task = ""; },
       "task: unknown task '' (expected repeat, shift, copy, reverse, sort, future, induction or text)"},
      {"n_layers", [](TrainerConfig& c) { c.n_layers = kMaxLayers + 1; },
       "n_layers (5) must be in [1, 4]"},
      {"objective", [](TrainerConfig& c) { c.objective = "bert"; },
       "objective: unknown objective 'bert' (expected causal or mlm)"},
      {"mask_rate", [](TrainerConfig& c) { c.mask_rate = 0.0099f; },
       "mask_rate (0.0099) must be in [0.01, 0.5]"},
      {"mask_rate", [](TrainerConfig& c) { c.mask_rate = 0.51f; },
       "mask_rate (0.51) must be in [0.01, 0.5]"},
      {"attention", [](TrainerConfig& c) { c.attention = "sparse"; },
       "attention: unknown attention 'sparse' (expected full, window or strided)"},
      {"window", [](TrainerConfig& c) { c.window = 0; }, "window (0) must be in [1, 4096]"},
      {"stride", [](TrainerConfig& c) { c.stride = 0; }, "stride (0) must be in [1, 4096]"},
      {"vocab_size", [](TrainerConfig& c) { c.objective = "mlm", c.vocab_size = 1; },
       "objective mlm replaces some selected tokens by another one: it needs vocab_size >= 2, "
       "got 1"},
  };
  for (const Case& k : cases) {
    TrainerConfig c;
    k.spoil(c);
    const Refusal r = refusal(c);
    CAPTURE(k.key, r.message);
    CHECK(r.key == k.key);
    CHECK(r.message == k.message);
  }
  // The bounds themselves pass.
  TrainerConfig edge;
  edge.lr = 10.0f;
  edge.attn_dropout = 0.0f;
  edge.n_heads = 32;
  edge.n_layers = kMaxLayers;
  edge.seed = ~uint64_t{0};
  CHECK(refusal(edge).message.empty());
  edge.mask_rate = 0.01f;  // compared as floats: the bound accepts itself
  CHECK(refusal(edge).message.empty());
  edge.mask_rate = 0.5f;
  edge.window = edge.stride = 1;
  CHECK(refusal(edge).message.empty());
}

TEST_CASE("config keys: messages and help spell keys through the namer", "[config]") {
  TrainerConfig c;
  c.n_heads = 3;
  CHECK(refusal(c, &bracketed).message == "<d_model> (32) must be divisible by <n_heads> (3)");
  CHECK(refusal(c, &bracketed).key == "d_model");
  CHECK(key_help(*find_config_key("d_model"), &bracketed) ==
        "model width (even, divisible by <n_heads>)");
  CHECK(key_help(*find_config_key("max_seq_len"), nullptr) ==
        "longest sequence the model accepts (rows of a learned table), >= seq_len; 0 = seq_len");
  CHECK(key_help(*find_config_key("ffn"), &bracketed) ==
        "feed-forward network: none, relu, gelu or swiglu");
  CHECK(key_help(*find_config_key("lr"), &bracketed) == "Adam learning rate");
}
