// attn demo self-attention: the NumPy single-head lesson in the terminal, every number from the
// core in float32. A sentence and its tokens; X; Q, K, V; the scores, the scaled scores, the
// weights and the output; then several heads with concatenation and an output projection without
// bias; then why softmax subtracts the max.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attn/base/rng.h"
#include "attn/kernels/ops.h"
#include "attn/nn/attention.h"
#include "attn/nn/embedding.h"
#include "attn/teach/lesson.h"
#include "cli/args.h"
#include "cli/commands.h"

namespace attn::cli {

namespace {

constexpr int kMaxTokens = 16;
constexpr int kMaxLogits = 16;

// Lower-cased words: runs of letters, digits and apostrophes; anything else separates words.
std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> words;
  std::string w;
  for (const char ch : text + " ") {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '\'') {
      w += static_cast<char>(std::tolower(c));
    } else if (!w.empty()) {
      words.push_back(w);
      w.clear();
    }
  }
  return words;
}

// "100,200,300" -> {100, 200, 300}; throws UsageError naming --logits.
std::vector<float> parse_logits(const std::string& text) {
  std::vector<float> out;
  size_t pos = 0;
  while (true) {
    const size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    errno = 0;
    const double x = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x) ||
        std::fabs(x) > 3.0e38)
      throw UsageError("--logits: '" + item + "' is not a finite float32 number");
    out.push_back(static_cast<float>(x));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (out.size() > size_t(kMaxLogits))
    throw UsageError(str_cat("--logits has ", out.size(), " numbers; at most ", kMaxLogits));
  return out;
}

// A cell of 8 characters: fixed point when it fits, else scientific; inf and nan spelled out.
std::string cell(float v) {
  char buf[32];
  if (std::isnan(v)) return "     nan";
  if (std::isinf(v)) return v > 0 ? "     inf" : "    -inf";
  if (v != 0.0f && (std::fabs(v) >= 999.9995f || std::fabs(v) < 0.0005f))
    std::snprintf(buf, sizeof buf, "%8.1e", double(v));
  else
    std::snprintf(buf, sizeof buf, "%8.3f", double(v));
  return buf;
}

// s cut to width characters ("~" marks a cut), then padded to width by label().
std::string short_label(const std::string& s, size_t width) {
  return s.size() > width ? s.substr(0, width - 1) + "~" : s;
}
std::string label(const std::string& s, size_t width) {
  const std::string t = short_label(s, width);
  return t + std::string(width - t.size(), ' ');
}

// A titled table: one row per token; column labels when given (else the column numbers).
void print_matrix(const std::string& title, const Mat& m, const std::vector<std::string>& rows,
                  const std::vector<std::string>& cols = {}) {
  size_t w = 4;
  for (const std::string& r : rows) w = std::max(w, std::min<size_t>(r.size(), 8));
  std::printf("   %s\n   %s", title.c_str(), std::string(w + 1, ' ').c_str());
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    std::printf(" %7s", cols.empty() ? std::to_string(j).c_str()
                                     : short_label(cols[size_t(j)], 7).c_str());
  std::printf("\n");
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    std::printf("   %s |", label(rows[size_t(i)], w).c_str());
    for (Eigen::Index j = 0; j < m.cols(); ++j) std::printf("%s", cell(m(i, j)).c_str());
    std::printf("\n");
  }
}

void print_row(const char* name, const RowVec& v, const std::string& note = "") {
  std::printf("   %-22s [", name);
  for (Eigen::Index j = 0; j < v.size(); ++j) {
    if (std::isnan(v[j]))
      std::printf("%s%9s", j ? "," : "", "NaN");  // printf may spell it "-nan"
    else
      std::printf("%s%9.3g", j ? "," : "", double(v[j]));
  }
  std::printf(" ]%s\n", note.c_str());
}

std::string g3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

double max_row_sum_error(const Mat& w) {
  double worst = 0.0;
  for (Eigen::Index i = 0; i < w.rows(); ++i)
    worst = std::max(worst, std::fabs(w.row(i).cast<double>().sum() - 1.0));
  return worst;
}

}  // namespace

int cmd_demo_self_attention(const std::vector<std::string>& argv) {
  const std::vector<Flag> flags = {
      {"sentence", "TEXT", "The cat sat on the mat", "the sentence (lower-cased words, at most 16)"},
      {"d-model", "D", "8", "embedding width (even, <= 64)"},
      {"dk", "N", "4", "query/key width of each head (<= 64)"},
      {"dv", "N", "4", "value width of each head (<= 64)"},
      {"heads", "H", "2", "heads of the multi-head section (1 to 8)"},
      {"seed", "N", "42", "seed for the embeddings and the weights"},
      {"causal", "", "", "mask the future (j > i) before the softmax"},
      {"no-positions", "", "", "X without the sinusoidal position encoding"},
      {"logits", "LIST", "100,200,300", "the logits of the softmax stability section"},
  };
  const Args args("demo self-attention",
                  "The NumPy single-head lesson, stage by stage, computed by the core in float32: "
                  "a sentence, its tokens, X, Q, K, V, the scores, the scaled scores, the weights "
                  "and the output; then several heads, their concatenation and an output "
                  "projection without bias; then why softmax subtracts the max.",
                  flags, argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  const std::string sentence = args.get("sentence");
  const std::vector<std::string> tokens = tokenize(sentence);
  if (tokens.empty()) throw UsageError("--sentence: no words in '" + sentence + "'");
  if (tokens.size() > size_t(kMaxTokens))
    throw UsageError(str_cat("--sentence has ", tokens.size(), " words; at most ", kMaxTokens));
  const int D = args.get_int("d-model", 2, 64);
  if (D % 2 != 0) throw UsageError(str_cat("--d-model (", D, ") must be even for the positions"));
  const int dk = args.get_int("dk", 1, 64), dv = args.get_int("dv", 1, 64);
  const int H = args.get_int("heads", 1, 8);
  const uint64_t seed = args.get_u64("seed");
  const bool causal = args.has("causal"), positions = !args.has("no-positions");
  const std::vector<float> logits = parse_logits(args.get("logits"));
  const int T = static_cast<int>(tokens.size());

  // 1. Tokens: one id per distinct word, in order of first appearance.
  std::vector<std::string> vocab;
  std::vector<int> ids;
  for (const std::string& t : tokens) {
    size_t id = 0;
    while (id < vocab.size() && vocab[id] != t) ++id;
    if (id == vocab.size()) vocab.push_back(t);
    ids.push_back(static_cast<int>(id));
  }
  std::printf("Self-attention from scratch (the NumPy lesson), computed by the attn core in "
              "float32\n\n1. The sentence and its tokens\n   sentence: \"%s\"\n   tokens "
              "(T=%d, lower-cased words):",
              sentence.c_str(), T);
  for (int i = 0; i < T; ++i) std::printf(" %s=%d", tokens[size_t(i)].c_str(), ids[size_t(i)]);
  std::printf("\n");

  // The lesson's inputs (the page's lesson view draws the same): E, every head's weights, W_o.
  const LessonInputs in = lesson_inputs(tokens, D, dk, dv, H, seed);

  // 2. X (T,D): the word's embedding row plus the position's row.
  Mat X = in.E;
  if (positions) X += SinusoidalPositionalEmbedding(T, D).table;
  std::printf("\n2. X (T,D) = (%d,%d): one N(0,1) row per distinct word, from the word's own "
              "stream of seed %llu%s\n", T, D, static_cast<unsigned long long>(seed),
              positions ? "\n   + the sinusoidal row of its position, so a repeated word gets "
                          "another row"
                        : ";\n   no positions (--no-positions): a repeated word gets the same row");
  print_matrix("X", X, tokens);

  // 3-6. One head: the lesson's SelfAttention(d_model, dk, dv, seed), head 0 of the inputs.
  const AttentionStages st = self_attention_stages(X, in.Wq[0], in.Wk[0], in.Wv[0], causal);
  std::printf("\n3. Projections of the lesson's SelfAttention(d_model=%d, dk=%d, dv=%d, seed=%llu)"
              "\n   Q = X Wq (T,dk), K = X Wk (T,dk), V = X Wv (T,dv)"
              "\n   Wq, Wk ~ N(0, sqrt(2/(D+dk))), Wv ~ N(0, sqrt(2/(D+dv)))\n",
              D, dk, dv, static_cast<unsigned long long>(seed));
  print_matrix("Q", st.Q, tokens);
  print_matrix("K", st.K, tokens);
  print_matrix("V", st.V, tokens);
  std::printf("\n4. Scores = Q K^T (T,T): row i says how well query i matches each key j\n");
  print_matrix("scores", st.scores, tokens, tokens);
  std::printf("\n5. Scaled scores = scores / sqrt(dk) = scores / %.4g%s\n",
              std::sqrt(double(dk)), causal ? "; then -inf above the diagonal (the causal mask)" : "");
  print_matrix(causal ? "scaled and masked scores" : "scaled scores", st.masked_scores, tokens,
               tokens);
  std::printf("\n6. Weights = softmax of each row (max |row sum - 1| = %.3g)\n",
              max_row_sum_error(st.weights));
  print_matrix("weights", st.weights, tokens, tokens);
  std::printf("\n7. Output = weights V (T,dv): each row is a blend of the value rows\n");
  print_matrix("output", st.output, tokens);

  // 8. H heads, concatenated, then W_o without bias.
  const MultiHeadStages mh = multi_head_self_attention(X, in.Wq, in.Wk, in.Wv, in.Wo, causal);
  std::printf("\n8. Multi-head: %d heads, each its own SelfAttention(d_model=%d, dk=%d, dv=%d), "
              "seeds %llu to %llu (head 1 is the head above);\n   their outputs side by side "
              "(concat), then mixed by W_o\n",
              H, D, dk, dv, static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed + uint64_t(H) - 1));
  for (int h = 0; h < H; ++h) {
    const AttentionStages& s = mh.heads[size_t(h)];
    std::printf("\n   head %d: Q_%d = X Wq_%d, K_%d = X Wk_%d, V_%d = X Wv_%d\n", h + 1, h + 1,
                h + 1, h + 1, h + 1, h + 1, h + 1);
    print_matrix(str_cat("Q_", h + 1), s.Q, tokens);
    print_matrix(str_cat("K_", h + 1), s.K, tokens);
    print_matrix(str_cat("V_", h + 1), s.V, tokens);
    print_matrix(str_cat("weights_", h + 1, " (max |row sum - 1| = ", g3(max_row_sum_error(s.weights)),
                         ")"),
                 s.weights, tokens, tokens);
    print_matrix(str_cat("output_", h + 1, " = weights_", h + 1, " V_", h + 1), s.output, tokens);
  }
  std::printf("\n");
  print_matrix(str_cat("concat (T, H*dv) = (", T, ",", H * dv, "): head h is columns [h*dv, (h+1)*dv)"),
               mh.concat, tokens);
  std::printf("\n   W_o (H*dv, D) = (%d,%d) ~ N(0, sqrt(2/(H*dv+D))), no bias\n", H * dv, D);
  print_matrix(str_cat("output = concat W_o (T,D) = (", T, ",", D, ")"), mh.output, tokens);

  // 9. The softmax stability lesson.
  RowVec x(Eigen::Index(logits.size()));
  for (size_t j = 0; j < logits.size(); ++j) x[Eigen::Index(j)] = logits[j];
  const SoftmaxSteps naive = softmax_steps(x, /*subtract_max=*/false);
  const SoftmaxSteps stable = softmax_steps(x, /*subtract_max=*/true);
  std::printf("\n9. Why softmax subtracts the max\n   in float32 the largest number is 3.4e+38, "
              "so exp(x) overflows to inf for x > 88.72\n");
  print_row("logits x", x);
  std::printf("   naive\n");
  print_row("exp(x)", naive.exps, "  sum = " + g3(naive.sum));
  print_row("exp(x) / sum", naive.weights);
  std::printf("   stable (subtract max = %g)\n", double(stable.max));
  print_row("x - max", stable.shifted);
  print_row("exp(x - max)", stable.exps, "  sum = " + g3(stable.sum));
  print_row("exp(x - max) / sum", stable.weights);
  if (!naive.weights.allFinite())
    std::printf("   The naive weights are not numbers: exp overflowed to inf, and inf / inf = "
                "NaN.\n   The stable recipe is the same softmax (a shift cancels in the ratio), "
                "and its largest exp is\n   exp(0) = 1, so nothing overflows.\n");
  else
    std::printf("   No exp overflows here: both recipes agree up to rounding (max |diff| = "
                "%.3g).\n   Try --logits 100,200,300.\n",
                double((naive.weights - stable.weights).cwiseAbs().maxCoeff()));
  return 0;
}

}  // namespace attn::cli
