#include "attn/train/trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

#include "attn/data/mlm.h"
#include "attn/interp/length_eval.h"
#include "attn/nn/loss.h"

namespace attn {

namespace {

// The corpus the text task trains on (nullptr for other tasks), after the config's own checks.
std::shared_ptr<const TextCorpus> corpus_for(const TrainerConfig& c,
                                             std::shared_ptr<const TextCorpus> corpus) {
  c.validate();
  if (parse_task(c.task) != Task::Text) return nullptr;
  if (!corpus) {
    // Built once in the process: the page builds a new Trainer on every configure and reset.
    static const std::shared_ptr<const TextCorpus> fallback =
        std::make_shared<const TextCorpus>(make_corpus(default_corpus(), 1));
    corpus = fallback;
  }
  check_corpus_fits(*corpus, c.seq_len);
  return corpus;
}

// c with the corpus's vocabulary size, validated again (the state bound depends on it).
TrainerConfig with_corpus(TrainerConfig c, const TextCorpus* corpus) {
  if (corpus) c.vocab_size = corpus->vocab_size();
  c.validate();
  return c;
}

}  // namespace

Trainer::Trainer(const TrainerConfig& c) : Trainer(c, nullptr) {}

Trainer::Trainer(const TrainerConfig& c, std::shared_ptr<const TextCorpus> corpus)
    : corpus_(corpus_for(c, std::move(corpus))),
      config_(with_corpus(c, corpus_.get())),
      task_(parse_task(c.task)),
      model_(config_.model_config(), c.seed),
      adam_(model_.parameters(), AdamConfig{c.lr}),
      mlm_(config_.objective == "mlm"),
      data_rng_(c.seed ^ 0xD1B54A32D192ED03ULL),
      dropout_rng_(c.seed ^ 0x9E6C63D0676A9A99ULL),
      last_loss_(std::nanf("")),
      last_accuracy_(std::nanf("")) {
  history_.reserve(kMaxHistory);
}

float Trainer::step(int n) {
  require(n >= 0, "step count (", n, ") must be >= 0");
  const int B = config_.batch_size, T = config_.seq_len;
  TinyAttentionLM::State& s = train_state_;
  for (int i = 0; i < n; ++i) {
    draw_batch(data_rng_, batch_, /*validation=*/false);
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
                  std::isfinite(loss) ? "gradient" : "loss", " became non-finite (lr ", config_.lr,
                  " is probably too high); the weights are kept from step ", adam_.t,
                  ", so lower the learning rate or reset"));
    last_accuracy_ = token_accuracy(s.logits, batch_.targets.data());
    if (any_frozen_)
      for (int l = 0; l < config_.n_layers; ++l) {
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

namespace {
// The eval generator: the same batches on every call, apart from the training stream.
uint64_t eval_seed(const TrainerConfig& c) { return c.seed ^ 0x2545F4914F6CDD1DULL; }
Rng eval_rng(const TrainerConfig& c) { return Rng(eval_seed(c)); }
}  // namespace

float Trainer::eval_accuracy(int n_batches) { return evaluate(n_batches).accuracy; }

Trainer::Evaluation Trainer::evaluate(int n_batches) {
  require(n_batches >= 1 && n_batches <= 1000, "n_batches (", n_batches, ") must be in [1, 1000]");
  const int B = config_.batch_size, T = config_.seq_len;
  Rng rng = eval_rng(config_);
  double right = 0.0, loss = 0.0, count = 0.0;
  for (int i = 0; i < n_batches; ++i) {
    draw_batch(rng, eval_batch_, /*validation=*/true);
    model_.forward(eval_batch_.inputs.data(), B, T, /*training=*/false, rng, eval_state_);
    const float acc = token_accuracy(eval_state_.logits, eval_batch_.targets.data());
    if (std::isnan(acc)) continue;
    int predictable = 0;
    for (Eigen::Index k = 0; k < eval_batch_.targets.size(); ++k)
      predictable += eval_batch_.targets.data()[k] != kIgnoreIndex;
    right += double(acc) * predictable;
    loss += double(cross_entropy_loss(eval_state_.logits, eval_batch_.targets.data())) * predictable;
    count += predictable;
  }
  if (count == 0) return {std::nanf(""), std::nanf("")};
  return {static_cast<float>(loss / count), static_cast<float>(right / count)};
}

LengthEvaluation Trainer::evaluate_at(int seq_len, int n_batches, KeyNamer namer) {
  return evaluate_at_length(model_, task_, seq_len, n_batches, config_.batch_size,
                            eval_seed(config_), namer, corpus_ ? &corpus_->val : nullptr,
                            config_.mask_rate);
}

Trainer::TextEvaluation Trainer::evaluate_text(int n_batches) {
  require_state(corpus_ != nullptr, "the validation loss in bits per character needs the text "
                "task, but the task is ", config_.task);
  const Evaluation e = evaluate(n_batches);
  const double ln2 = std::log(2.0), unigram = corpus_->unigram_entropy_nats();
  return {e.loss, e.loss / ln2, e.accuracy, unigram, unigram / ln2};
}

std::vector<int32_t> Trainer::sample_sequence(uint64_t seed) const {
  if (corpus_) return text_sample(*corpus_, config_.seq_len);
  return task_sample(task_, config_.vocab_size, config_.seq_len, seed);
}

void Trainer::draw_batch(Rng& rng, Batch& batch, bool validation) {
  const int B = config_.batch_size, T = config_.seq_len;
  if (corpus_)
    make_text_batch(validation ? corpus_->val : corpus_->train, B, T, rng, batch);
  else
    make_batch(task_, config_.vocab_size, B, T, rng, batch);
  if (mlm_) mask_for_mlm(batch, config_.vocab_size, config_.mask_rate, rng);
}

void Trainer::set_ablation(const Ablation& a) {
  const int H = config_.n_heads, L = config_.n_layers;
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
  const size_t H = size_t(config_.n_heads);
  if (ablation_.heads_frozen.size() < (size_t(l) + 1) * H) return false;
  for (size_t h = 0; h < H; ++h)
    if (ablation_.heads_frozen[size_t(l) * H + h]) return true;
  return false;
}

// Puts back the frozen heads' slices that Adam just moved.
void Trainer::restore_frozen() {
  for (int l = 0; l < config_.n_layers; ++l) {
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

Trainer::HeadStats Trainer::attention_stats() {
  const int B = config_.batch_size, T = config_.seq_len, H = config_.n_heads;
  const int L = config_.n_layers;
  Rng rng = eval_rng(config_);
  draw_batch(rng, eval_batch_, /*validation=*/true);
  model_.forward(eval_batch_.inputs.data(), B, T, /*training=*/false, rng, eval_state_);
  HeadStats st;
  st.entropy.assign(size_t(L) * H, 0.0f);
  st.max_weight.assign(size_t(L) * H, 0.0f);
  st.answer_mass.assign(size_t(L) * H, 0.0f);
  for (int l = 0; l < L; ++l) {
    const Mat& w = eval_state_.layers[size_t(l)].weights();
    for (int h = 0; h < H; ++h) {
      double entropy = 0.0, top = 0.0, mass = 0.0;
      int predictable = 0;
      for (int b = 0; b < B; ++b)
        for (int i = 0; i < T; ++i) {
          const auto row = w.row((Eigen::Index(b) * H + h) * T + i);
          // A row's entropy in float (logf: a double log per weight cost a third of a step
          // here), summed over rows in double.
          float e = 0.0f;
          for (int j = 0; j < T; ++j)
            if (row[j] > 0.0f) e -= row[j] * std::log(row[j]);
          entropy += e;
          top += row.maxCoeff();
          const int32_t target = eval_batch_.targets(b, i);
          if (target == kIgnoreIndex) continue;
          ++predictable;
          for (int j = 0; j < T; ++j)
            if (eval_batch_.inputs(b, j) == target) mass += row[j];
        }
      const size_t g = size_t(l) * H + h;
      st.entropy[g] = static_cast<float>(entropy / (double(B) * T));
      st.max_weight[g] = static_cast<float>(top / (double(B) * T));
      st.answer_mass[g] = predictable ? static_cast<float>(mass / predictable) : std::nanf("");
    }
  }
  return st;
}

Trainer::RowBackward Trainer::row_backward(const int32_t* ids, int T, int head, int query,
                                           int target) {
  require(T >= 1 && T <= config_.seq_len, "sequence length (", T, ") must be in [1, ",
          config_.seq_len, "]");
  require(target >= 0 && target < config_.vocab_size, "target (", target, ") must be in [0, ",
          config_.vocab_size - 1, "]");
  const int H = config_.n_heads, G = config_.n_layers * H;
  require(head >= 0 && head < G, "head (", head, ") must be in [0, ", G - 1, "]",
          config_.n_layers > 1 ? " (global index layer * n_heads + head)" : "");
  row_state_.inspect = true;
  const float loss = model_.position_loss_backward(ids, T, query, target, row_state_);
  const int l = head / H;
  const MultiHeadSelfAttention& layer = model_.layers[size_t(l)];
  return {loss, layer.head_row(row_state_.layers[size_t(l)], 0, head % H, query)};
}

float Trainer::peek_loss() {
  // Rewound below: the batch and the dropout masks are step()'s.
  const Rng saved_data = data_rng_, saved_dropout = dropout_rng_;
  const int B = config_.batch_size, T = config_.seq_len;
  draw_batch(data_rng_, batch_, /*validation=*/false);
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

void Trainer::attention(const int32_t* ids, int T, Mat& weights, Mat& logits) {
  require(T >= 1 && T <= config_.seq_len, "sequence length (", T, ") must be in [1, ",
          config_.seq_len, "]");
  model_.forward(ids, 1, T, /*training=*/false, data_rng_, eval_state_);
  eval_state_.stacked_weights(weights);  // B = 1: (L,H,T,T)
  logits = eval_state_.logits;
}

// ---- Circuits ----

Trainer::HeadScores Trainer::head_scores() {
  const int B = config_.batch_size, T = config_.seq_len, H = config_.n_heads;
  const int L = config_.n_layers, V = config_.vocab_size, D = config_.d_model;
  bool induction = true;
  try {
    check_task(Task::Induction, V, T);
  } catch (const std::invalid_argument&) {
    induction = false;
  }
  std::vector<ScoreSum> previous(size_t(L * H)), prefix(size_t(L * H));
  Rng rng(config_.seed ^ 0x6A09E667F3BCC909ULL);
  for (int rows = 0; rows < kScoreRows && T >= 2; rows += B) {
    make_batch(induction ? Task::Induction : Task::Shift, V, B, T, rng, eval_batch_);
    model_.forward(eval_batch_.inputs.data(), B, T, /*training=*/false, rng, eval_state_);
    for (int l = 0; l < L; ++l) {
      const Mat& w = eval_state_.layers[size_t(l)].weights();
      add_previous_token(w, B, H, T, &previous[size_t(l * H)]);
      if (induction) add_prefix_matching(w, eval_batch_.inputs.data(), B, H, T, &prefix[size_t(l * H)]);
    }
  }
  HeadScores out;
  for (int g = 0; g < L * H; ++g) {
    out.previous_token.push_back(previous[size_t(g)].mean());
    out.prefix_matching.push_back(prefix[size_t(g)].mean());
  }
  for (int l = 0; l + 1 < L; ++l)
    for (int h1 = 0; h1 < H; ++h1) {
      const Mat ov = ov_circuit(model_.layers[size_t(l)], h1);
      for (int h2 = 0; h2 < H; ++h2)
        out.composition.push_back(k_composition(qk_circuit(model_.layers[size_t(l + 1)], h2), ov));
    }
  out.composition_baseline = L > 1 ? composition_baseline(D, D / H)
                                   : std::numeric_limits<float>::quiet_NaN();
  return out;
}

float Trainer::composition_baseline(int D, int Dh) {
  // It depends on the shapes alone, so it is drawn once per (D, Dh) in the process: the page
  // builds a new Trainer on every configure and reset, and 200 draws take ~150 ms in wasm.
  static std::mutex mutex;
  static std::map<std::pair<int, int>, float> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find({D, Dh});
  if (it == cache.end())
    it = cache.emplace(std::make_pair(D, Dh), k_composition_baseline(D, Dh, kBaselineSamples, 0x5EED)).first;
  return it->second;
}

int64_t Trainer::phase_change_step() {
  return phase_.update(history_.data(), history_.size(), history_stride_);
}

}  // namespace attn
