#include "attn/trainer.h"

#include <cmath>

#include "attn/loss.h"

namespace attn {

namespace {

enum Field { kVocab, kDModel, kHeads, kSeqLen, kBatch, kLr, kSeed, kAttnDrop, kOutDrop, kTask };

const char* key_name(Field f, TrainerConfig::KeyStyle style) {
  static const char* const names[3][10] = {
      {"vocab_size", "d_model", "n_heads", "seq_len", "batch_size", "lr", "seed", "attn_dropout",
       "out_dropout", "task"},
      {"vocabSize", "dModel", "nHeads", "seqLen", "batchSize", "lr", "seed", "attnDropout",
       "outDropout", "task"},
      {"--vocab", "--d-model", "--heads", "--seq-len", "--batch", "--lr", "--seed",
       "--attn-dropout", "--out-dropout", "--task"},
  };
  return names[static_cast<int>(style)][f];
}

void check_range(int value, int lo, int hi, Field f, TrainerConfig::KeyStyle style) {
  require(value >= lo && value <= hi, key_name(f, style), " (", value, ") must be in [", lo, ", ",
          hi, "]");
}

const TrainerConfig& validated(const TrainerConfig& c) {
  c.validate();
  return c;
}

// Rough count of floats a Trainer holds: parameters x 4 (value, grad, Adam m, v) + activations.
int64_t state_elements(const TrainerConfig& c) {
  const int64_t V = c.vocab_size, D = c.d_model, H = c.n_heads, T = c.seq_len, B = c.batch_size;
  const int64_t params = 2 * V * D + 4 * D * D + 4 * D + V;
  const int64_t acts = B * T * (12 * D + 2 * V) + 3 * B * H * T * T;
  return 4 * params + acts + T * D;
}

}  // namespace

void TrainerConfig::validate(KeyStyle style) const {
  check_range(vocab_size, 1, 65536, kVocab, style);
  check_range(d_model, 2, 4096, kDModel, style);
  check_range(n_heads, 1, d_model, kHeads, style);
  require(d_model % n_heads == 0, key_name(kDModel, style), " (", d_model,
          ") must be divisible by ", key_name(kHeads, style), " (", n_heads, ")");
  require(d_model % 2 == 0, key_name(kDModel, style), " (", d_model,
          ") must be even for sinusoidal positions");
  check_range(seq_len, 1, 4096, kSeqLen, style);
  check_range(batch_size, 1, 4096, kBatch, style);
  require(std::isfinite(lr) && lr > 0.0f && lr <= 10.0f, key_name(kLr, style), " (", lr,
          ") must be in (0, 10]");
  require(std::isfinite(attn_dropout) && attn_dropout >= 0.0f && attn_dropout < 1.0f,
          key_name(kAttnDrop, style), " (", attn_dropout, ") must be in [0, 1)");
  require(std::isfinite(out_dropout) && out_dropout >= 0.0f && out_dropout < 1.0f,
          key_name(kOutDrop, style), " (", out_dropout, ") must be in [0, 1)");
  try {
    check_task(parse_task(task), vocab_size, seq_len);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(str_cat(key_name(kTask, style), ": ", e.what()));
  }
  const int64_t n = state_elements(*this);
  require(n <= kMaxStateElements, "this config needs about ", n, " floats of state, more than the ",
          kMaxStateElements, " allowed; reduce ", key_name(kVocab, style), ", ",
          key_name(kDModel, style), ", ", key_name(kSeqLen, style), " or ",
          key_name(kBatch, style));
}

ModelConfig TrainerConfig::model_config() const {
  ModelConfig m;
  m.vocab_size = vocab_size;
  m.d_model = d_model;
  m.n_heads = n_heads;
  m.max_context_length = seq_len;
  m.attn_dropout = attn_dropout;
  m.out_dropout = out_dropout;
  return m;
}

Trainer::Trainer(const TrainerConfig& c)
    : config_(validated(c)),
      task_(parse_task(c.task)),
      model_(c.model_config(), c.seed),
      adam_(model_.parameters(), AdamConfig{c.lr}),
      data_rng_(c.seed ^ 0xD1B54A32D192ED03ULL),
      last_loss_(std::nanf("")),
      last_accuracy_(std::nanf("")) {
  history_.reserve(kMaxHistory);
}

float Trainer::step(int n) {
  require(n >= 0, "step count (", n, ") must be >= 0");
  const int B = config_.batch_size, T = config_.seq_len;
  TinyAttentionLM::State& s = train_state_;
  for (int i = 0; i < n; ++i) {
    make_batch(task_, config_.vocab_size, B, T, data_rng_, batch_);
    model_.forward(batch_.inputs.data(), B, T, /*training=*/true, data_rng_, s);
    s.dlogits.resize(s.logits.rows(), s.logits.cols());
    const float loss = cross_entropy(s.logits, batch_.targets.data(), s.dlogits);
    model_.backward(batch_.inputs.data(), s);
    bool finite = std::isfinite(loss);
    for (const ParamRef& p : adam_.params)
      finite = finite && Eigen::Map<const Eigen::ArrayXf>(p.grad, p.numel()).allFinite();
    if (!finite)
      throw std::runtime_error(str_cat(
          "training stopped at step ", adam_.t + 1, " because the ",
          std::isfinite(loss) ? "gradient" : "loss", " became non-finite (lr ", config_.lr,
          " is probably too high); the weights are kept from step ", adam_.t,
          ", so lower the learning rate or reset"));
    last_accuracy_ = token_accuracy(s.logits, batch_.targets.data());
    adam_.step();
    record_loss(loss);
    last_loss_ = loss;
  }
  return last_loss_;
}

float Trainer::eval_accuracy(int n_batches) {
  require(n_batches >= 1 && n_batches <= 1000, "n_batches (", n_batches, ") must be in [1, 1000]");
  const int B = config_.batch_size, T = config_.seq_len;
  Rng rng(config_.seed ^ 0x2545F4914F6CDD1DULL);
  double right = 0.0, count = 0.0;
  for (int i = 0; i < n_batches; ++i) {
    make_batch(task_, config_.vocab_size, B, T, rng, eval_batch_);
    model_.forward(eval_batch_.inputs.data(), B, T, /*training=*/false, rng, eval_state_);
    const float acc = token_accuracy(eval_state_.logits, eval_batch_.targets.data());
    if (std::isnan(acc)) continue;
    int predictable = 0;
    for (Eigen::Index k = 0; k < eval_batch_.targets.size(); ++k)
      predictable += eval_batch_.targets.data()[k] != kIgnoreIndex;
    right += double(acc) * predictable;
    count += predictable;
  }
  return count > 0 ? static_cast<float>(right / count) : std::nanf("");
}

float Trainer::peek_loss() {
  const Rng saved = data_rng_;  // rewound below: the batch and dropout masks are step()'s
  const int B = config_.batch_size, T = config_.seq_len;
  make_batch(task_, config_.vocab_size, B, T, data_rng_, batch_);
  model_.forward(batch_.inputs.data(), B, T, /*training=*/true, data_rng_, train_state_);
  const float loss = cross_entropy_loss(train_state_.logits, batch_.targets.data());
  data_rng_ = saved;
  return loss;
}

void Trainer::record_loss(float loss) {
  if ((adam_.t - 1) % history_stride_ != 0) return;
  if (history_.size() == kMaxHistory) {  // thin to every other kept step; no reallocation
    for (size_t i = 0; i < kMaxHistory / 2; ++i) history_[i] = history_[2 * i];
    history_.resize(kMaxHistory / 2);
    history_stride_ *= 2;
    if ((adam_.t - 1) % history_stride_ != 0) return;
  }
  history_.push_back(loss);
}

void Trainer::attention(const int32_t* ids, int T, Mat& weights, Mat& logits) {
  require(T >= 1 && T <= config_.seq_len, "sequence length (", T, ") must be in [1, ",
          config_.seq_len, "]");
  model_.forward(ids, 1, T, /*training=*/false, data_rng_, eval_state_);
  weights = eval_state_.attn.weights();
  logits = eval_state_.logits;
}

}  // namespace attn
