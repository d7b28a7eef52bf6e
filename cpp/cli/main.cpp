// attn: the native command line of Attention Playground.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>&);
  const char* summary;
};

const Command kCommands[] = {
    {"demo", attn::cli::cmd_demo, "the PyTorch lesson's run with its checks; demo self-attention: the NumPy lesson"},
    {"train", attn::cli::cmd_train, "train the tiny LM on a task; optionally --save the weights"},
    {"forward", attn::cli::cmd_forward, "run saved weights on ids from a safetensors file"},
    {"eval", attn::cli::cmd_eval, "evaluate saved weights on a task at any length (JSON)"},
    {"sample", attn::cli::cmd_sample, "continue a prompt with a text model (attn train --task text --save)"},
    {"fill", attn::cli::cmd_fill, "fill the blanks of a text with a masked language model (--objective mlm)"},
    {"inspect", attn::cli::cmd_inspect, "logit lens, attribution, patching and circuits of saved weights on ids"},
    {"attend", attn::cli::cmd_attend, "single-head attention on X, Wq, Wk, Wv from a file"},
    {"bench", attn::cli::cmd_bench, "measure training steps/s and GEMM GFLOP/s (JSON)"},
    {"selftest", attn::cli::cmd_selftest, "run the curriculum's checks on a model and a PyTorch case"},
    {"scaling", attn::cli::cmd_scaling, "train one model per width and fit the scaling law; --chinchilla C"},
    {"schema", attn::cli::cmd_schema, "print the config schema: every config key (JSON)"},
};

void print_usage(FILE* out) {
  std::fprintf(out, "usage: attn <command> [flags]   (attn <command> --help for its flags)\n\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-9s %s\n", c.name, c.summary);
}

// Keeps the one-line contract: newlines inside a message become spaces.
std::string one_line(std::string s) {
  for (char& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(stdout);
    return 0;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  for (const Command& c : kCommands) {
    if (name != c.name) continue;
    try {
      return c.run(args);
    } catch (const std::exception& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "attn %s: %s\n", c.name, one_line(e.what()).c_str());
      return 2;
    }
  }
  std::fprintf(stderr, "attn: unknown command '%s' (try attn --help)\n", one_line(name).c_str());
  return 2;
}
