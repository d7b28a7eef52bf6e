#include "attn/teach/selftest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <utility>

#include "attn/base/rng.h"
#include "attn/io/safetensors.h"
#include "attn/io/weights.h"
#include "attn/nn/loss.h"
#include "attn/nn/multihead.h"
#include "attn/train/config.h"

namespace attn {

namespace {

// Fixed seeds: the same model always gets the same probes, natively and in the browser.
constexpr uint64_t kIdsSeed = 0x5E1F7E57ULL;
constexpr uint64_t kSplitSeed = 0x5E1F7E58ULL;
constexpr uint64_t kGradSeed = 0x5E1F7E59ULL;
constexpr int kProbeBatch = 2;  // B of the model-based probes; T is the model's C

constexpr double kRowSumTol = 1e-5;
constexpr double kFutureTol = 1e-6;
constexpr double kFusedTol = 1e-5;  // of max |fused - sep| / (1 + |sep|)
// Gradcheck: |a - n| <= abs + rel * m  <=>  |a - n| / (m + abs/rel) <= rel, which is rel times
// check_gradient's max_error.
constexpr Tolerance kGradTolerance{kGradcheckAbsTol, kGradcheckRelTol};
constexpr double kGradFloor = kGradcheckAbsTol / kGradcheckRelTol;  // 0.05
constexpr double kGradTol = kGradcheckRelTol;
constexpr double kGradSignal = 1e-4;  // a gradient that is ~0 everywhere proves nothing
// Reference: |d| <= abs + rel * |t| with abs == rel  <=>  |d| / (1 + |t|) <= rel, which is rel
// times compare_close's max_error.
static_assert(kReferenceOutAbs == kReferenceOutRel, "the reference metric assumes abs == rel");
constexpr Tolerance kReferenceTolerance{kReferenceOutAbs, kReferenceOutRel};
constexpr double kReferenceTol = kReferenceOutRel;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct CheckInfo {
  const char* id;
  const char* name;
  double tolerance;
};
const CheckInfo kRowsAndMask{"rows_and_mask",
                             "Rows sum to 1; masked keys (the upper triangle) are exactly 0",
                             kRowSumTol};
const CheckInfo kFutureInvariance{"future_invariance",
                                  "Changing later tokens leaves earlier positions unchanged",
                                  kFutureTol};
const CheckInfo kSplitMerge{"split_merge",
                            "merge_heads(split_heads(x)) == x; head h is columns [h*Dh, (h+1)*Dh)",
                            0.0};
const CheckInfo kFusedQkv{"fused_qkv",
                          "The fused QKV projection equals separate Q, K and V projections",
                          kFusedTol};
const CheckInfo kGradcheck{"gradcheck",
                           "Multi-head attention backward matches finite differences", kGradTol};
const CheckInfo kPytorchReference{"pytorch_reference",
                                  "Logits, attention and loss match PyTorch", kReferenceTol};

SelfTestResult make(const CheckInfo& info, double max_error, bool extra_ok, std::string detail) {
  // NaN never passes: !(NaN <= tol).
  const bool pass = extra_ok && max_error <= info.tolerance;
  return {info.id, info.name, max_error, info.tolerance, pass, std::move(detail)};
}

// Runs fn; an exception becomes a failing result carrying its message.
template <typename Fn>
SelfTestResult guarded(const CheckInfo& info, Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return make(info, kNaN, false, str_cat("error: ", e.what()));
  } catch (...) {
    return make(info, kNaN, false, "error: unknown exception");
  }
}

// A number for a detail sentence: "5.96e-08", "0", "0.0312".
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::vector<int32_t> random_ids(Rng& rng, size_t n, int V) {
  std::vector<int32_t> ids(n);
  for (int32_t& id : ids) id = static_cast<int32_t>(rng.below(static_cast<uint32_t>(V)));
  return ids;
}

Mat random_mat(Eigen::Index rows, Eigen::Index cols, Rng& rng) {
  Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = rng.normal();
  return m;
}

std::string shape2(Eigen::Index r, Eigen::Index c) { return str_cat("(", r, ",", c, ")"); }

void require_shape(const char* what, const Mat& m, Eigen::Index rows, Eigen::Index cols) {
  require(m.rows() == rows && m.cols() == cols, what, " has shape ", shape2(m.rows(), m.cols()),
          ", expected ", shape2(rows, cols));
}

std::string bts(int B, int T, int H) { return str_cat("B=", B, " T=", T, " H=", H); }

// How many layers a probe covered, for a detail sentence: "" for the curriculum's one layer.
std::string layers_of(int L) { return L == 1 ? "" : str_cat(", all ", L, " layers"); }

// Runs fn; prefixes the message of an std::invalid_argument with the reference file it is about
// (kind Format: the file does not hold what a reference case needs).
template <typename Fn>
auto in_file(const char* file, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::Format, "", str_cat("reference ", file, " file: ", e.what()));
  }
}

}  // namespace

SelfTestForward model_forward(TinyAttentionLM& model) {
  return [&model](const int32_t* ids, int B, int T, Mat& logits, Mat& weights) {
    TinyAttentionLM::State s;
    model.forward(ids, B, T, s);
    logits = s.logits;
    s.stacked_weights(weights);  // (L*B*H*T,T), layer-major
  };
}

// ---- 1. rows_and_mask

// How a detail sentence names the keys the pattern hides.
std::string masked_keys(const MaskPattern& p) {
  if (p.window == 0) return p.causal ? "above the diagonal" : "masked (none: bidirectional)";
  return str_cat("outside the ", p.causal ? "causal" : "bidirectional", " window of ", p.window,
                 p.stride > 0 ? str_cat(" with stride ", p.stride) : std::string());
}

SelfTestResult check_rows_and_mask(const SelfTestForward& forward, const ModelConfig& c,
                                   const std::vector<float>* row_sums) {
  return guarded(kRowsAndMask, [&] {
    const int B = kProbeBatch, T = c.max_context_length, H = c.n_heads, L = c.n_layers;
    require(!row_sums || row_sums->size() == size_t(L) * H, "row_sums has ",
            row_sums ? row_sums->size() : 0, " entries, expected one per head (", L * H, ")");
    const MaskPattern pattern = c.mask_pattern();
    Rng rng(kIdsSeed);
    const std::vector<int32_t> ids = random_ids(rng, size_t(B) * T, c.vocab_size);
    Mat logits, w;
    forward(ids.data(), B, T, logits, w);
    const Eigen::Index rows = Eigen::Index(L) * B * H * T;  // every layer's rows
    require_shape("attention weights", w, rows, T);
    double max_sum_err = 0.0, max_masked = 0.0;
    int64_t masked = 0, masked_nonzero = 0;
    for (Eigen::Index r = 0; r < rows; ++r) {
      const Eigen::Index i = r % T;  // query position
      const Eigen::Index g = (r / (Eigen::Index(B) * H * T)) * H + (r / T) % H;  // global head
      const double want = row_sums ? double((*row_sums)[size_t(g)]) : 1.0;
      double sum = 0.0;
      for (Eigen::Index j = 0; j < T; ++j) {
        const double v = w(r, j);
        sum += v;
        if (!pattern.visible(i, j)) {
          ++masked;
          if (v != 0.0) ++masked_nonzero;  // a NaN counts too
          max_masked = nan_max(max_masked, std::fabs(v));
        }
      }
      max_sum_err = nan_max(max_sum_err, std::fabs(sum - want));
    }
    return make(kRowsAndMask, nan_max(max_sum_err, max_masked), masked_nonzero == 0,
                str_cat(bts(B, T, H), layers_of(L), ", ", rows, " rows; max |row sum - ",
                        row_sums ? "(1 - lambda)" : "1", "| = ", num(max_sum_err),
                        "; largest weight ", masked_keys(pattern), " ", num(max_masked), " (",
                        masked_nonzero, " of ", masked, " nonzero)"));
  });
}

// ---- 2. future_invariance

SelfTestResult check_future_invariance(const SelfTestForward& forward, const ModelConfig& c) {
  return guarded(kFutureInvariance, [&] {
    const int B = kProbeBatch, T = c.max_context_length, H = c.n_heads, V = c.vocab_size;
    const int L = c.n_layers;
    if (T == 1)
      return make(kFutureInvariance, 0.0, true,
                  "T = max_context_length = 1: no position comes after another, nothing to check");
    if (V == 1)
      return make(kFutureInvariance, 0.0, true,
                  "V = 1: there is no other id to put in the future, nothing to check");
    if (c.objective == Objective::Mlm)
      return make(kFutureInvariance, 0.0, true,
                  "objective mlm: attention is bidirectional, so later tokens are meant to change "
                  "earlier positions; nothing to check");
    const int t0 = (T - 1) / 2;  // rows <= t0 must not change; t0 < T-1 for every T >= 2
    Rng rng(kIdsSeed);
    const std::vector<int32_t> ids = random_ids(rng, size_t(B) * T, V);
    std::vector<int32_t> changed = ids;
    for (int b = 0; b < B; ++b)
      for (int t = t0 + 1; t < T; ++t) {
        int32_t& id = changed[size_t(b) * T + t];
        id = static_cast<int32_t>((id + 1 + int(rng.below(uint32_t(V - 1)))) % V);  // != old id
      }
    Mat logits0, w0, logits1, w1;
    forward(ids.data(), B, T, logits0, w0);
    forward(changed.data(), B, T, logits1, w1);
    const Eigen::Index N = Eigen::Index(B) * T;
    require_shape("logits", logits0, N, V);
    require_shape("logits", logits1, N, V);
    require_shape("attention weights", w0, L * N * H, T);
    require_shape("attention weights", w1, L * N * H, T);
    double past_logits = 0.0, past_w = 0.0, future_logits = 0.0;
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t) {
        const Eigen::Index r = Eigen::Index(b) * T + t;
        const double d = (logits0.row(r) - logits1.row(r)).cwiseAbs().cast<double>().maxCoeff();
        if (t <= t0) {
          past_logits = nan_max(past_logits, d);
          for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) {
              const Eigen::Index p = ((Eigen::Index(l) * B + b) * H + h) * T + t;
              past_w =
                  nan_max(past_w, (w0.row(p) - w1.row(p)).cwiseAbs().cast<double>().maxCoeff());
            }
        } else {
          future_logits = nan_max(future_logits, d);
        }
      }
    return make(kFutureInvariance, nan_max(past_logits, past_w), true,
                str_cat(bts(B, T, H), layers_of(L), ", every id after position t0=", t0,
                        " replaced; max |diff| over rows <= t0: logits ", num(past_logits),
                        ", attention ", num(past_w), " (the logits after t0 moved by up to ",
                        num(future_logits), ")"));
  });
}

// ---- 3. split_merge

SelfTestResult check_split_merge(const ModelConfig& c, HeadsFn split, HeadsFn merge) {
  return guarded(kSplitMerge, [&] {
    const int B = kProbeBatch, T = c.max_context_length, H = c.n_heads, D = c.d_model;
    const int Dh = D / H;
    Rng rng(kSplitSeed);
    const Mat x = random_mat(Eigen::Index(B) * T, D, rng);
    const Mat s = split(x, B, T, H);
    require_shape("split_heads(x)", s, Eigen::Index(B) * H * T, Dh);
    const Mat m = merge(s, B, T, H);
    require_shape("merge_heads(split_heads(x))", m, x.rows(), x.cols());
    const double round_trip = (m - x).cwiseAbs().cast<double>().maxCoeff();
    double blocks = 0.0;
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h) {
        const auto head = s.block((Eigen::Index(b) * H + h) * T, 0, T, Dh);
        const auto cols = x.block(Eigen::Index(b) * T, Eigen::Index(h) * Dh, T, Dh);
        blocks = nan_max(blocks, (head - cols).cwiseAbs().cast<double>().maxCoeff());
      }
    return make(kSplitMerge, nan_max(round_trip, blocks), true,
                str_cat(bts(B, T, H), " Dh=", Dh, ", random x ", shape2(x.rows(), x.cols()),
                        ": max |merge(split(x)) - x| = ", num(round_trip),
                        "; max |head h block - x columns [h*Dh, (h+1)*Dh)| = ", num(blocks)));
  });
}

// ---- 4. fused_qkv

SelfTestResult check_fused_qkv(ConstMatRef x, ConstMatRef fused, ConstMatRef weight,
                               ConstMatRef bias, const Rope* rope, int B, int maps) {
  return guarded(kFusedQkv, [&] {
    // Rows: q (maps D), then k (maps KV Dh) and v (KV Dh; KV Dh = D without grouped K/V heads).
    const Eigen::Index N = x.rows(), D = x.cols(), W = weight.rows();
    require(maps == 1 || maps == 2, "maps (", maps, ") must be 1 or 2");
    const Eigen::Index KVD = (W - maps * D) / (maps + 1);
    require(W > maps * D && (W - maps * D) % (maps + 1) == 0 && weight.cols() == D,
            "qkv weight has shape ", shape2(weight.rows(), weight.cols()), ", expected (",
            maps == 1 ? "D + 2 KV Dh" : "2 D + 3 KV Dh", ", D) with D = ", D);
    require(bias.size() == W, "qkv bias has ", bias.size(), " values, expected ", W);
    require(fused.rows() == N && fused.cols() == W, "fused projection has shape ",
            shape2(fused.rows(), fused.cols()), ", expected ", shape2(N, W));
    const Eigen::MatrixXd xd = x.cast<double>();
    const Mat b = bias;  // contiguous, whichever way the vector is laid out
    const Eigen::RowVectorXd bd =
        Eigen::Map<const Eigen::RowVectorXf>(b.data(), b.size()).cast<double>();
    const Eigen::Index start[3] = {0, maps * D, maps * (D + KVD)};
    const Eigen::Index width[3] = {maps * D, maps * KVD, KVD};
    double err[3];
    for (int part = 0; part < 3; ++part) {
      // Plain Eigen in double: x W[block]^T + b[block].
      Eigen::MatrixXd sep =
          xd * weight.middleRows(start[part], width[part]).cast<double>().transpose();
      sep.rowwise() += bd.segment(start[part], width[part]);
      if (rope && part < 2) {
        // The layer keeps q and k rotated: rotate the separate ones the same way, per sequence
        // and per head (a float rotation, as the layer's).
        Mat rotated = sep.cast<float>();
        const Eigen::Index Dh = rope->d_head, T = N / B;
        for (Eigen::Index r = 0; r < N; r += T)
          for (Eigen::Index c = 0; c < width[part]; c += Dh)
            rope->rotate(rotated.block(r, c, T, Dh));
        sep = rotated.cast<double>();
      }
      const Eigen::MatrixXd got = fused.middleCols(start[part], width[part]).cast<double>();
      err[part] = 0.0;
      for (Eigen::Index i = 0; i < N; ++i)
        for (Eigen::Index j = 0; j < width[part]; ++j)
          err[part] = nan_max(err[part], std::fabs(got(i, j) - sep(i, j)) / (1.0 + std::fabs(sep(i, j))));
    }
    return make(kFusedQkv, nan_max(err[0], nan_max(err[1], err[2])), true,
                str_cat("x ", shape2(N, D), ", weight row blocks [0,", start[1], "), [", start[1],
                        ",", start[2], "), [", start[2], ",", W, ")",
                        maps == 2 ? " (differential: q1 q2, k1 k2, v)" : "",
                        rope ? " (q and k rotated by RoPE)" : "",
                        " and bias slices in double; max |fused - separate| / (1 + |separate|): "
                        "q ", num(err[0]), ", k ", num(err[1]), ", v ", num(err[2])));
  });
}

SelfTestResult check_fused_qkv(TinyAttentionLM& model) {
  return guarded(kFusedQkv, [&] {
    const ModelConfig& c = model.config;
    const int B = kProbeBatch, T = c.max_context_length, L = c.n_layers;
    Rng rng(kIdsSeed);
    const std::vector<int32_t> ids = random_ids(rng, size_t(B) * T, c.vocab_size);
    TinyAttentionLM::State s;
    model.forward(ids.data(), B, T, s);
    if (L == 1) {
      SelfTestResult r = check_fused_qkv(s.attn.x, s.attn.qkv, model.attn.qkv_proj.weight,
                                         model.attn.qkv_proj.bias,
                                         model.attn.rope ? &*model.attn.rope : nullptr, B,
                                         model.attn.qk_maps());
      if (r.detail.rfind("error: ", 0) != 0)  // an error message stays as it is
        r.detail =
            str_cat(bts(B, T, c.n_heads), ", the model's embeddings + positions as ", r.detail);
      return r;
    }
    // Every layer, on its own input (layer 0: embeddings + positions; layer l: the stream
    // after layer l-1); the worst layer is the result.
    SelfTestResult worst;
    std::string details;
    for (int l = 0; l < L; ++l) {
      const MultiHeadSelfAttention& m = model.layers[size_t(l)];
      const MultiHeadSelfAttention::State& st = s.layers[size_t(l)];
      SelfTestResult r = check_fused_qkv(st.x, st.qkv, m.qkv_proj.weight, m.qkv_proj.bias,
                                         m.rope ? &*m.rope : nullptr, B, m.qk_maps());
      if (r.detail.rfind("error: ", 0) == 0) return r;
      if (l == 0 || !(r.max_error <= worst.max_error)) worst = r;  // keeps a NaN
      details += str_cat(l == 0 ? "" : "; ", "layer ", l, ": ", r.detail);
    }
    worst.detail = str_cat(bts(B, T, c.n_heads), ", all ", L,
                           " layers, each on its own input (layer 0: embeddings + positions, "
                           "layer l: the stream after layer l-1); ", details);
    return worst;
  });
}

// ---- 5. gradcheck

namespace {
// The Backward panel's loss on the model's outputs, in double: -log softmax(logits[query])[target].
double position_loss(const Mat& logits, int query, int target) {
  const float* row = logits.row(query).data();
  double m = row[0], sum = 0.0;
  for (Eigen::Index j = 1; j < logits.cols(); ++j) m = std::max(m, double(row[j]));
  for (Eigen::Index j = 0; j < logits.cols(); ++j) sum += std::exp(double(row[j]) - m);
  return std::log(sum) + m - double(row[target]);
}
}  // namespace

SelfTestResult check_gradcheck(int n_layers, bool residual, const ModelConfig* block) {
  return guarded(kGradcheck, [&] {
    ModelConfig c;
    c.vocab_size = 8;
    c.d_model = 8;
    c.n_heads = 2;
    c.max_context_length = 4;
    c.n_layers = n_layers;
    c.residual = residual;
    if (block) {
      // The block's settings (every key a file keeps only for a block model, from the rows; an
      // mlm's [MASK] among the 8 ids) at this small size: grouped K/V heads become multi-query,
      // the window narrower than C, so the mask shows.
      for (const ConfigKey& k : model_config_keys())
        if (k.weights == InWeights::Block || k.weights == InWeights::Changed)
          row_copy(k, block, &c);
      c.max_context_length = 4;
      c.kv_heads = block->kv_heads_resolved() < block->n_heads ? 1 : 0;
      c.window = std::min(block->window, 2);
      c.stride = std::min(block->stride, 3);
    }
    const int T = c.max_context_length, query = T - 1;
    TinyAttentionLM model(c, kGradSeed);
    Rng rng(kGradSeed);
    const std::vector<int32_t> ids = random_ids(rng, size_t(T), c.vocab_size);
    const int target = int(rng.below(uint32_t(c.vocab_size)));

    // Analytic: the model's own backward for the loss at position query alone.
    TinyAttentionLM::State s;
    model.position_loss_backward(ids.data(), T, query, target, s);
    struct Probe {
      std::string name;
      float* value;
      std::vector<float> analytic;
    };
    std::vector<Probe> probes;
    for (const ParamRef& p : model.parameters())
      probes.push_back({p.name, p.value, std::vector<float>(p.grad, p.grad + p.numel())});

    // Numeric: the same loss from an eval forward, in double.
    auto loss = [&] {
      model.forward(ids.data(), 1, T, s);
      return position_loss(s.logits, query, target);
    };

    double worst = 0.0, max_grad = 0.0;
    std::string worst_at = "none";
    size_t entries = 0;
    std::string counts;
    for (Probe& p : probes) {
      const int64_t n = int64_t(p.analytic.size());
      const GradientCheck g = check_gradient(p.value, p.analytic.data(), n, loss, {},
                                             kGradTolerance);
      const double e = kGradcheckRelTol * g.max_error;
      max_grad = nan_max(max_grad, g.max_grad);
      if (n > 0 && !std::isnan(worst) && (std::isnan(e) || e > worst)) {  // keeps the first NaN
        worst = e;
        worst_at = str_cat(p.name, "[", g.max_error_at, "] (analytic ", num(g.analytic_at),
                           ", numeric ", num(g.numeric_at), ")");
      }
      entries += p.analytic.size();
      counts += str_cat(counts.empty() ? "" : ", ", p.name, " ", p.analytic.size());
    }
    const bool signal = max_grad > kGradSignal;
    return make(kGradcheck, worst, signal,
                str_cat("fresh model V=", c.vocab_size, " D=", c.d_model, " H=", c.n_heads,
                        " C=", c.max_context_length,
                        c.n_layers == 1 && !c.residual
                            ? std::string()
                            : str_cat(" L=", c.n_layers, residual ? " with" : " without",
                                      " residual"),
                        block_keys_text(c),
                        ", ", T,
                        " random ids; loss = cross-entropy at position ", query,
                        " alone (the Backward panel's loss), in double; the model's backward "
                        "against central differences (eps ",
                        num(kGradcheckEps), ") on all ", entries, " parameter entries (", counts,
                        "); error |a - n| / (max(|a|,|n|) + ", num(kGradFloor), "), i.e. |a - n| <= ",
                        num(kGradcheckAbsTol), " + ", num(kGradcheckRelTol),
                        " * max(|a|,|n|); worst at ", worst_at, "; largest |grad| ", num(max_grad),
                        signal ? "" : " (too small to prove anything)"));
  });
}

// ---- 6. pytorch_reference

SelfTestResult check_pytorch_reference(const ReferenceCase* ref) {
  return guarded(kPytorchReference, [&] {
    if (!ref)
      return make(kPytorchReference, kNaN, false,
                  "no reference case was given (the weights, input and expected safetensors files "
                  "of a PyTorch reference config), so nothing was compared");
    const std::unique_ptr<TinyAttentionLM> model =
        in_file("weights", [&] { return load_model(ref->weights.data(), ref->weights.size()); });
    const SafetensorsFile input =
        in_file("input", [&] { return parse_safetensors(ref->input.data(), ref->input.size()); });
    const SafetensorsFile expected = in_file(
        "expected", [&] { return parse_safetensors(ref->expected.data(), ref->expected.size()); });
    const ModelConfig& c = model->config;

    const std::vector<int64_t> ids_shape = in_file("input", [&] {
      const std::vector<int64_t> shape = input.get("ids", "input").shape;
      require_format(shape.size() == 2, "input: tensor \"ids\" must be (B,T), got shape ",
                     shape_str(shape));
      return shape;
    });
    const std::vector<int32_t> ids = in_file("input", [&] { return input.ids("ids", "input"); });
    const std::vector<int32_t> targets =
        in_file("input", [&] { return input.ids("targets", "input"); });
    in_file("input", [&] {
      require_format(targets.size() == ids.size(), "input: targets has ", targets.size(),
                     " values but ids has ", ids.size());
    });
    const int64_t B64 = ids_shape[0], T64 = ids_shape[1];
    require_format(
        B64 >= 1 && B64 <= (int64_t(1) << 20) && T64 >= 1 && T64 <= c.max_context_length,
        "reference input file: ids shape ", shape_str(ids_shape),
        " needs 1 <= B and 1 <= T <= max_context_length (", c.max_context_length, ")");
    const int B = int(B64), T = int(T64);

    TinyAttentionLM::State s;
    model->forward(ids.data(), B, T, s);
    const float loss = cross_entropy_loss(s.logits, targets.data());

    const std::vector<int64_t> logits_shape = {B, T, c.vocab_size};
    // One layer: (B,H,T,T); more: (L,B,H,T,T), layer-major as stacked_weights.
    std::vector<int64_t> attn_shape = {B, c.n_heads, T, T};
    if (c.n_layers > 1) attn_shape.insert(attn_shape.begin(), c.n_layers);
    const std::vector<float> t_logits =
        in_file("expected", [&] { return expected.f32("logits", &logits_shape, "expected"); });
    const std::vector<float> t_attn =
        in_file("expected", [&] { return expected.f32("attention", &attn_shape, "expected"); });
    const std::vector<float> t_loss = in_file("expected", [&] {
      std::vector<float> v = expected.f32("loss", nullptr, "expected");
      require_format(v.size() == 1, "expected: tensor \"loss\" has ", v.size(),
                     " values, expected 1");
      return v;
    });

    struct Part {
      const char* name;
      const float* ours;
      const std::vector<float>* torch;
    };
    Mat weights;
    s.stacked_weights(weights);
    const Part parts[] = {{"logits", s.logits.data(), &t_logits},
                          {"attention", weights.data(), &t_attn},
                          {"loss", &loss, &t_loss}};
    double metric = 0.0;
    size_t bad = 0, total = 0;
    std::string diffs, offenders;
    for (const Part& p : parts) {
      const Closeness st =
          compare_close(p.ours, p.torch->data(), p.torch->size(), kReferenceTolerance, 2, "torch");
      metric = nan_max(metric, kReferenceOutRel * st.max_error);
      bad += st.bad;
      total += st.n;
      diffs += str_cat(diffs.empty() ? "" : ", ", p.name, " ", num(st.max_abs_diff));
      if (st.bad) offenders += str_cat(" ", p.name, ":", st.first_bad);
    }
    return make(kPytorchReference, metric, bad == 0,
                str_cat("V=", c.vocab_size, " D=", c.d_model, " H=", c.n_heads,
                        " C=", c.max_context_length,
                        c.n_layers == 1 && !c.residual
                            ? std::string()
                            : str_cat(" L=", c.n_layers, c.residual ? " with" : " without",
                                      " residual"),
                        ", B=", B, " T=", T,
                        "; max |ours - torch|: ", diffs, "; ", bad, " of ", total,
                        " values outside ", num(kReferenceOutAbs), " + ", num(kReferenceOutRel),
                        " * |torch|", offenders));
  });
}

// ---- all of them

std::vector<SelfTestResult> run_self_tests(TinyAttentionLM& model, const ReferenceCase* reference) {
  const SelfTestForward forward = model_forward(model);
  std::vector<SelfTestResult> out;
  out.reserve(6);
  std::vector<float> row_sums;  // differential: 1 - lambda per head
  for (const MultiHeadSelfAttention& layer : model.layers)
    for (Eigen::Index h = 0; h < layer.lambda.size(); ++h) row_sums.push_back(1.0f - layer.lambda[h]);
  out.push_back(check_rows_and_mask(forward, model.config,
                                    row_sums.empty() ? nullptr : &row_sums));
  out.push_back(check_future_invariance(forward, model.config));
  out.push_back(check_split_merge(model.config, &split_heads, &merge_heads));
  out.push_back(check_fused_qkv(model));
  out.push_back(check_gradcheck(model.config.n_layers, model.config.residual, &model.config));
  out.push_back(check_pytorch_reference(reference));
  return out;
}

}  // namespace attn
