// attn eval: a trained model on its task at another sequence length (the length-extrapolation
// experiment): loss, accuracy and accuracy per position as JSON.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "attn/base/json.h"
#include "attn/data/tasks.h"
#include "attn/data/text.h"
#include "attn/interp/length_eval.h"
#include "attn/io/weights.h"
#include "cli/args.h"
#include "cli/commands.h"

namespace attn::cli {

namespace {

const std::vector<Flag> kEvalFlags = {
    {"weights", "PATH", "", "model weights (safetensors, as written by attn train --save)", true},
    {"task", "NAME", "", str_cat("task: ", choices_text(kTasks)), true},
    {"seq-len", "N", "", "sequence length to evaluate at (past max_seq_len: not with learned "
                         "positions)", true},
    {"batches", "N", "8", "batches of fresh sequences to average over"},
    {"batch", "B", "16", "sequences per batch"},
    {"seed", "N", "1", "seed of the evaluation sequences"},
    {"text", "FILE", "", "with --task text: the corpus whose validation split (its last 10%) is "
                         "evaluated (default: the built-in corpus)"},
};

// A number for JSON: NaN (no predictable position) is null.
std::string json_number(double v) { return std::isfinite(v) ? str_cat(v) : "null"; }

}  // namespace

int cmd_eval(const std::vector<std::string>& argv) {
  const Args args("eval",
                  "Evaluates saved weights on a task at any sequence length, in eval mode, and "
                  "prints JSON: loss, accuracy (predictable positions) and accuracy per position.",
                  kEvalFlags, argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  const int N = args.get_int("seq-len", 1, kMaxEvalLength);
  const int n_batches = args.get_int("batches", 1, 1000);
  const int B = args.get_int("batch", 1, 4096);
  const uint64_t seed = static_cast<uint64_t>(args.get_int("seed", 0, 1L << 30));
  const Task task = [&] {
    try {
      return parse_task(args.get("task"));
    } catch (const std::invalid_argument& e) {
      throw Error(ErrorKind::Config, "task", str_cat("--task: ", e.what()));
    }
  }();

  const std::string path = args.get("weights");
  std::vector<uint8_t> bytes;
  const std::unique_ptr<TinyAttentionLM> model = load_model_file(path, &bytes);
  if (task != Task::Text && args.has("text"))
    throw UsageError(str_cat("--text needs --task text (the task is ", task_name(task), ")"));
  const std::vector<int32_t> text =
      task == Task::Text ? text_split_ids(args, text_vocab(path, bytes), N, true) : std::vector<int32_t>{};
  const int C = model->config.max_context_length;
  const LengthEvaluation r = [&] {
    try {
      return evaluate_at_length(*model, task, N, n_batches, B, seed, nullptr,
                                task == Task::Text ? &text : nullptr);
    } catch (const Error& e) {
      if (e.key() != "task") throw;
      throw Error(ErrorKind::Config, "task", str_cat("--", e.what()));
    }
  }();
  std::string per_position;
  for (size_t t = 0; t < r.accuracy_per_position.size(); ++t)
    per_position += str_cat(t ? "," : "", json_number(r.accuracy_per_position[t]));
  std::printf(
      "{\"task\":%s,\"seq_len\":%d,\"max_seq_len\":%d,\"positions\":\"%s\",\"batches\":%d,"
      "\"batch\":%d,\"loss\":%s,\"accuracy\":%s,\"accuracy_per_position\":[%s]}\n",
      json::quote(task_name(task)).c_str(), N, C, position_kind_name(model->config.positions),
      n_batches, B, json_number(r.loss).c_str(), json_number(r.accuracy).c_str(),
      per_position.c_str());
  return 0;
}

}  // namespace attn::cli
