// attn demo: the PyTorch lesson's main() on the DemoConfig (or the flags): the shape contract with
// the config's shapes, every head's attention rows summing to 1, the causal mask, training with
// epoch means, a per-head heatmap, and a verdict. A failed check prints one line on stderr and
// exits 1; "Demo OK." ends a run whose checks all passed.
// `attn demo self-attention` is the NumPy lesson's walkthrough (cmd_demo_self_attention.cpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "attn/interp/readouts.h"
#include "attn/nn/multihead.h"
#include "attn/train/trainer.h"
#include "cli/commands.h"
#include "cli/config_flags.h"

namespace attn::cli {

namespace {

constexpr double kRowSumTol = 1e-5;  // max |row sum - 1| (attn/selftest.h's rows_and_mask)
constexpr double kFutureTol = 1e-6;  // earlier outputs after a later token changed (expected 0)
constexpr uint64_t kProbeSeed = 0xDE30C0DEULL;  // the check batch's ids; not a training stream

// What a failed check says: one line, "" when the check passed.
using Verdict = std::string;

std::string dims(const std::vector<Eigen::Index>& d) {
  std::string s = "(";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + ")";
}

// One line of the contract: m must be stored as (product of all but the last dim, last dim).
Verdict contract_line(const char* what, const char* legend, const std::vector<Eigen::Index>& want,
                      Eigen::Index rows, Eigen::Index cols) {
  Eigen::Index lead = 1;
  for (size_t i = 0; i + 1 < want.size(); ++i) lead *= want[i];
  const bool ok = rows == lead && cols == want.back();
  std::printf("   %-34s %-10s = %s%s\n", what, legend, dims(want).c_str(),
              ok ? "" : str_cat("  MISMATCH: stored as (", rows, ", ", cols, ")").c_str());
  return ok ? "" : str_cat("shape contract: ", what, " is stored as (", rows, ", ", cols,
                           "), not as ", legend, " = ", dims(want));
}

// Part 1: one eval forward of the check batch, every tensor's shape against the contract.
Verdict shape_contract(TinyAttentionLM& model, const std::vector<int32_t>& ids, int B, int T,
                       TinyAttentionLM::State& s) {
  const ModelConfig& c = model.config;
  const Eigen::Index D = c.d_model, H = c.n_heads, Dh = D / H, V = c.real_vocab_size();
  const Eigen::Index KV = c.kv_heads_resolved(), M = c.differential ? 2 : 1;  // q/k maps
  model.forward(ids.data(), B, T, s);
  std::printf("1. Shape contract: B=%d T=%d D=%lld H=%lld Dh=%lld V=%lld, one eval forward of a "
              "batch of random ids\n",
              B, T, (long long)D, (long long)H, (long long)Dh, (long long)V);
  const Mat q_heads = split_heads(s.attn.qkv.leftCols(D), B, T, int(H));
  const ConstMatMap pe = model.pos_emb.forward(T);
  struct Line {
    const char* what;
    const char* legend;
    std::vector<Eigen::Index> want;
    Eigen::Index rows, cols;
  };
  const Line lines[] = {
      {"ids", "(B,T)", {B, T}, B, T},
      {"pos_emb[:T]", "(T,D)", {T, D}, pe.rows(), pe.cols()},
      {"x = token_emb(ids) + pos_emb[:T]", "(B,T,D)", {B, T, D}, s.x.rows(), s.x.cols()},
      {"qkv = qkv_proj(x)",
       c.differential ? (KV == H ? "(B,T,5D)" : "(B,T,(2H+3KV)Dh)")
                      : (KV == H ? "(B,T,3D)" : "(B,T,(H+2KV)Dh)"),
       {B, T, (M * (H + KV) + KV) * Dh}, s.attn.qkv.rows(), s.attn.qkv.cols()},
      {"q, k, v split into heads", "(B,H,T,Dh)", {B, H, T, Dh}, q_heads.rows(), q_heads.cols()},
      {c.differential ? "weights = softmax(s1) - lambda softmax(s2)"
                      : "weights = softmax(q k^T/sqrt(Dh))",
       "(B,H,T,T)", {B, H, T, T}, s.attn.weights().rows(), s.attn.weights().cols()},
      {"weights v, heads merged", "(B,T,D)", {B, T, D}, s.attn.merged.rows(),
       s.attn.merged.cols()},
      {"out_proj", "(B,T,D)", {B, T, D}, s.a.rows(), s.a.cols()},
      {"logits = lm_head", c.objective == Objective::Mlm ? "(B,T,V+1)" : "(B,T,V)",
       {B, T, c.vocab_size}, s.logits.rows(), s.logits.cols()},
  };
  Verdict first;
  for (const Line& l : lines) {
    const Verdict v = contract_line(l.what, l.legend, l.want, l.rows, l.cols);
    if (first.empty()) first = v;
  }
  if (first.empty()) std::printf("   ok: every tensor has the contract's shape\n");
  return first;
}

// "head 3", or with more than one layer "head 7 (layer 2, head 3)": g = l*H + h, 1-based.
std::string head_name(int g, int H, int L) {
  if (L == 1) return str_cat("head ", g + 1);
  return str_cat("head ", g + 1, " (layer ", g / H + 1, ", head ", g % H + 1, ")");
}

// Part 2: per head of every layer, the largest |row sum - 1| over the B*T rows of that head (a
// differential head's rows sum to 1 - its lambda). w: every layer's weights, (L,B,H,T,T).
Verdict rows_sum_to_one(const TinyAttentionLM& model, const Mat& w, int B, int T) {
  const int H = model.config.n_heads, L = model.config.n_layers;
  std::printf("\n2. Every head's attention rows sum to 1%s (%d rows per head)\n",
              model.config.differential ? " - lambda" : "", B * T);
  Verdict v;
  for (int g = 0; g < L * H; ++g) {
    const int l = g / H, h = g % H;
    const RowVec& lambda = model.layers[size_t(l)].lambda;
    const double want = lambda.size() ? 1.0 - double(lambda[h]) : 1.0;
    double worst = 0.0;
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < T; ++i) {
        const Eigen::Index r = ((Eigen::Index(l) * B + b) * H + h) * T + i;
        const double err = std::fabs(w.row(r).cast<double>().sum() - want);
        worst = std::isnan(err) || std::isnan(worst) ? NAN : std::max(worst, err);
      }
    std::printf("   %s: max |row sum - %s| = %.3g\n", head_name(g, H, L).c_str(),
                lambda.size() ? "(1 - lambda)" : "1", worst);
    if (v.empty() && !(worst <= kRowSumTol))
      v = str_cat("row sums: ", head_name(g, H, L),
                  "'s attention rows do not sum to 1 (max |row sum - 1| = ", worst,
                  ", tolerance ", kRowSumTol, ")");
  }
  if (v.empty()) std::printf("   ok (tolerance %g)\n", kRowSumTol);
  return v;
}

// Part 3: nothing above the diagonal, and a change to later tokens leaves earlier outputs alone.
Verdict causal_check(TinyAttentionLM& model, const std::vector<int32_t>& ids, int B, int T,
                     const TinyAttentionLM::State& s) {
  const int H = model.config.n_heads, V = model.config.vocab_size, L = model.config.n_layers;
  Mat w, w2;  // every layer's weights, (L,B,H,T,T)
  s.stacked_weights(w);
  std::printf("\n3. Causal mask\n");
  if (model.config.objective == Objective::Mlm) {
    std::printf("   objective mlm: the attention sees both sides by design, nothing to check\n");
    return "";
  }
  int64_t above = 0, nonzero = 0;
  double largest = 0.0;
  for (Eigen::Index r = 0; r < w.rows(); ++r)
    for (Eigen::Index j = r % T + 1; j < T; ++j) {
      ++above;
      if (w(r, j) != 0.0f) ++nonzero;  // a NaN counts too
      largest = std::max(largest, std::fabs(double(w(r, j))));
    }
  std::printf("   weights above the diagonal: %lld of %lld nonzero (largest %.3g)\n",
              (long long)nonzero, (long long)above, largest);
  if (nonzero)
    return str_cat("causal check: ", nonzero, " of ", above,
                   " attention weights above the diagonal are nonzero (largest ", largest,
                   "): positions see the future");
  if (T == 1 || V == 1) {
    std::printf("   %s: no later token to change\n", T == 1 ? "T = 1" : "V = 1");
    std::printf("   ok\n");
    return "";
  }
  const int t0 = (T - 1) / 2;  // rows <= t0 must not move
  std::vector<int32_t> changed = ids;
  for (int b = 0; b < B; ++b)
    for (int t = t0 + 1; t < T; ++t) {
      int32_t& id = changed[size_t(b) * T + t];
      id = (id + 1) % V;
    }
  TinyAttentionLM::State s2;
  model.forward(changed.data(), B, T, s2);
  s2.stacked_weights(w2);
  double past_logits = 0.0, past_w = 0.0, later_logits = 0.0;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const Eigen::Index r = Eigen::Index(b) * T + t;
      const double d = (s.logits.row(r) - s2.logits.row(r)).cwiseAbs().cast<double>().maxCoeff();
      if (t > t0) {
        later_logits = std::max(later_logits, d);
        continue;
      }
      past_logits = std::max(past_logits, d);
      for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
          const Eigen::Index p = ((Eigen::Index(l) * B + b) * H + h) * T + t;
          past_w = std::max(past_w, double((w.row(p) - w2.row(p)).cwiseAbs().maxCoeff()));
        }
    }
  std::printf("   every token after position %d changed: positions 0..%d moved by %.3g (logits) "
              "and %.3g (attention);\n   the later logits moved by up to %.3g\n",
              t0, t0, past_logits, past_w, later_logits);
  const double past = std::max(past_logits, past_w);
  if (!(past <= kFutureTol))
    return str_cat("causal check: changing the tokens after position ", t0,
                   " changed earlier outputs by up to ", past, " (tolerance ", kFutureTol, ")");
  std::printf("   ok\n");
  return "";
}

// Part 5: one heatmap per head of every layer, rows = queries, columns = keys, darker = more
// weight. weights (L*H*T,T): global head g = l*H + h; with L > 1 the heads are labelled l<l> h<h>.
void print_heatmaps(const Mat& weights, int H, int T, int L) {
  static const char kShades[] = " .:-=+*#%@";
  const int G = L * H;
  for (int h0 = 0; h0 < G; h0 += 2) {
    for (int h = h0; h < std::min(G, h0 + 2); ++h) {
      if (L == 1) std::printf("   head %-*d", T + 1, h + 1);
      else std::printf("   l%d h%-*d", h / H + 1, T + 2, h % H + 1);
    }
    std::printf("\n");
    for (int i = 0; i < T; ++i) {
      for (int h = h0; h < std::min(G, h0 + 2); ++h) {
        std::printf("   q%-2d |", i);
        for (int j = 0; j < T; ++j) {
          const float v = weights(h * T + i, j);
          const int k = std::min(9, static_cast<int>(v * 9.0f + 0.5f));
          std::printf("%c", j > i ? ' ' : kShades[k]);
        }
        std::printf("|");
      }
      std::printf("\n");
    }
    std::printf("\n");
  }
}

int failed(const Verdict& v) {
  std::fflush(stdout);
  std::fprintf(stderr, "attn demo: %s\n", v.c_str());
  return 1;
}

}  // namespace

int cmd_demo(const std::vector<std::string>& argv) {
  if (!argv.empty() && argv[0] == "self-attention")
    return cmd_demo_self_attention(std::vector<std::string>(argv.begin() + 1, argv.end()));
  std::vector<Flag> flags = trainer_flags();
  for (Flag& f : ablation_flags()) flags.push_back(f);
  flags.push_back({"epochs", "N", "3", "training epochs"});
  flags.push_back({"steps-per-epoch", "N", "120", "steps per epoch"});
  const Args args("demo",
                  "Runs the PyTorch lesson's main() on the config (DemoConfig by default): the shape "
                  "contract, every head's rows summing to 1, the causal mask, training with epoch "
                  "means, and a per-head heatmap. Exits 1 with a one-line reason if a check fails "
                  "(the ablation flags can make one fail) and prints \"Demo OK.\" otherwise.\n\n"
                  "attn demo self-attention [--help]: the NumPy single-head lesson, stage by stage.",
                  flags, argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  const TrainerConfig config = trainer_config_from(args);
  const Trainer::Ablation ablation = ablation_from(args, config);
  const int epochs = args.get_int("epochs", 1, 1000);
  const int per_epoch = args.get_int("steps-per-epoch", 1, 1000000);
  const int B = config.training.batch_size, T = config.task.seq_len, H = config.model.n_heads,
            V = config.model.vocab_size;

  Trainer trainer(config);
  trainer.set_ablation(ablation);
  const ModelConfig mc = config.model_config();
  std::printf(
      "# attn demo: V=%d D=%d H=%d T=%d B=%d lr=%g seed=%llu task=%s%s%s\n", V,
      config.model.d_model, H, T, B, config.training.lr,
      static_cast<unsigned long long>(config.training.seed), config.task.name.c_str(),
      config.model.n_layers == 1 && !config.model.residual
          ? ""
          : str_cat(" layers=", config.model.n_layers, config.model.residual ? " residual" : "")
                .c_str(),
      block_keys_text(mc).c_str());
  if (args.has("mask") || args.has("no-scale-scores") || args.has("heads-off") || args.has("heads-frozen"))
    std::printf("# ablation: mask %s, scaling %s, heads off [%s], frozen [%s]\n",
                mask_mode_name(ablation.mask), ablation.scale_scores ? "on" : "off",
                args.get("heads-off").c_str(), args.get("heads-frozen").c_str());
  std::printf("\n");

  // Parts 1-3 on the untrained model, with a batch of ids that no training stream draws.
  Rng probe(config.training.seed ^ kProbeSeed);
  std::vector<int32_t> ids(size_t(B) * T);
  for (int32_t& id : ids) id = static_cast<int32_t>(probe.below(uint32_t(V)));
  TinyAttentionLM::State s;
  Verdict v = shape_contract(trainer.model(), ids, B, T, s);
  if (!v.empty()) return failed(v);
  Mat all_weights;
  s.stacked_weights(all_weights);
  v = rows_sum_to_one(trainer.model(), all_weights, B, T);
  if (!v.empty()) return failed(v);
  v = causal_check(trainer.model(), ids, B, T, s);
  if (!v.empty()) return failed(v);

  // Part 4: epoch means over every step's loss, as each step reports it.
  std::printf("\n4. Training TinyAttentionLM on the '%s' task: %d epoch%s x %d steps\n",
              config.task.name.c_str(), epochs, epochs == 1 ? "" : "s", per_epoch);
  std::printf("   chance loss ln(V) = %.4f\n", std::log(double(V)));
  std::vector<double> means;
  for (int e = 0; e < epochs; ++e) {
    double sum = 0.0;
    for (int i = 0; i < per_epoch; ++i) sum += trainer.step(1);
    means.push_back(sum / per_epoch);
    std::printf("   epoch %d: mean loss %.4f\n", e + 1, means.back());
  }
  if (epochs >= 2) {
    // The lesson's last assertion. The future task is the exception: no causal model beats
    // chance on it, so its loss has nothing to fall to.
    const bool fell = means.back() < means.front();
    if (config.task.name == "future") {
      std::printf("   (the future task cannot be learned under a causal mask: the loss is not "
                  "required to fall)\n");
    } else if (!fell) {
      return failed(str_cat("training: the last epoch's mean loss (", means.back(),
                            ") is not below the first's (", means.front(), ")"));
    } else {
      std::printf("   ok: the loss fell from %.4f to %.4f\n", means.front(), means.back());
    }
  }

  std::vector<int32_t> sample(size_t(T), 7 % V);
  Mat weights, logits;
  sequence_attention(trainer.model(), sample.data(), T, weights, logits);
  Eigen::Index predicted;
  logits.row(T - 1).maxCoeff(&predicted);
  std::printf("\n5. Attention per head for the repeated sample [%d x %d]; next token predicted: "
              "%d\n   (rows = queries, columns = keys; ' ' ~ 0 or masked, '@' ~ 1)\n\n",
              sample[0], T, static_cast<int>(predicted));
  print_heatmaps(weights, H, T, config.model.n_layers);
  std::printf("Demo OK.\n");
  return 0;
}

}  // namespace attn::cli
