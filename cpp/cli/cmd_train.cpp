// attn train: train the tiny LM, print the loss as it goes, optionally save the weights.
#include <chrono>
#include <cstdio>

#include "attn/base/json.h"
#include "attn/base/parallel.h"
#include "attn/data/text.h"
#include "attn/interp/readouts.h"
#include "attn/io/weights.h"
#include "attn/train/presets.h"
#include "cli/commands.h"
#include "cli/config_flags.h"

namespace attn::cli {

namespace {

// "shift, induction, ..., capstone": the presets' names for --help.
std::string preset_names() {
  std::string out;
  for (const Preset& p : presets()) out += str_cat(out.empty() ? "" : ", ", p.name);
  return out;
}

// Validation batches behind each report's val_loss (fixed windows: the same on every report).
constexpr int kTextEvalBatches = 8;

// Per-head scores, the phase change and, with 2+ layers, the K-composition matrix (no heads for
// a family without attention layers).
void print_circuits(Trainer& trainer) {
  const TrainerConfig& c = trainer.config();
  const int L = trainer.family_model().n_attention_layers(), H = c.model.n_heads;
  const HeadScores s = head_scores(trainer.family_model(), trainer.data());
  std::printf("# phase change at step %lld (-1: none yet)\n",
              static_cast<long long>(trainer.phase_change_step()));
  std::printf("# head scores (eval mode, %d induction rows): layer head previous-token prefix-matching\n",
              kScoreRows);
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h)
      std::printf("head L%d.H%d previous-token %.4f prefix-matching %.4f\n", l + 1, h + 1,
                  static_cast<double>(s.previous_token[size_t(l * H + h)]),
                  static_cast<double>(s.prefix_matching[size_t(l * H + h)]));
  if (L < 2) return;
  std::printf("# K-composition, rows: writing head of layer l, columns: reading head of layer l+1;"
              " random baseline %.4f\n", static_cast<double>(s.composition_baseline));
  for (int l = 0; l + 1 < L; ++l)
    for (int h1 = 0; h1 < H; ++h1) {
      std::printf("composition L%d.H%d ->", l + 1, h1 + 1);
      for (int h2 = 0; h2 < H; ++h2)
        std::printf(" L%d.H%d %.4f", l + 2, h2 + 1,
                    static_cast<double>(s.composition[size_t((l * H + h1) * H + h2)]));
      std::printf("\n");
    }
}

}  // namespace

// The text task's corpus: --text FILE, or nullptr (the built-in text of --builtin-text) without
// it. A bad text is an Error of kind Input naming the file.
std::shared_ptr<const TextCorpus> corpus_from(const Args& args, const TrainerConfig& config) {
  if (config.task.name != "text") {
    if (args.has("text"))
      throw UsageError(str_cat("--text needs --task text (the task is ", config.task.name, ")"));
    return nullptr;
  }
  if (!args.has("text")) return nullptr;  // the Trainer's default corpus
  const std::string path = args.get("text");
  const std::vector<uint8_t> bytes = read_file(path);
  try {
    return std::make_shared<const TextCorpus>(
        make_corpus(std::string(bytes.begin(), bytes.end()), config.task.seq_len));
  } catch (const Error& e) {
    throw Error(e.kind(), e.key(), str_cat(path, ": ", e.what()));
  }
}

int cmd_train(const std::vector<std::string>& argv) {
  std::vector<Flag> flags = trainer_flags();
  for (Flag& f : ablation_flags()) flags.push_back(f);
  flags.push_back({"steps", "N", "360", "training steps (0 saves the initial weights)"});
  flags.push_back({"log-every", "N", "20", "print the loss every N steps (and the last)"});
  flags.push_back({"save", "PATH", "",
                   "write the trained weights as safetensors (with --task text, and the vocab)"});
  flags.push_back({"threads", "N", "1",
                   "threads for the per-sequence head loops and the row-wise layers (the matrix "
                   "products stay Eigen's, one thread); the results are the same for any N"});
  flags.push_back({"text", "FILE", "",
                   "the corpus of --task text: UTF-8 text, at most 2 MB and 256 distinct "
                   "characters (default: the built-in text of --builtin-text)"});
  flags.push_back({"preset", "NAME", "",
                   str_cat("start from a named preset's config (the flags given override it): ",
                           preset_names())});
  const Args args("train",
                  "Trains TinyAttentionLM with Adam and prints the loss. With --task text the "
                  "tokens are the characters of a corpus: 90% trains, 10% validates, and each "
                  "report adds the validation loss in bits per character. With --objective mlm "
                  "the loss and the accuracy are at the masked positions, and each report adds "
                  "the validation split's masked-position accuracy.",
                  flags, argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  const Preset* preset = args.has("preset") ? &find_preset(args.get("preset")) : nullptr;
  const TrainerConfig base = preset ? preset->config() : TrainerConfig();
  const TrainerConfig config = trainer_config_from(args, preset ? &base : nullptr);
  const int steps = args.get_int("steps", 0, 100000000);
  const int log_every = args.get_int("log-every", 1, 100000000);
  set_thread_count(args.get_int("threads", 1, thread_capacity()));

  const Trainer::Ablation ablation = ablation_from(args, config);
  Trainer trainer(config, corpus_from(args, config));
  trainer.set_ablation(ablation);
  std::printf("# V=%d D=%d H=%d T=%d B=%d lr=%g seed=%llu task=%s\n",
              trainer.config().model.vocab_size, config.model.d_model, config.model.n_heads,
              config.task.seq_len, config.training.batch_size, config.training.lr,
              static_cast<unsigned long long>(config.training.seed), config.task.name.c_str());
  const int64_t n_params = trainer.family_model().param_count();
  const int64_t n_active = trainer.family_model().active_param_count();
  std::printf("parameters: %lld\n", static_cast<long long>(n_params));
  if (n_active != n_params)
    std::printf("active parameters: %lld\n", static_cast<long long>(n_active));
  const TextCorpus* corpus = trainer.corpus();
  // A masked language model: every accuracy is over the selected (masked) positions only.
  const bool mlm = config.model.objective == Objective::Mlm;
  if (mlm)
    std::printf(
        "# objective mlm: %g of the tokens selected (80%% [MASK], 10%% another token, "
        "10%% kept), loss and accuracy at the selected positions\n",
        static_cast<double>(config.training.mask_rate));
  if (config.model.attention != AttentionKind::Full || config.model.differential)
    std::printf("# attention %s%s%s\n", attention_kind_name(config.model.attention),
                config.model.attention == AttentionKind::Full
                    ? ""
                    : str_cat(" window ", config.model.window,
                              config.model.attention == AttentionKind::Strided
                                  ? str_cat(" stride ", config.model.stride)
                                  : std::string())
                          .c_str(),
                config.model.differential ? ", differential" : "");
  if (corpus) {
    std::printf("# text: %zu characters (%zu train, %zu validation), vocab %s\n",
                corpus->train.size() + corpus->val.size(), corpus->train.size(),
                corpus->val.size(), json::quote(vocab_to_utf8(corpus->vocab)).c_str());
    std::printf("# unigram entropy %.4f bits per char (%.4f nats): the loss of a model that only "
                "counts characters\n",
                corpus->unigram_entropy_bits(), corpus->unigram_entropy_nats());
  }
  const bool ablated = args.has("mask") || args.has("no-scale-scores") || args.has("heads-off") ||
                       args.has("heads-frozen");
  if (ablated)
    std::printf("# ablation: mask %s, scaling %s, heads off [%s], frozen [%s]\n",
                mask_mode_name(ablation.mask), ablation.scale_scores ? "on" : "off",
                args.get("heads-off").c_str(), args.get("heads-frozen").c_str());
  const auto t0 = std::chrono::steady_clock::now();
  for (int done = 0; done < steps;) {
    const int chunk = std::min(log_every - done % log_every, steps - done);
    const float loss = trainer.step(chunk);
    done += chunk;
    if (done % log_every != 0 && done != steps) continue;
    std::printf("step %d loss %.9g accuracy %.4f", done, static_cast<double>(loss),
                static_cast<double>(trainer.last_accuracy()));
    if (corpus) {
      const TextEvaluation v = evaluate_text(trainer.family_model(), trainer.data(), kTextEvalBatches);
      std::printf(" val_loss %.6f val_bits_per_char %.4f", v.val_loss, v.val_bits_per_char);
      if (mlm) std::printf(" val_masked_accuracy %.4f", v.accuracy);
    } else if (mlm) {
      std::printf(" val_masked_accuracy %.4f",
                  static_cast<double>(
                      evaluate(trainer.family_model(), trainer.data(), kTextEvalBatches).accuracy));
    }
    std::printf("\n");
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (steps > 0) {
    std::printf("# %d steps in %.3f s (%.1f steps/s)\n", steps, secs, steps / secs);
    const Evaluation e = evaluate(trainer.family_model(), trainer.data(), 8);
    if (mlm)
      std::printf(
          "# eval masked-position accuracy %.4f loss %.6g (eval mode, 8 fresh %s, "
          "%g of the tokens selected)\n",
          static_cast<double>(e.accuracy), static_cast<double>(e.loss),
          corpus ? "batches of the validation split" : "batches",
          static_cast<double>(config.training.mask_rate));
    else
      std::printf("# eval accuracy %.4f loss %.6g (eval mode, 8 fresh batches)\n",
                  static_cast<double>(e.accuracy), static_cast<double>(e.loss));
    if (ablated) {  // the same weights with the intact layer: what the interventions changed
      trainer.set_ablation(Trainer::Ablation{});
      const Evaluation intact = evaluate(trainer.family_model(), trainer.data(), 8);
      std::printf("# intact layer: eval accuracy %.4f loss %.6g (same weights, causal mask)\n",
                  static_cast<double>(intact.accuracy), static_cast<double>(intact.loss));
      trainer.set_ablation(ablation);
    }
  }
  if (steps > 0) print_circuits(trainer);
  if (args.has("save")) {
    write_file_atomic(args.get("save"), corpus ? save_model(trainer.family_model(), corpus->vocab)
                                               : save_model(trainer.family_model()));
    std::printf("# saved %s\n", args.get("save").c_str());
  }
  return 0;
}

}  // namespace attn::cli
