#include "attn/train/trainer.h"

#include <cmath>
#include <utility>

#include "attn/nn/loss.h"

namespace attn {

namespace {

// The corpus the text task trains on (nullptr for other tasks), after the
// config's own checks.
std::shared_ptr<const TextCorpus>
corpus_for(const TrainerConfig &c, std::shared_ptr<const TextCorpus> corpus) {
  c.validate();
  const Task task = parse_task(c.task.name);
  check_family_takes(c.task.name, task_batch_kind(task),
                     find_family(family_name(c.model.family)));
  if (task != Task::Text)
    return nullptr;
  if (!corpus) {
    // The built-in text of builtin_text, each built once in the process: the
    // page builds a new Trainer on every configure and reset.
    static const std::shared_ptr<const TextCorpus> builtin[] = {
        std::make_shared<const TextCorpus>(
            make_corpus(builtin_text(BuiltinText::Sentences), 1)),
        std::make_shared<const TextCorpus>(
            make_corpus(builtin_text(BuiltinText::Shakespeare), 1))};
    corpus = builtin[int(c.task.builtin_text)];
  }
  check_corpus_fits(*corpus, c.task.seq_len);
  return corpus;
}

// c with the corpus's vocabulary size (markov: the chain's symbols), validated
// again (the state bound depends on it).
TrainerConfig with_corpus(TrainerConfig c, const TextCorpus *corpus) {
  if (corpus)
    c.model.vocab_size = corpus->vocab_size();
  if (parse_task(c.task.name) == Task::Markov)
    c.model.vocab_size = c.task.markov_symbols;
  c.validate();
  return c;
}

// Adam (AdamW with weight_decay) from the training keys; the floats as their shortest decimals,
// as PyTorch takes betas=(0.9, 0.95) and weight_decay=0.1 as Python floats.
AdamConfig adam_config(const TrainingConfig &t) {
  AdamConfig a;
  a.lr = t.lr;
  a.beta2 = shortest_decimal(t.adam_beta2);
  a.weight_decay = shortest_decimal(t.weight_decay);
  return a;
}

} // namespace

Trainer::Trainer(const TrainerConfig &c) : Trainer(c, nullptr) {}

Trainer::Trainer(const TrainerConfig &c,
                 std::shared_ptr<const TextCorpus> corpus)
    : corpus_(corpus_for(c, std::move(corpus))),
      config_(with_corpus(c, corpus_.get())),
      data_{parse_task(c.task.name),
            config_.model.vocab_size,
            config_.training.batch_size,
            config_.task.seq_len,
            c.training.seed,
            corpus_.get(),
            config_.model.objective == Objective::Mlm
                ? config_.training.mask_rate
                : 0.0f,
            config_.task.params(),
            parse_task(c.task.name) == Task::Markov
                ? markov_chain_for(config_.task.params(), c.training.seed)
                : nullptr},
      model_(make_model(family_name(config_.model.family),
                        config_.model_config(), c.training.seed)),
      adam_(model_->parameters(), adam_config(c.training)),
      data_rng_(c.training.seed ^ 0xD1B54A32D192ED03ULL),
      dropout_rng_(c.training.seed ^ 0x9E6C63D0676A9A99ULL),
      train_state_(model_->new_state()), last_loss_(std::nanf("")),
      last_accuracy_(std::nanf("")), last_parts_{std::nanf(""), std::nanf("")} {
  history_.reserve(kMaxHistory);
  // Long sequences train tile by tile (where the layers allow it: no attention
  // dropout).
  train_state_->tiled = c.task.seq_len >= kTiledMinLength;
}

// One step: batch -> forward -> loss (cross-entropy + aux) -> backward -> Adam,
// all through the seam.
float Trainer::step(int n) {
  require(n >= 0, "step count (", n, ") must be >= 0");
  ModelState &s = *train_state_;
  for (int i = 0; i < n; ++i) {
    data_.draw(data_rng_, batch_, /*validation=*/false);
    model_->forward(batch_, /*training=*/true, dropout_rng_, s);
    const StepLoss parts = model_loss(batch_, s);
    const float loss = parts.total();
    model_->backward(batch_, s);
    bool finite = std::isfinite(loss);
    for (const ParamRef &p : adam_.params)
      finite = finite &&
               Eigen::Map<const Eigen::ArrayXf>(p.grad, p.numel()).allFinite();
    if (!finite)
      throw RuntimeError(
          ErrorKind::NonFinite, "",
          str_cat("training stopped at step ", adam_.t + 1, " because the ",
                  std::isfinite(loss) ? "gradient" : "loss",
                  " became non-finite (lr ", config_.training.lr,
                  " is probably too high); the weights are kept from step ",
                  adam_.t, ", so lower the learning rate or reset"));
    last_accuracy_ = token_accuracy(s.logits, batch_.targets.data());
    if (config_.training.grad_clip > 0.0f)
      clip_grad_norm(adam_.params, shortest_decimal(config_.training.grad_clip));
    if (any_frozen_)
      model_->hold_frozen();
    adam_.step();
    if (any_frozen_)
      model_->restore_frozen();
    record_loss(loss);
    last_loss_ = loss;
    last_parts_ = parts;
  }
  return last_loss_;
}

void Trainer::set_ablation(const Ablation &a) {
  const int H = config_.model.n_heads, L = config_.model.n_layers;
  const size_t G = size_t(L) * H;
  // "(4)" for one layer; "(2 layers x 4 heads = 8, index layer * 4 + head)" for
  // more.
  const std::string count =
      L == 1 ? str_cat("(", G, ")")
             : str_cat("(", L, " layers x ", H, " heads = ", G,
                       ", index layer * ", H, " + head)");
  require(a.heads_off.empty() || a.heads_off.size() == G, "heads_off has ",
          a.heads_off.size(), " entries, expected one per head ", count);
  require(a.heads_frozen.empty() || a.heads_frozen.size() == G,
          "heads_frozen has ", a.heads_frozen.size(),
          " entries, expected one per head ", count);
  ablation_ = a;
  ablation_.heads_off.resize(G, 0);
  ablation_.heads_frozen.resize(G, 0);
  any_frozen_ = false;
  for (uint8_t f : ablation_.heads_frozen)
    any_frozen_ = any_frozen_ || f;
  model_->set_ablation(ablation_);
}

float Trainer::peek_loss() {
  // Rewound below: the batch and the dropout masks are step()'s.
  const Rng saved_data = data_rng_, saved_dropout = dropout_rng_;
  data_.draw(data_rng_, batch_, /*validation=*/false);
  model_->forward(batch_, /*training=*/true, dropout_rng_, *train_state_);
  const float loss = model_loss_value(batch_, *train_state_).total();
  data_rng_ = saved_data;
  dropout_rng_ = saved_dropout;
  return loss;
}

void Trainer::record_loss(float loss) {
  if ((adam_.t - 1) % history_stride_ != 0)
    return;
  if (history_.size() ==
      kMaxHistory) { // thin to every other kept step; no reallocation
    for (size_t i = 0; i < kMaxHistory / 2; ++i)
      history_[i] = history_[2 * i];
    history_.resize(kMaxHistory / 2);
    history_stride_ *= 2;
    if ((adam_.t - 1) % history_stride_ != 0)
      return;
  }
  history_.push_back(loss);
}

int64_t Trainer::phase_change_step() {
  return phase_.update(history_.data(), history_.size(), history_stride_);
}

} // namespace attn
