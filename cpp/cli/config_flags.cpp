#include "cli/config_flags.h"

#include <string>

namespace attn::cli {

std::vector<Flag> trainer_flags() {
  const TrainerConfig d;
  return {
      {"vocab", "V", std::to_string(d.vocab_size), "vocabulary size"},
      {"d-model", "D", std::to_string(d.d_model), "model width (even, divisible by --heads)"},
      {"heads", "H", std::to_string(d.n_heads), "attention heads"},
      {"seq-len", "T", std::to_string(d.seq_len), "sequence length (= max context length)"},
      {"batch", "B", std::to_string(d.batch_size), "sequences per step"},
      {"lr", "LR", "0.005", "Adam learning rate"},
      {"seed", "N", std::to_string(d.seed), "seed for weights, batches and dropout"},
      {"attn-dropout", "P", "0", "dropout on attention weights, in [0, 1)"},
      {"out-dropout", "P", "0", "dropout on the attention output, in [0, 1)"},
      {"task", "NAME", d.task, "training task: repeat, shift, copy, reverse, sort or future"},
  };
}

TrainerConfig trainer_config_from(const Args& a) {
  TrainerConfig c;
  // Parse bounds are loose; TrainerConfig::validate gives the precise rule, in flag names.
  c.vocab_size = a.get_int("vocab", 1, 1 << 30);
  c.d_model = a.get_int("d-model", 1, 1 << 30);
  c.n_heads = a.get_int("heads", 1, 1 << 30);
  c.seq_len = a.get_int("seq-len", 1, 1 << 30);
  c.batch_size = a.get_int("batch", 1, 1 << 30);
  c.lr = a.get_float("lr", 0.0, 1e30);
  c.seed = a.get_u64("seed");
  c.attn_dropout = a.get_float("attn-dropout", 0.0, 1.0);
  c.out_dropout = a.get_float("out-dropout", 0.0, 1.0);
  c.task = a.get("task");
  c.validate(TrainerConfig::KeyStyle::Cli);
  return c;
}

}  // namespace attn::cli
