// The Trainer config's key table (attn/config_keys.h): its names and defaults, the members its
// rows reach, and validate() enforcing each row's bounds under the row's own name.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "attn/base/error.h"
#include "attn/train/config_keys.h"

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

TEST_CASE("config keys: one row per TrainerConfig field, in its order, with its default",
          "[config]") {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"vocab_size", "64"}, {"d_model", "32"},      {"n_heads", "4"},
      {"seq_len", "12"},    {"batch_size", "16"},   {"lr", "0.005"},
      {"seed", "42"},       {"attn_dropout", "0"},  {"out_dropout", "0"},
      {"task", "repeat"},   {"n_layers", "1"},      {"residual", "false"},
      {"kv_heads", "0"},    {"positions", "sinusoidal"}, {"max_seq_len", "0"},
      {"norm", "none"},     {"norm_position", "pre"},    {"ffn", "none"},
      {"ffn_mult", "4"},    {"emb_init_std", "0.02"},
      {"objective", "causal"}, {"mask_rate", "0.15"}, {"attention", "full"},
      {"window", "4"},      {"stride", "4"},        {"differential", "false"},
  };
  const std::vector<ConfigKey>& keys = config_keys();
  REQUIRE(keys.size() == expected.size());
  const TrainerConfig d;
  for (size_t i = 0; i < keys.size(); ++i) {
    CAPTURE(i);
    CHECK(keys[i].name == expected[i].first);
    CHECK(value_text(d, keys[i]) == expected[i].second);
    CHECK(find_config_key(expected[i].first) == &keys[i]);
  }
  CHECK(find_config_key("vocabSize") == nullptr);
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
  CHECK(expand_keys(find_config_key("d_model")->doc, &bracketed) ==
        "model width (even, divisible by <n_heads>)");
  CHECK(expand_keys("{a} and {b_c}.", nullptr) == "a and b_c.");
  CHECK(expand_keys("no keys", &bracketed) == "no keys");
}
