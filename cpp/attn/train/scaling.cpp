#include "attn/train/scaling.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "attn/base/tensor.h"
#include "attn/interp/readouts.h"
#include "attn/model/family.h"
#include "attn/train/trainer.h"

namespace attn {

double chinchilla_loss(double N, double D, const ChinchillaConstants& k) {
  require(N > 0 && D > 0 && std::isfinite(N) && std::isfinite(D),
          "chinchilla_loss needs N > 0 and D > 0, got N = ", N, ", D = ", D);
  return k.A / std::pow(N, k.alpha) + k.B / std::pow(D, k.beta) + k.E;
}

namespace {

void check_budget(double C) {
  require(std::isfinite(C) && C > 0, "the compute budget C (", C, " FLOPs) must be finite and > 0");
}

}  // namespace

ComputeSplit compute_optimal(double C, int n_grid, const ChinchillaConstants& k) {
  check_budget(C);
  require(n_grid >= 2, "compute_optimal needs a grid of at least 2 points, got ", n_grid);
  const double lo = 5, hi = 13;  // log10 N
  ComputeSplit best;
  best.L = std::numeric_limits<double>::infinity();
  for (int i = 0; i < n_grid; ++i) {
    const double N = std::pow(10.0, lo + (hi - lo) * i / (n_grid - 1));
    const double D = C / (6 * N);
    if (D < 1e6) continue;
    const double L = chinchilla_loss(N, D, k);
    if (L < best.L) best = {N, D, L};
  }
  require(best.N > 0, "a compute budget of ", C,
          " FLOPs leaves fewer than 1e6 tokens for every N in [1e5, 1e13]; it must be >= 6e11");
  return best;
}

ComputeSplit compute_optimal_closed_form(double C, const ChinchillaConstants& k) {
  check_budget(C);
  const double s = k.alpha + k.beta;
  const double G = std::pow(k.alpha * k.A / (k.beta * k.B), 1 / s);
  const double N = G * std::pow(C / 6, k.beta / s);
  const double D = C / (6 * N);
  return {N, D, chinchilla_loss(N, D, k)};
}

double PowerLawFit::at(double N) const { return A * std::pow(N, -alpha) + E; }

namespace {

// The best A >= 0 and E for one alpha, and the sum of squared residuals.
PowerLawFit fit_at(const std::vector<double>& N, const std::vector<double>& L, double alpha,
                   double* sse) {
  const double n = double(N.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < N.size(); ++i) {
    const double x = std::pow(N[i], -alpha);
    sx += x, sy += L[i], sxx += x * x, sxy += x * L[i];
  }
  PowerLawFit f;
  f.alpha = alpha;
  const double var = sxx - sx * sx / n;  // > 0: at least two distinct N
  f.A = var > 0 ? (sxy - sx * sy / n) / var : 0;
  if (!(f.A > 0)) f.A = 0;  // a loss that does not fall with N: the best flat line
  f.E = (sy - f.A * sx) / n;
  double s = 0;
  for (size_t i = 0; i < N.size(); ++i) {
    const double r = L[i] - f.at(N[i]);
    s += r * r;
  }
  *sse = s;
  f.residual = std::sqrt(s / n);
  return f;
}

}  // namespace

PowerLawFit fit_power_law(const std::vector<double>& N, const std::vector<double>& L,
                          double alpha_lo, double alpha_hi) {
  require(N.size() == L.size(), "fit_power_law needs as many losses (", L.size(), ") as sizes (",
          N.size(), ")");
  require(N.size() >= 3, "fitting A, alpha and E needs at least 3 points, got ", N.size());
  bool distinct = false;
  for (size_t i = 0; i < N.size(); ++i) {
    require(N[i] > 0 && std::isfinite(N[i]), "size ", i, " (", N[i], ") must be finite and > 0");
    require(std::isfinite(L[i]), "loss ", i, " (", L[i], ") must be finite");
    distinct = distinct || N[i] != N[0];
  }
  require(distinct, "fitting L(N) needs at least 2 distinct sizes, all are ", N[0]);
  require(alpha_lo > 0 && alpha_hi > alpha_lo, "the range of alpha [", alpha_lo, ", ", alpha_hi,
          "] must be positive and not empty");
  constexpr int kGrid = 400;
  const double log_lo = std::log(alpha_lo), log_hi = std::log(alpha_hi);
  const auto grid_alpha = [&](int i) { return std::exp(log_lo + (log_hi - log_lo) * i / (kGrid - 1)); };
  int best_i = 0;
  double best_sse = std::numeric_limits<double>::infinity(), sse = 0;
  for (int i = 0; i < kGrid; ++i) {
    fit_at(N, L, grid_alpha(i), &sse);
    if (sse < best_sse) best_sse = sse, best_i = i;
  }
  // Golden-section search over log alpha between the grid's neighbours of its best.
  double a = std::log(grid_alpha(std::max(0, best_i - 1)));
  double b = std::log(grid_alpha(std::min(kGrid - 1, best_i + 1)));
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a), fc = 0, fd = 0;
  fit_at(N, L, std::exp(c), &fc);
  fit_at(N, L, std::exp(d), &fd);
  for (int it = 0; it < 100 && b - a > 1e-12; ++it) {
    if (fc < fd) {
      b = d, d = c, fd = fc, c = b - g * (b - a);
      fit_at(N, L, std::exp(c), &fc);
    } else {
      a = c, c = d, fc = fd, d = a + g * (b - a);
      fit_at(N, L, std::exp(d), &fd);
    }
  }
  const PowerLawFit refined = fit_at(N, L, std::exp((a + b) / 2), &sse);
  if (sse <= best_sse) return refined;
  return fit_at(N, L, grid_alpha(best_i), &sse);
}

int64_t non_embedding_param_count(const ModelConfig& m) {
  const ModuleReport r = model_report(m, 1, 1);
  int64_t n = 0;
  for (const TensorSpec& t : r.tensors) {
    const std::string& name = t.name;
    const bool embedding = name.rfind("token_emb.", 0) == 0 || name.rfind("pos_emb.", 0) == 0 ||
                           name.rfind("lm_head.", 0) == 0;
    if (!embedding) n += t.numel();
  }
  return n;
}

int scaling_heads(int d_model) {
  int h = std::max(1, d_model / 8);
  while (d_model % h != 0) --h;
  return h;
}

TrainerConfig ScalingSweepConfig::scaling_base_config() {
  // V 8 (the chain's symbols), D and H set per size; markov's order 2, 8 symbols and the seed 42
  // are the keys' defaults.
  TrainerConfig c = sized_config(8, 8, 1, 32, 16);
  c.task.name = "markov";
  c.training.lr = 3e-3f;
  c.model.n_layers = 2;
  c.model.residual = true;
  c.model.norm = NormKind::LayerNorm, c.model.ffn = FfnKind::GELU;
  c.model.positions = PositionKind::Learned;
  return c;
}

void check_scaling_sweep(const ScalingSweepConfig& c) {
  std::string list;
  for (int d : c.sizes) list += str_cat(list.empty() ? "" : ",", d);
  require_config(c.sizes.size() >= 3 && c.sizes.size() <= 16, "d_model",
                 "the sweep needs 3 to 16 sizes to fit A, alpha and E, got ", c.sizes.size(), " (",
                 list, ")");
  for (size_t i = 0; i < c.sizes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      require_config(c.sizes[i] != c.sizes[j], "d_model", "the sizes (", list, ") repeat ",
                     c.sizes[i]);
  require(c.steps >= 1 && c.steps <= 1000000, "steps (", c.steps, ") must be in [1, 1000000]");
  require(c.eval_batches >= 1 && c.eval_batches <= 1000, "eval_batches (", c.eval_batches,
          ") must be in [1, 1000]");
  for (int d : c.sizes) {
    TrainerConfig m = c.base;
    m.model.d_model = d;
    m.model.n_heads = scaling_heads(std::max(d, 1));
    try {
      m.validate();
    } catch (const Error& e) {
      throw Error(e.kind(), e.key(), str_cat("size ", d, ": ", e.what()));
    }
  }
}

ScalingRun scaling_run(const TrainerConfig& base, int d_model, int steps, int eval_batches,
                       std::shared_ptr<const TextCorpus> corpus) {
  TrainerConfig c = base;
  c.model.d_model = d_model;
  c.model.n_heads = scaling_heads(std::max(d_model, 1));
  const auto t0 = std::chrono::steady_clock::now();
  Trainer t(c, std::move(corpus));
  t.step(steps);
  ScalingRun r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.d_model = d_model;
  r.n_heads = c.model.n_heads;
  r.params = t.family_model().param_count();
  r.non_embedding_params = non_embedding_param_count(t.config().model_config());
  const double nats = t.corpus() ? evaluate_text(t.family_model(), t.data(), eval_batches).val_loss
                                 : double(evaluate(t.family_model(), t.data(), eval_batches).loss);
  r.val_bits = nats / std::log(2.0);
  return r;
}

ScalingSweep scaling_sweep(const ScalingSweepConfig& c, std::shared_ptr<const TextCorpus> corpus,
                           void (*on_run)(const ScalingRun&, void*), void* on_run_data) {
  check_scaling_sweep(c);
  ScalingSweep s;
  std::vector<double> N, L;
  for (int d : c.sizes) {
    s.runs.push_back(scaling_run(c.base, d, c.steps, c.eval_batches, corpus));
    if (on_run) on_run(s.runs.back(), on_run_data);
    N.push_back(double(s.runs.back().non_embedding_params));
    L.push_back(s.runs.back().val_bits);
  }
  s.fit = fit_power_law(N, L);
  s.entropy_rate_bits = parse_task(c.base.task.name) == Task::Markov
                            ? markov_chain_for(c.base.task.params(), c.base.training.seed)
                                  ->entropy_rate_bits()
                            : std::nan("");
  return s;
}

}  // namespace attn
