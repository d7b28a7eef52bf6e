// TrainerConfig: every setting of a model and its training, with the DemoConfig's defaults.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "attn/base/error.h"
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
  std::string positions = "sinusoidal";  // sinusoidal, learned, rope, alibi or none
  int max_seq_len = 0;                // the model's C (>= seq_len); 0 means seq_len
  std::string norm = "none";          // none, layernorm or rmsnorm
  std::string norm_position = "pre";  // pre or post
  std::string ffn = "none";           // none, relu, gelu or swiglu
  int ffn_mult = 4;                   // the FFN's hidden width is ffn_mult * d_model
  // The token embedding's init std: the curriculum's 0.02; a larger one makes the
  // induction preset form its head sooner (cpp/README.md, induction heads).
  float emb_init_std = 0.02f;
  // Masked language modelling (objective mlm) and the attention variants; the defaults keep the
  // causal model with full attention.
  std::string objective = "causal";  // causal or mlm
  float mask_rate = 0.15f;           // mlm: the chance that a token is selected
  std::string attention = "full";    // full, window or strided
  int window = 4;                    // W: the window's keys, the query's own included
  int stride = 4;                    // S: strided keys at multiples of S
  bool differential = false;         // two softmax maps per head, the second weighed by lambda

  // Throws an Error of kind Config naming the first bad value; its key is the key's snake_case
  // name ("" for a config too large as a whole). Messages name keys as namer spells them
  // (config_keys.h; nullptr: snake_case), so each edge words them its own way. Bounds keep the
  // state under kMaxStateElements floats so a hostile config cannot exhaust memory.
  void validate(KeyNamer namer = nullptr) const;
  ModelConfig model_config() const;
};

// Upper bound on parameters + activations of one Trainer, in floats.
constexpr int64_t kMaxStateElements = 64LL * 1024 * 1024;

}  // namespace attn
