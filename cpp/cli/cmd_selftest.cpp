// attn selftest: the page's self-test panel on the command line. Runs the curriculum's invariants
// (attn/selftest.h) on a model, fresh from the config flags or loaded with --weights, and a
// PyTorch reference case; prints one line per check and exits 1 if any fails.
#include <cstdio>
#include <memory>

#include "attn/io/weights.h"
#include "attn/teach/selftest.h"
#include "cli/commands.h"
#include "cli/config_flags.h"

namespace attn::cli {

int cmd_selftest(const std::vector<std::string>& argv) {
  std::vector<Flag> flags = trainer_flags();
  flags.push_back({"weights", "PATH", "", "check these weights (safetensors) instead of a fresh model"});
  flags.push_back({"reference", "PREFIX", default_reference(),
                   "the PyTorch case: PREFIX.{weights,input,expected}.safetensors"});
  const Args args("selftest",
                  "Runs the curriculum's invariants on a model and a PyTorch reference case.",
                  flags, argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  // The model: loaded weights (their config comes from the file), else a fresh one.
  std::unique_ptr<Trainer> trainer;
  std::unique_ptr<TinyAttentionLM> loaded;
  TinyAttentionLM* model = nullptr;
  std::string source = "a fresh model";
  if (args.has("weights")) {
    const std::vector<uint8_t> bytes = read_file(args.get("weights"));
    loaded = load_model(bytes.data(), bytes.size());
    model = loaded.get();
    source = args.get("weights");
  } else {
    trainer = std::make_unique<Trainer>(trainer_config_from(args));
    model = &trainer->model();
  }
  const std::string prefix = args.get("reference");
  ReferenceCase ref{read_file(prefix + ".weights.safetensors"),
                    read_file(prefix + ".input.safetensors"),
                    read_file(prefix + ".expected.safetensors")};
  const ModelConfig& c = model->config;
  std::printf("# model V=%d D=%d H=%d C=%d (%s); reference %s\n", c.vocab_size, c.d_model,
              c.n_heads, c.max_context_length, source.c_str(), prefix.c_str());
  int passed = 0;
  const std::vector<SelfTestResult> results = run_self_tests(*model, &ref);
  for (const SelfTestResult& r : results) {
    passed += r.pass;
    std::printf("%s %-18s max error %-10.3g tolerance %-8.3g %s\n", r.pass ? "PASS" : "FAIL",
                r.id.c_str(), r.max_error, r.tolerance, r.detail.c_str());
  }
  std::printf("# %d of %zu checks passed\n", passed, results.size());
  return passed == static_cast<int>(results.size()) ? 0 : 1;
}

}  // namespace attn::cli
