#include "attn/interp/inspect.h"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/data/tasks.h"
#include "attn/interp/circuits.h"
#include "attn/kernels/ops.h"
#include "attn/nn/loss.h"

namespace attn {

namespace {

constexpr float kFloatNaN = std::numeric_limits<float>::quiet_NaN();

void check_length(const TinyAttentionLM& model, int T, const char* what) {
  const int C = model.config.max_context_length;
  require(T >= 1 && T <= C, "the ", what, " has ", T, " tokens, but the model reads 1 to ", C);
}

void check_tokens(const TinyAttentionLM& model, const int32_t* ids, int T, const char* what) {
  check_length(model, T, what);
  const int V = model.config.vocab_size;
  for (int t = 0; t < T; ++t)
    require(ids[t] >= 0 && ids[t] < V, "token ", ids[t], " at position ", t, " of the ", what,
            " is outside the vocabulary [0, ", V, ")");
}

// answers may be nullptr; each entry a token or kIgnoreIndex.
void check_answers(const TinyAttentionLM& model, const int32_t* answers, int T) {
  if (!answers) return;
  const int V = model.config.vocab_size;
  for (int t = 0; t < T; ++t)
    require(answers[t] == kIgnoreIndex || (answers[t] >= 0 && answers[t] < V), "answer ",
            answers[t], " at position ", t, " is outside the vocabulary [0, ", V, ") and is not ",
            kIgnoreIndex, " (no answer)");
}

bool has_answer(const int32_t* answers, int t) {
  return answers && answers[t] != kIgnoreIndex;
}

int argmax(const Mat& m, Eigen::Index row) {
  Eigen::Index j = 0;
  m.row(row).maxCoeff(&j);
  return int(j);
}

// Records the clean run: the stream entering each layer and after the last (L+1 of (T,D)),
// and each FFN's output (L, models with an FFN).
struct Recorder : ForwardHooks {
  std::vector<Mat> streams, ffn_out;
  explicit Recorder(int L) : streams(size_t(L) + 1), ffn_out(size_t(L)) {}
  void stream(int l, Mat& a) override { streams[size_t(l)] = a; }
  void ffn(int l, MatRef y) override { ffn_out[size_t(l)] = y; }
};

// Eval-mode forward of one sequence; hooks may be nullptr.
void run(TinyAttentionLM& model, const int32_t* ids, int B, int T, TinyAttentionLM::State& s,
         ForwardHooks* hooks) {
  model.forward(ids, B, T, s, hooks);
}

// The patched runs' sites, one per sequence of a batch.
struct Site {
  enum Kind { Stream, Head, HeadAll } kind;
  int layer, head, pos;  // pos unused for HeadAll
};

// Copies each sequence's site from the clean run into the batch as it flows.
struct Patcher : ForwardHooks {
  TinyAttentionLM& model;
  const std::vector<Mat>& streams;  // clean, L+1 of (T,D)
  const std::vector<Mat>& merged;   // clean, L of (T,D)
  const Site* sites;
  int B, T;
  Patcher(TinyAttentionLM& m, const std::vector<Mat>& s, const std::vector<Mat>& mg,
          const Site* st, int b, int t)
      : model(m), streams(s), merged(mg), sites(st), B(b), T(t) {}
  void stream(int l, Mat& a) override {
    for (int b = 0; b < B; ++b) {
      const Site& s = sites[b];
      if (s.kind == Site::Stream && s.layer == l)
        a.row(Eigen::Index(b) * T + s.pos) = streams[size_t(l)].row(s.pos);
    }
  }
  void attention(int l, MultiHeadSelfAttention::State& st, MatRef y) override {
    const int Dh = model.layers[size_t(l)].d_head;
    bool changed = false;
    for (int b = 0; b < B; ++b) {
      const Site& s = sites[b];
      if (s.kind == Site::Stream || s.layer != l) continue;
      const Eigen::Index col = Eigen::Index(s.head) * Dh, r0 = Eigen::Index(b) * T;
      if (s.kind == Site::Head)
        st.merged.block(r0 + s.pos, col, 1, Dh) = merged[size_t(l)].block(s.pos, col, 1, Dh);
      else
        st.merged.block(r0, col, T, Dh) = merged[size_t(l)].middleCols(col, Dh);
      changed = true;
    }
    if (changed) model.layers[size_t(l)].out_proj.forward(st.merged, y);
  }
};

// Sequences per patched forward: about 4M floats of activations at a time.
int sequences_per_batch(const ModelConfig& c, int T) {
  const int64_t per_seq = TinyAttentionLM::report(c, 1, T).activations;
  return int(std::clamp<int64_t>((int64_t(4) << 20) / std::max<int64_t>(per_seq, 1), 1, 256));
}

}  // namespace

LogitLens logit_lens(TinyAttentionLM& model, const int32_t* ids, int T, const int32_t* answers) {
  check_tokens(model, ids, T, "input");
  check_answers(model, answers, T);
  LogitLens lens;
  if (!model.config.residual) {
    lens.reason = "The logit lens needs the residual stream (residual true): without it each "
                  "layer's output replaces its input, so lm_head only ever reads the last one.";
    return lens;
  }
  const int L = model.config.n_layers, V = model.config.vocab_size;
  Recorder rec(L);
  TinyAttentionLM::State s;
  run(model, ids, 1, T, s, &rec);
  lens.applies = true;
  lens.top_token.resize(L + 1, T);
  lens.top_prob.resize(L + 1, T);
  lens.answer_prob.resize(L + 1, T);
  Norm::State ns;
  Mat z, logits(T, V), probs(T, V);
  for (int l = 0; l <= L; ++l) {
    z = rec.streams[size_t(l)];
    if (model.final_norm) model.final_norm->forward(z, ns, z);
    model.head_forward(z, logits);
    softmax_rows(logits, probs);
    for (int t = 0; t < T; ++t) {
      const int top = argmax(probs, t);
      lens.top_token(l, t) = top;
      lens.top_prob(l, t) = probs(t, top);
      lens.answer_prob(l, t) = has_answer(answers, t) ? probs(t, answers[t]) : kFloatNaN;
    }
  }
  return lens;
}

Attribution direct_attribution(TinyAttentionLM& model, const int32_t* ids, int T,
                               const int32_t* answers) {
  check_tokens(model, ids, T, "input");
  check_answers(model, answers, T);
  const ModelConfig& c = model.config;
  Attribution at;
  if (!c.residual) {
    at.reason = "Direct logit attribution needs the residual stream (residual true): without it "
                "the last layer's output is no sum of the heads' outputs.";
    return at;
  }
  if (c.norm != NormKind::None && c.norm_position == NormPosition::Post) {
    at.reason = "Direct logit attribution needs the norms before each sublayer (norm_position "
                "pre): with post-norm every layer renormalises the sum, so the last stream is no "
                "sum of the heads' outputs.";
    return at;
  }
  const int L = c.n_layers, H = c.n_heads;
  const bool ffn = c.ffn != FfnKind::None;
  Recorder rec(L);
  TinyAttentionLM::State s;
  run(model, ids, 1, T, s, &rec);
  at.applies = true;
  at.heads.setConstant(L * H, T, kFloatNaN);
  at.embed.setConstant(T, kFloatNaN);
  at.ffn.setConstant(ffn ? L : 0, T, kFloatNaN);
  at.bias.setConstant(T, kFloatNaN);
  at.total.setConstant(T, kFloatNaN);

  using VecD = Eigen::RowVectorXd;
  const Eigen::MatrixXd W = model.head_weight().cast<double>();  // (V,D)
  const VecD mean_w = W.colwise().mean();
  const VecD lm_b = model.lm_head.has_bias() ? VecD(model.lm_head.bias.cast<double>())
                                             : VecD::Zero(W.rows());
  const Norm* norm = model.final_norm ? &*model.final_norm : nullptr;
  const bool center = norm && norm->kind == NormKind::LayerNorm;
  for (int t = 0; t < T; ++t) {
    if (!has_answer(answers, t)) continue;
    const int a = answers[t];
    // A part z's share: g(z) . u with g the frozen norm and u = W[a] - mean_v W[v]; as
    // z . v - mean(z) sum(v) with v = rstd w * u (the mean term for LayerNorm only).
    const VecD u = W.row(a) - mean_w;
    VecD v = u;
    if (norm) v = u.cwiseProduct(norm->weight.cast<double>()) * double(s.final_norm.rstd[t]);
    const double vsum = v.sum();
    const auto share = [&](const VecD& z) { return z.dot(v) - (center ? z.mean() * vsum : 0.0); };
    const double embed = share(rec.streams[0].row(t).cast<double>());
    double bias = 0.0;
    for (int l = 0; l < L; ++l) {
      const MultiHeadSelfAttention& m = model.layers[size_t(l)];
      const int Dh = m.d_head;
      const Mat& merged = s.layers[size_t(l)].merged;
      for (int h = 0; h < H; ++h) {
        // head h's output through its columns of out_proj: merged_h Wo[:, h Dh : (h+1) Dh]^T
        const VecD out = merged.block(t, h * Dh, 1, Dh).cast<double>() *
                         m.out_proj.weight.middleCols(h * Dh, Dh).transpose().cast<double>();
        const double x = share(out);
        at.heads(l * H + h, t) = float(x);
      }
      if (m.out_proj.has_bias()) bias += share(m.out_proj.bias.cast<double>());
      if (ffn) {
        const double x = share(rec.ffn_out[size_t(l)].row(t).cast<double>());
        at.ffn(l, t) = float(x);
      }
    }
    if (center) bias += norm->bias.cast<double>().dot(u);
    bias += lm_b[a] - lm_b.mean();
    at.embed[t] = float(embed);
    at.bias[t] = float(bias);
    const RowVec logits = s.logits.row(t);
    at.total[t] = float(double(logits[a]) - logits.cast<double>().mean());
  }
  return at;
}

Patching activation_patching(TinyAttentionLM& model, const int32_t* clean,
                             const int32_t* corrupted, int T, const int32_t* answers,
                             const PatchingOptions& o) {
  check_tokens(model, clean, T, "clean input");
  check_tokens(model, corrupted, T, "corrupted input");
  check_answers(model, answers, T);
  const ModelConfig& c = model.config;
  const int L = c.n_layers, H = c.n_heads, V = c.vocab_size;
  Patching p;
  if (o.position != -1) {
    require(o.position >= 0 && o.position < T, "the answer position (", o.position,
            ") must be in [0, ", T - 1, "]");
    p.position = o.position;
  } else {
    p.position = T - 1;
    for (int t = T - 1; t >= 0; --t)
      if (has_answer(answers, t)) {
        p.position = t;
        break;
      }
  }
  const int pos = p.position;
  for (const int a : {o.answer_clean, o.answer_corrupt})
    require(a == -1 || (a >= 0 && a < V), "the answer token (", a,
            ") is outside the vocabulary [0, ", V, ")");

  // The clean run: its streams and every layer's head outputs.
  Recorder rec(L);
  TinyAttentionLM::State s;
  run(model, clean, 1, T, s, &rec);
  std::vector<Mat> merged(static_cast<size_t>(L));
  for (int l = 0; l < L; ++l) merged[size_t(l)] = s.layers[size_t(l)].merged;
  const Mat clean_logits = s.logits;
  run(model, corrupted, 1, T, s, nullptr);
  const Mat corrupt_logits = s.logits;

  p.answer_clean = o.answer_clean >= 0       ? o.answer_clean
                   : has_answer(answers, pos) ? answers[pos]
                                              : argmax(clean_logits, pos);
  p.answer_corrupt = o.answer_corrupt >= 0 ? o.answer_corrupt : argmax(corrupt_logits, pos);
  p.logit_diff = p.answer_clean != p.answer_corrupt;
  const auto metric = [&](const Mat& logits, Eigen::Index row) {
    const double other = p.logit_diff ? double(logits(row, p.answer_corrupt))
                                      : logits.row(row).cast<double>().mean();
    return double(logits(row, p.answer_clean)) - other;
  };
  const double m_clean = metric(clean_logits, pos), m_corrupt = metric(corrupt_logits, pos);
  p.metric_clean = float(m_clean);
  p.metric_corrupt = float(m_corrupt);
  const double span = m_clean - m_corrupt;

  std::vector<Site> sites;
  for (int l = 0; l <= L; ++l)
    for (int t = 0; t < T; ++t) sites.push_back({Site::Stream, l, 0, t});
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t) sites.push_back({Site::Head, l, h, t});
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) sites.push_back({Site::HeadAll, l, h, 0});
  std::vector<float> result(sites.size());
  const int per_batch = sequences_per_batch(c, T);
  std::vector<int32_t> ids;
  for (size_t first = 0; first < sites.size(); first += size_t(per_batch)) {
    const int B = int(std::min(sites.size() - first, size_t(per_batch)));
    ids.resize(size_t(B) * T);
    for (int b = 0; b < B; ++b) std::copy(corrupted, corrupted + T, ids.begin() + ptrdiff_t(b) * T);
    Patcher patcher(model, rec.streams, merged, sites.data() + first, B, T);
    run(model, ids.data(), B, T, s, &patcher);
    for (int b = 0; b < B; ++b) {
      const double m = metric(s.logits, Eigen::Index(b) * T + pos);
      result[first + size_t(b)] = span != 0.0 ? float((m - m_corrupt) / span) : kFloatNaN;
    }
  }
  p.resid.resize(L + 1, T);
  p.heads.resize(L * H, T);
  p.heads_all.resize(L * H);
  size_t k = 0;
  for (int l = 0; l <= L; ++l)
    for (int t = 0; t < T; ++t) p.resid(l, t) = result[k++];
  for (int g = 0; g < L * H; ++g)
    for (int t = 0; t < T; ++t) p.heads(g, t) = result[k++];
  for (int g = 0; g < L * H; ++g) p.heads_all[g] = result[k++];
  return p;
}

Corruption induction_corruption(const int32_t* ids, int T, int vocab_size) {
  require(vocab_size >= 2, "an induction corruption needs a vocabulary of at least 2 tokens, not ",
          vocab_size);
  for (int t = 0; t < T; ++t)
    require(ids[t] >= 0 && ids[t] < vocab_size, "token ", ids[t], " at position ", t,
            " is outside the vocabulary [0, ", vocab_size, ")");
  const Repeat r = find_repeat(ids, T);
  require(r.found(), "the sequence holds no repeated segment, so there is no first occurrence to "
          "corrupt; give a corrupted input of the same length instead");
  Corruption c;
  c.ids.assign(ids, ids + T);
  c.changed = r.first + r.length - 1;
  c.position = r.second + r.length - 2;
  c.answer_clean = ids[c.changed];
  std::vector<uint8_t> used(size_t(vocab_size), 0);
  for (int t = 0; t < T; ++t) used[size_t(ids[t])] = 1;
  const auto unused = std::find(used.begin(), used.end(), uint8_t(0));
  c.answer_corrupt = unused != used.end() ? int(unused - used.begin())
                                          : (c.answer_clean + 1) % vocab_size;
  c.ids[size_t(c.changed)] = c.answer_corrupt;
  return c;
}

float copying_score(ConstMatRef m) {
  require(m.rows() == m.cols() && m.rows() >= 1, "copying_score needs a square matrix, got (",
          m.rows(), ",", m.cols(), ")");
  const Eigen::MatrixXd md = m.cast<double>();
  const Eigen::EigenSolver<Eigen::MatrixXd> solver(md, /*computeEigenvectors=*/false);
  require(solver.info() == Eigen::Success, "copying_score: the eigenvalues did not converge");
  double positive = 0.0, total = 0.0;
  for (const std::complex<double>& lambda : solver.eigenvalues()) {
    positive += std::max(lambda.real(), 0.0);
    total += std::abs(lambda);
  }
  return total > 0.0 ? float(positive / total) : 0.0f;
}

HeadCircuit head_circuit(const TinyAttentionLM& model, int layer, int head) {
  const int L = model.config.n_layers, H = model.config.n_heads;
  require(layer >= 0 && layer < L, "layer (", layer, ") must be in [0, ", L - 1, "]");
  require(head >= 0 && head < H, "head (", head, ") must be in [0, ", H - 1, "]");
  const MultiHeadSelfAttention& m = model.layers[size_t(layer)];
  const Mat& E = model.token_emb.weight;  // (V,D)
  Mat U = model.head_weight().transpose();  // (D,V)
  if (model.final_norm) U = model.final_norm->weight.transpose().asDiagonal() * U;
  HeadCircuit hc;
  hc.qk = E * qk_circuit(m, head) * E.transpose();
  hc.ov = E * ov_circuit(m, head) * U;
  hc.copying = copying_score(hc.ov);
  return hc;
}

Inspection inspect(TinyAttentionLM& model, const InspectRequest& r) {
  const int T = int(r.ids.size());
  check_tokens(model, r.ids.data(), T, "input");
  require(r.answers.empty() || r.answers.size() == r.ids.size(), "the answers have ",
          r.answers.size(), " tokens but the input has ", T, "; give one per position");
  require(r.corrupted.empty() || r.corrupted.size() == r.ids.size(), "the corrupted input has ",
          r.corrupted.size(), " tokens but the clean input has ", T, "; they must be as long");
  Inspection out;
  out.answers = r.answers;
  if (out.answers.empty()) {
    TinyAttentionLM::State s;
    run(model, r.ids.data(), 1, T, s, nullptr);
    out.answers.resize(size_t(T));
    for (int t = 0; t < T; ++t) out.answers[size_t(t)] = argmax(s.logits, t);
  }
  const int32_t* answers = out.answers.data();
  out.lens = logit_lens(model, r.ids.data(), T, answers);
  out.attribution = direct_attribution(model, r.ids.data(), T, answers);
  if (!r.corrupted.empty()) {
    out.patching = activation_patching(model, r.ids.data(), r.corrupted.data(), T, answers,
                                       r.patching);
    out.patched = true;
  }
  for (int l = 0; l < model.config.n_layers; ++l)
    for (int h = 0; h < model.config.n_heads; ++h) out.circuits.push_back(head_circuit(model, l, h));
  return out;
}

}  // namespace attn
