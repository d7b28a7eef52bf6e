// The "Train a GPT on text" preset (web/src/settings/presets.ts) as a TrainerConfig, with a
// smaller context and batch so that a test runs it in a moment.
#pragma once

#include "attn/train/config.h"

inline attn::TrainerConfig text_preset_config(int seq_len, int batch_size) {
  attn::TrainerConfig c;
  c.task = "text";
  c.d_model = 64;
  c.seq_len = seq_len;
  c.batch_size = batch_size;
  c.n_layers = 2;
  c.residual = true;
  c.positions = "rope";
  c.norm = "layernorm";
  c.ffn = "gelu";
  return c;
}
