#include "attn/train/presets.h"

#include <stdexcept>

#include "attn/base/json.h"

namespace attn {

namespace {

using Keys = std::vector<std::pair<const char*, const char*>>;

// Two layers of two heads on the induction task, the token embedding at std 0.5
// (bench/results/induction.md, "Convergence budget").
const Keys kInduction = {{"vocab_size", "32"}, {"d_model", "32"}, {"n_heads", "2"},
                         {"seq_len", "32"},    {"batch_size", "32"}, {"lr", "0.005"},
                         {"seed", "0"},        {"task", "induction"}, {"n_layers", "2"},
                         {"residual", "true"}, {"emb_init_std", "0.5"}};

// A small GPT on the default text: 2 pre-norm blocks, LayerNorm, RoPE, GELU.
const Keys kText = {{"d_model", "64"},     {"n_heads", "4"},       {"seq_len", "64"},
                    {"batch_size", "16"},  {"lr", "0.003"},        {"seed", "0"},
                    {"task", "text"},      {"n_layers", "2"},      {"residual", "true"},
                    {"positions", "rope"}, {"norm", "layernorm"}, {"norm_position", "pre"},
                    {"ffn", "gelu"}};

Keys with(Keys keys, const Keys& more) {
  for (const auto& kv : more) {
    bool replaced = false;
    for (auto& old : keys)
      if (std::string_view(old.first) == kv.first) old.second = kv.second, replaced = true;
    if (!replaced) keys.push_back(kv);
  }
  return keys;
}

// The course's capstone GPT (phases/07-transformers-deep-dive/14-build-a-transformer-capstone):
// learned positions, pre-norm RMSNorm (eps 1e-6), fused qkv, no biases, SwiGLU of
// int(64 * 2.67) = 170, a final RMSNorm, the head tied to the token embedding; AdamW betas 0.9 /
// 0.95, weight decay 0.1, gradient clipping at 1.0, lr 3e-4; both embeddings start at N(0, 1)
// as nn.Embedding's; 3 layers, D 64, H 4, T 64, B 16 (500 steps: attn train --steps 500).
const Keys kCapstone = {
    {"d_model", "64"},       {"n_heads", "4"},          {"seq_len", "64"},
    {"batch_size", "16"},    {"lr", "0.0003"},          {"task", "text"},
    {"n_layers", "3"},       {"residual", "true"},      {"positions", "learned"},
    {"norm", "rmsnorm"},     {"norm_position", "pre"},  {"ffn", "swiglu"},
    {"ffn_mult", "2.67"},    {"emb_init_std", "1"},     {"tie_embeddings", "true"},
    {"bias", "false"},       {"pos_init_std", "1"},     {"weight_decay", "0.1"},
    {"adam_beta2", "0.95"},  {"grad_clip", "1"},          {"builtin_text", "shakespeare"}};

}  // namespace

TrainerConfig Preset::config() const {
  TrainerConfig c;
  for (const auto& [name, value] : keys) {
    const ConfigKey* k = find_config_key(name);
    if (!k || !set_value_text(c, *k, value))
      throw std::logic_error(str_cat("preset ", this->name, " sets ", name, " to ", value));
  }
  return c;
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> table = {
      {"shift", "One position back", {{"task", "shift"}}},
      {"induction", "Watch an induction head form", kInduction},
      {"find-circuit", "Find the induction circuit", kInduction},
      {"text", "Train a GPT on text", kText},
      {"fill", "Fill in the blanks", with(kText, {{"seq_len", "32"}, {"objective", "mlm"}})},
      {"window-depth", "A window that grows with depth",
       {{"vocab_size", "16"}, {"seed", "1"}, {"task", "copy"}, {"n_layers", "3"},
        {"residual", "true"}, {"positions", "rope"}, {"attention", "window"}, {"window", "3"}}},
      {"capstone", "The course's capstone GPT, number for number", kCapstone},
  };
  return table;
}

const Preset& find_preset(std::string_view name) {
  std::string names;
  for (const Preset& p : presets()) {
    if (name == p.name) return p;
    names += str_cat(names.empty() ? "" : ", ", p.name);
  }
  throw Error(ErrorKind::Input, "",
              str_cat("unknown preset ", json::printable(name), " (the presets are ", names, ")"));
}

std::string presets_json() {
  std::string out = "[";
  for (const Preset& p : presets()) {
    const TrainerConfig c = p.config();
    std::string config;
    for (const auto& kv : p.keys) {
      const ConfigKey& k = *find_config_key(kv.first);
      const std::string v = value_text(c, k);
      config += str_cat(config.empty() ? "" : ",", json::quote(js_key(k.name)), ":",
                        k.type == ConfigType::String ? json::quote(v) : v);
    }
    out += str_cat(&p == &presets().front() ? "" : ",", "{\"name\":", json::quote(p.name),
                   ",\"title\":", json::quote(p.title), ",\"config\":{", config,
                   "}}");
  }
  return out + "]";
}

}  // namespace attn
