// libFuzzer target: the CLI flag parser (attn::cli::Args) and the trainer flags
// (trainer_config_from). The input is an argument vector, arguments separated by NUL bytes; its
// first byte picks the flag table (train's, forward's or attend's). Every input either parses
// or throws UsageError / std::invalid_argument, and every getter does the same.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/config_flags.h"

namespace {

using attn::cli::Flag;

std::vector<Flag> flag_table(uint8_t which) {
  std::vector<Flag> flags;
  switch (which % 3) {
    case 0:  // attn train
      flags = attn::cli::trainer_flags();
      flags.push_back({"steps", "N", "360", "training steps"});
      flags.push_back({"save", "PATH", "", "write the weights"});
      break;
    case 1:  // attn forward
      flags = {{"weights", "PATH", "", "weights", true},
               {"input", "PATH", "", "ids", true},
               {"output", "PATH", "", "output", true}};
      break;
    default:  // attn attend
      flags = {{"input", "PATH", "", "X, Wq, Wk, Wv", true},
               {"output", "PATH", "", "output", true},
               {"causal", "", "", "mask future positions"}};
      break;
  }
  return flags;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0];
  std::vector<std::string> args;
  std::string cur;
  for (size_t i = 1; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  args.push_back(cur);

  const std::vector<Flag> flags = flag_table(which);
  try {
    const attn::cli::Args a("fuzz", "fuzzing", flags, args);
    if (a.help()) {
      if (a.usage().empty()) std::abort();
      return 0;
    }
    for (const Flag& f : flags) {
      a.has(f.name);
      a.get(f.name);
      try {
        a.get_int(f.name, -5, 1 << 20);
      } catch (const attn::cli::UsageError&) {
      }
      try {
        a.get_float(f.name, -1.0, 1e30);
      } catch (const attn::cli::UsageError&) {
      }
      try {
        a.get_u64(f.name);
      } catch (const attn::cli::UsageError&) {
      }
    }
    if (which % 3 == 0) {
      const attn::TrainerConfig c = attn::cli::trainer_config_from(a);
      c.validate();  // what trainer_config_from accepts, validate accepts
    }
  } catch (const std::invalid_argument&) {  // UsageError is one
  }
  return 0;
}
