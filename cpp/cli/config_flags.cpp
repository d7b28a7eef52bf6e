#include "cli/config_flags.h"

#include <cstdlib>

#include <string>

namespace attn::cli {

std::vector<Flag> trainer_flags() {
  const TrainerConfig d;
  return {
      {"vocab-size", "V", std::to_string(d.vocab_size), "vocabulary size", false, "vocab"},
      {"d-model", "D", std::to_string(d.d_model), "model width (even, divisible by --heads)"},
      {"heads", "H", std::to_string(d.n_heads), "attention heads"},
      {"seq-len", "T", std::to_string(d.seq_len), "sequence length (= max context length)"},
      {"batch", "B", std::to_string(d.batch_size), "sequences per step"},
      {"lr", "LR", "0.005", "Adam learning rate"},
      {"seed", "N", std::to_string(d.seed), "seed for weights, batches and dropout"},
      {"attn-dropout", "P", "0", "dropout on attention weights, in [0, 1)"},
      {"out-dropout", "P", "0", "dropout on the attention output, in [0, 1)"},
      {"task", "NAME", d.task, "training task: repeat, shift, copy, reverse, sort, future or induction"},
      {"layers", "L", std::to_string(d.n_layers), "attention layers, 1 to 4"},
      {"residual", "", "", "add each layer's output to the residual stream (x = x + attn(x))"},
  };
}

TrainerConfig trainer_config_from(const Args& a) {
  TrainerConfig c;
  // Parse bounds are loose; TrainerConfig::validate gives the precise rule, in flag names.
  c.vocab_size = a.get_int("vocab-size", 1, 1 << 30);
  c.d_model = a.get_int("d-model", 1, 1 << 30);
  c.n_heads = a.get_int("heads", 1, 1 << 30);
  c.seq_len = a.get_int("seq-len", 1, 1 << 30);
  c.batch_size = a.get_int("batch", 1, 1 << 30);
  c.lr = a.get_float("lr", 0.0, 1e30);
  c.seed = a.get_u64("seed");
  c.attn_dropout = a.get_float("attn-dropout", 0.0, 1.0);
  c.out_dropout = a.get_float("out-dropout", 0.0, 1.0);
  c.task = a.get("task");
  c.n_layers = a.get_int("layers", -(1 << 30), 1 << 30);  // validate names [1, 4]
  c.residual = a.has("residual");
  c.validate(TrainerConfig::KeyStyle::Cli);
  return c;
}

std::vector<Flag> ablation_flags() {
  return {
      {"mask", "MODE", "causal", "causal, none, or inverted (-1e4 on the past: the future leaks)"},
      {"no-scale-scores", "", "", "do not divide the scores by sqrt(dk)", false, "no-scale"},
      {"heads-off", "LIST", "",
       "heads whose output is zero, 1-based, e.g. 1,3; with --layers, layer l's head h is "
       "l*H + h (layer-major, both 0-based) + 1"},
      {"heads-frozen", "LIST", "", "heads whose projections stop updating, 1-based, e.g. 2", false,
       "freeze"},
  };
}

namespace {

// "1,3" -> flags (n_heads) with heads 1 and 3 set; empty -> none set.
std::vector<uint8_t> head_list(const Args& a, const std::string& name, int n_heads) {
  std::vector<uint8_t> flags(static_cast<size_t>(n_heads), 0);
  const std::string text = a.get(name);
  size_t pos = 0;
  while (pos <= text.size() && !text.empty()) {
    const size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    const long h = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || end != item.c_str() + item.size() || h < 1 || h > n_heads)
      throw UsageError(str_cat("--", name, ": '", item, "' is not a head number in [1, ", n_heads, "]"));
    flags[static_cast<size_t>(h - 1)] = 1;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return flags;
}

}  // namespace

Trainer::Ablation ablation_from(const Args& a, const TrainerConfig& c) {
  const int n_heads = c.n_layers * c.n_heads;  // global, layer-major
  Trainer::Ablation ab;
  try {
    ab.mask = parse_mask_mode(a.get("mask"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(str_cat("--mask: ", e.what()));
  }
  ab.scale_scores = !a.has("no-scale-scores");
  ab.heads_off = head_list(a, "heads-off", n_heads);
  ab.heads_frozen = head_list(a, "heads-frozen", n_heads);
  return ab;
}

}  // namespace attn::cli
