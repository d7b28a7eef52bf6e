// The model and training flags shared by the subcommands that build a Trainer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "attn/train/trainer.h"
#include "cli/args.h"

namespace attn::cli {

// How TrainerConfig::validate names a key in the CLI's messages: its flag, --vocab-size.
std::string config_flag_name(std::string_view key);

// One flag per Trainer config key: the schema row's flag (train/config.h), e.g. --vocab-size,
// --heads; its help and default from the row.
std::vector<Flag> trainer_flags();

// Reads those flags; throws UsageError naming the flag on a value that does not parse and an
// attn::Error of kind Config (the message naming flags) on a value the config refuses. A Bool
// key with a value name (bias: --bias false) takes true or false; the others are switches. With
// base (a preset's config), only the flags given change it.
TrainerConfig trainer_config_from(const Args& args, const TrainerConfig* base = nullptr);

// --mask --no-scale-scores --heads-off --heads-frozen: the Ablation panel's interventions.
std::vector<Flag> ablation_flags();

// Reads those flags for a model of config c; head numbers are 1-based global indices
// l*H + h + 1 over all layers. Throws UsageError naming the flag on a bad value (an unknown
// mask, a head number outside [1, n_layers * n_heads]).
Trainer::Ablation ablation_from(const Args& args, const TrainerConfig& c);

}  // namespace attn::cli
