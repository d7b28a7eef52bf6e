// attn eval: a trained model on its task at another sequence length (the length-extrapolation
// experiment of issue 21): loss, accuracy and accuracy per position as JSON.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "attn/json.h"
#include "attn/loss.h"
#include "attn/tasks.h"
#include "attn/weights.h"
#include "cli/args.h"
#include "cli/commands.h"

namespace attn::cli {

namespace {

const std::vector<Flag> kEvalFlags = {
    {"weights", "PATH", "", "model weights (safetensors, as written by attn train --save)", true},
    {"task", "NAME", "", "task: repeat, shift, copy, reverse, sort, future or induction", true},
    {"seq-len", "N", "", "sequence length to evaluate at (past max_seq_len: not with learned "
                         "positions)", true},
    {"batches", "N", "8", "batches of fresh sequences to average over"},
    {"batch", "B", "16", "sequences per batch"},
    {"seed", "N", "1", "seed of the evaluation sequences"},
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
  const std::vector<uint8_t> bytes = read_file(path);
  std::unique_ptr<TinyAttentionLM> model;
  try {
    model = load_model_for_length(bytes.data(), bytes.size(), N);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Format) throw;
    throw Error(ErrorKind::Format, e.key(), str_cat(path, ": ", e.what()));
  }
  const ModelConfig& c = model->config;
  try {
    check_task(task, c.vocab_size, N);
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::Config, "task", str_cat("--task: ", e.what()));
  }

  Rng rng(seed);
  Batch batch;
  TinyAttentionLM::State s;
  std::vector<double> right(size_t(N), 0.0), count(size_t(N), 0.0);
  double loss_sum = 0.0, total = 0.0;
  for (int i = 0; i < n_batches; ++i) {
    make_batch(task, c.vocab_size, B, N, rng, batch);
    model->forward(batch.inputs.data(), B, N, /*training=*/false, rng, s);
    const int32_t* targets = batch.targets.data();
    int predictable = 0;
    for (Eigen::Index r = 0; r < s.logits.rows(); ++r) {
      if (targets[r] == kIgnoreIndex) continue;
      Eigen::Index best = 0;
      s.logits.row(r).maxCoeff(&best);
      const size_t t = size_t(r % N);
      right[t] += best == targets[r];
      count[t] += 1;
      ++predictable;
    }
    if (predictable == 0) continue;
    loss_sum += double(cross_entropy_loss(s.logits, targets)) * predictable;
    total += predictable;
  }
  double correct = 0.0;
  std::string per_position;
  for (size_t t = 0; t < size_t(N); ++t) {
    correct += right[t];
    per_position += str_cat(t ? "," : "", json_number(count[t] > 0 ? right[t] / count[t] : NAN));
  }
  std::printf(
      "{\"task\":%s,\"seq_len\":%d,\"max_seq_len\":%d,\"positions\":\"%s\",\"batches\":%d,"
      "\"batch\":%d,\"loss\":%s,\"accuracy\":%s,\"accuracy_per_position\":[%s]}\n",
      json::quote(task_name(task)).c_str(), N, infer_config(bytes.data(), bytes.size()).max_context_length,
      position_kind_name(c.positions), n_batches, B,
      json_number(total > 0 ? loss_sum / total : NAN).c_str(),
      json_number(total > 0 ? correct / total : NAN).c_str(), per_position.c_str());
  return 0;
}

}  // namespace attn::cli
