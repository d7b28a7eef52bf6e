#include "attn/train/trainer.h"

#include <cmath>
#include <utility>

#include "attn/nn/loss.h"

namespace attn {

namespace {

// The corpus the text task trains on (nullptr for other tasks), after the config's own checks.
std::shared_ptr<const TextCorpus> corpus_for(const TrainerConfig& c,
                                             std::shared_ptr<const TextCorpus> corpus) {
  c.validate();
  if (parse_task(c.task.name) != Task::Text) return nullptr;
  if (!corpus) {
    // Built once in the process: the page builds a new Trainer on every configure and reset.
    static const std::shared_ptr<const TextCorpus> fallback =
        std::make_shared<const TextCorpus>(make_corpus(default_corpus(), 1));
    corpus = fallback;
  }
  check_corpus_fits(*corpus, c.task.seq_len);
  return corpus;
}

// c with the corpus's vocabulary size, validated again (the state bound depends on it).
TrainerConfig with_corpus(TrainerConfig c, const TextCorpus* corpus) {
  if (corpus) c.model.vocab_size = corpus->vocab_size();
  c.validate();
  return c;
}

}  // namespace

Trainer::Trainer(const TrainerConfig& c) : Trainer(c, nullptr) {}

Trainer::Trainer(const TrainerConfig& c, std::shared_ptr<const TextCorpus> corpus)
    : corpus_(corpus_for(c, std::move(corpus))),
      config_(with_corpus(c, corpus_.get())),
      data_{parse_task(c.task.name),
            config_.model.vocab_size,
            config_.training.batch_size,
            config_.task.seq_len,
            c.training.seed,
            corpus_.get(),
            config_.model.objective == Objective::Mlm ? config_.training.mask_rate : 0.0f},
      model_(config_.model_config(), c.training.seed),
      adam_(model_.parameters(), AdamConfig{c.training.lr}),
      data_rng_(c.training.seed ^ 0xD1B54A32D192ED03ULL),
      dropout_rng_(c.training.seed ^ 0x9E6C63D0676A9A99ULL),
      last_loss_(std::nanf("")),
      last_accuracy_(std::nanf("")) {
  history_.reserve(kMaxHistory);
  // Long sequences train tile by tile (where the layers allow it: no attention dropout).
  train_state_.tiled = c.task.seq_len >= kTiledMinLength;
}

float Trainer::step(int n) {
  require(n >= 0, "step count (", n, ") must be >= 0");
  const int B = config_.training.batch_size, T = config_.task.seq_len;
  TinyAttentionLM::State& s = train_state_;
  for (int i = 0; i < n; ++i) {
    data_.draw(data_rng_, batch_, /*validation=*/false);
    model_.forward(batch_.inputs.data(), B, T, /*training=*/true, dropout_rng_, s);
    s.dlogits.resize(s.logits.rows(), s.logits.cols());
    const float loss = cross_entropy(s.logits, batch_.targets.data(), s.dlogits);
    model_.backward(batch_.inputs.data(), s);
    bool finite = std::isfinite(loss);
    for (const ParamRef& p : adam_.params)
      finite = finite && Eigen::Map<const Eigen::ArrayXf>(p.grad, p.numel()).allFinite();
    if (!finite)
      throw RuntimeError(
          ErrorKind::NonFinite, "",
          str_cat("training stopped at step ", adam_.t + 1, " because the ",
                  std::isfinite(loss) ? "gradient" : "loss", " became non-finite (lr ",
                  config_.training.lr, " is probably too high); the weights are kept from step ",
                  adam_.t, ", so lower the learning rate or reset"));
    last_accuracy_ = token_accuracy(s.logits, batch_.targets.data());
    if (any_frozen_)
      for (int l = 0; l < config_.model.n_layers; ++l) {
        if (!layer_frozen(l)) continue;
        const MultiHeadSelfAttention& m = model_.layers[size_t(l)];
        FrozenCopy& f = frozen_[size_t(l)];
        f.qkv_w = m.qkv_proj.weight;  // same sizes (set_ablation): no allocation
        f.qkv_b = m.qkv_proj.bias;
        f.out_w = m.out_proj.weight;
        f.lambda = m.lambda;
      }
    adam_.step();
    if (any_frozen_) restore_frozen();
    record_loss(loss);
    last_loss_ = loss;
  }
  return last_loss_;
}

void Trainer::set_ablation(const Ablation& a) {
  const int H = config_.model.n_heads, L = config_.model.n_layers;
  const size_t G = size_t(L) * H;
  // "(4)" for one layer; "(2 layers x 4 heads = 8, index layer * 4 + head)" for more.
  const std::string count =
      L == 1 ? str_cat("(", G, ")")
             : str_cat("(", L, " layers x ", H, " heads = ", G, ", index layer * ", H, " + head)");
  require(a.heads_off.empty() || a.heads_off.size() == G, "heads_off has ", a.heads_off.size(),
          " entries, expected one per head ", count);
  require(a.heads_frozen.empty() || a.heads_frozen.size() == G, "heads_frozen has ",
          a.heads_frozen.size(), " entries, expected one per head ", count);
  ablation_ = a;
  ablation_.heads_off.resize(G, 0);
  ablation_.heads_frozen.resize(G, 0);
  any_frozen_ = false;
  frozen_.resize(size_t(L));
  for (int l = 0; l < L; ++l) {
    MultiHeadSelfAttention& m = model_.layers[size_t(l)];
    for (int h = 0; h < H; ++h)
      m.head_off[size_t(h)] = ablation_.heads_off[size_t(l) * H + h] ? 1 : 0;
    m.scale_scores = a.scale_scores;
    m.mask = a.mask;
    if (!layer_frozen(l)) continue;
    any_frozen_ = true;
    FrozenCopy& f = frozen_[size_t(l)];  // sized here so that step() allocates nothing
    f.qkv_w.resize(m.qkv_proj.weight.rows(), m.qkv_proj.weight.cols());
    f.qkv_b.resize(m.qkv_proj.bias.size());
    f.out_w.resize(m.out_proj.weight.rows(), m.out_proj.weight.cols());
    f.lambda.resize(m.lambda.size());
  }
}

bool Trainer::layer_frozen(int l) const {
  const size_t H = size_t(config_.model.n_heads);
  if (ablation_.heads_frozen.size() < (size_t(l) + 1) * H) return false;
  for (size_t h = 0; h < H; ++h)
    if (ablation_.heads_frozen[size_t(l) * H + h]) return true;
  return false;
}

// Puts back the frozen heads' slices that Adam just moved.
void Trainer::restore_frozen() {
  for (int l = 0; l < config_.model.n_layers; ++l) {
    if (!layer_frozen(l)) continue;
    MultiHeadSelfAttention& m = model_.layers[size_t(l)];
    const FrozenCopy& f = frozen_[size_t(l)];
    const int Dh = m.d_head;
    for (int h = 0; h < m.n_heads; ++h) {
      if (!ablation_.heads_frozen[size_t(l) * m.n_heads + h]) continue;
      // With grouped K/V heads, the k and v a frozen head reads stay put for its whole group.
      // A differential head keeps its second query and key, and its lambda, too.
      const int rows = m.options.differential ? 5 : 3;
      const Eigen::Index starts[5] = {m.q_offset(h), m.k_offset(h), m.v_offset(h),
                                      m.q2_offset(h), m.k2_offset(h)};
      for (int i = 0; i < rows; ++i) {
        m.qkv_proj.weight.middleRows(starts[i], Dh) = f.qkv_w.middleRows(starts[i], Dh);
        m.qkv_proj.bias.segment(starts[i], Dh) = f.qkv_b.segment(starts[i], Dh);
      }
      m.out_proj.weight.middleCols(h * Dh, Dh) = f.out_w.middleCols(h * Dh, Dh);
      if (m.options.differential) m.lambda[h] = f.lambda[h];
    }
  }
}

float Trainer::peek_loss() {
  // Rewound below: the batch and the dropout masks are step()'s.
  const Rng saved_data = data_rng_, saved_dropout = dropout_rng_;
  const int B = config_.training.batch_size, T = config_.task.seq_len;
  data_.draw(data_rng_, batch_, /*validation=*/false);
  model_.forward(batch_.inputs.data(), B, T, /*training=*/true, dropout_rng_, train_state_);
  const float loss = cross_entropy_loss(train_state_.logits, batch_.targets.data());
  data_rng_ = saved_data;
  dropout_rng_ = saved_dropout;
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

int64_t Trainer::phase_change_step() {
  return phase_.update(history_.data(), history_.size(), history_stride_);
}

}  // namespace attn
