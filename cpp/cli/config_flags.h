// The model and training flags shared by the subcommands that build a Trainer.
#pragma once

#include <vector>

#include "attn/trainer.h"
#include "cli/args.h"

namespace attn::cli {

// --vocab --d-model --heads --seq-len --batch --lr --seed --attn-dropout --out-dropout --task,
// with the DemoConfig defaults.
std::vector<Flag> trainer_flags();

// Reads those flags; throws UsageError naming the flag on a value that does not parse and
// std::invalid_argument (named as the flag) on an invalid combination.
TrainerConfig trainer_config_from(const Args& args);

}  // namespace attn::cli
