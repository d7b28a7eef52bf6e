// The transformer block step by step (transformer_block_stages, the page's block view): the
// stages compose, the last one is the model's own forward, pre and post differ as defined, the
// RoPE pair and the ALiBi bias follow the course's formulas, bad values throw with their key.
#include <catch2/catch.hpp>

#include <cmath>

#include "attn/teach/block_stages.h"
#include "expect_error.h"

using attn::BlockStages;
using attn::BlockStagesInput;
using attn::ErrorKind;
using attn::Mat;
using attn::transformer_block_stages;

namespace {

BlockStagesInput block_input(const std::string& norm, const std::string& norm_position,
                             const std::string& ffn, const std::string& positions = "sinusoidal",
                             int kv_heads = 0) {
  BlockStagesInput in;
  in.config.model.vocab_size = 10;
  in.config.model.d_model = 16;
  in.config.model.n_heads = 4;
  in.config.task.seq_len = 6;
  in.config.training.seed = 7;
  in.config.model.kv_heads = kv_heads;
  in.config.model.norm = attn::parse_norm_kind(norm);
  in.config.model.norm_position = attn::parse_norm_position(norm_position);
  in.config.model.ffn = attn::parse_ffn_kind(ffn);
  in.config.model.ffn_mult = 2;
  in.config.model.positions = attn::parse_position_kind(positions);
  in.ids = {1, 4, 2, 9, 0, 4};
  return in;
}

void check_close(const Mat& a, const Mat& b, float tol = 1e-6f) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  CHECK((a - b).cwiseAbs().maxCoeff() <= tol);
}

// The model's lm_head input for the same config and seed: its own one-layer forward.
Mat model_stream(const BlockStagesInput& in) {
  attn::TrainerConfig c = in.config;
  c.model.residual = true;
  attn::TinyAttentionLM model(c.model_config(), c.training.seed);
  attn::TinyAttentionLM::State s;
  model.forward(in.ids.data(), 1, int(in.ids.size()), s);
  return s.a;
}

}  // namespace

TEST_CASE("block stages: every stage composes and the last is the model's forward",
          "[block_stages]") {
  for (const char* norm : {"none", "layernorm", "rmsnorm"})
    for (const char* pos : {"pre", "post"})
      for (const char* ffn : {"none", "relu", "gelu", "swiglu"})
        for (const char* positions : {"sinusoidal", "learned", "rope", "alibi", "none"}) {
          CAPTURE(norm, pos, ffn, positions);
          const BlockStagesInput in = block_input(norm, pos, ffn, positions, 2);
          const BlockStages s = transformer_block_stages(in);
          const int T = 6, D = 16, H = 4, KV = 2, Dh = 4, F = 32;
          const bool has_norm = std::string(norm) != "none", has_ffn = std::string(ffn) != "none";
          const bool pre = std::string(pos) == "pre";
          CHECK(s.T == T);
          CHECK(s.x.rows() == T);
          CHECK(s.x.cols() == D);
          CHECK(s.q.cols() == H * Dh);
          CHECK(s.k.cols() == KV * Dh);
          CHECK(s.v.cols() == KV * Dh);
          CHECK(s.weights.rows() == H * T);
          CHECK(s.weights.cols() == T);
          // Each softmax row sums to 1.
          CHECK((s.weights.rowwise().sum().array() - 1.0f).abs().maxCoeff() < 1e-5f);
          check_close(s.sum1, s.x + s.attn_out);
          CHECK(s.norm1.size() == (has_norm ? T * D : 0));
          CHECK(s.norm2.size() == (has_norm && has_ffn ? T * D : 0));
          CHECK(s.ffn_out.size() == (has_ffn ? T * D : 0));
          CHECK(s.ffn_hidden.size() == (has_ffn ? T * F : 0));
          CHECK(s.ffn_gate.size() == (std::string(ffn) == "swiglu" ? T * F : 0));
          if (std::string(ffn) == "swiglu")
            check_close(s.ffn_hidden,
                        s.ffn_gate.unaryExpr([](float v) { return attn::silu(v); })
                            .cwiseProduct(s.ffn_up));
          if (std::string(ffn) == "relu") check_close(s.ffn_hidden, s.ffn_up.cwiseMax(0.0f));
          if (pre) {
            const Mat& h1 = s.sum1;
            if (has_ffn) {
              check_close(s.sum2, h1 + s.ffn_out);
              check_close(s.out, s.sum2);
            } else {
              check_close(s.out, h1);
            }
          } else {
            const Mat& h1 = has_norm ? s.norm1 : s.sum1;
            if (has_ffn) {
              check_close(s.sum2, h1 + s.ffn_out);
              check_close(s.out, has_norm ? s.norm2 : s.sum2);
            } else {
              check_close(s.out, h1);
            }
          }
          // The model itself, built and run on its own, ends where the block ends (after its
          // final norm with pre-norm).
          const Mat model = model_stream(in);
          check_close(pre && has_norm ? s.final_out : s.out, model, 1e-5f);
          CHECK(s.final_out.size() == (pre && has_norm ? T * D : 0));
        }
}

TEST_CASE("block stages: pre and post differ as defined", "[block_stages]") {
  const BlockStages pre = transformer_block_stages(block_input("rmsnorm", "pre", "relu"));
  const BlockStages post = transformer_block_stages(block_input("rmsnorm", "post", "relu"));
  // Same weights, same x; pre normalises before attention, post after the sum.
  check_close(pre.x, post.x, 0.0f);
  CHECK((pre.attn_out - post.attn_out).cwiseAbs().maxCoeff() > 1e-3f);
  // post-norm: the stream after each sublayer has rows of mean square 1 (RMSNorm's weight is 1).
  const Eigen::VectorXf ms = post.out.array().square().rowwise().mean();
  CHECK((ms.array() - 1.0f).abs().maxCoeff() < 1e-3f);
  // pre-norm: norm1 is the normalised x itself, and the stream is never normalised.
  const Eigen::VectorXf ms1 = pre.norm1.array().square().rowwise().mean();
  CHECK((ms1.array() - 1.0f).abs().maxCoeff() < 1e-3f);
  const Eigen::VectorXf ms_out = pre.out.array().square().rowwise().mean();
  CHECK((ms_out.array() - 1.0f).abs().maxCoeff() > 1e-2f);
}

TEST_CASE("block stages: a given matrix is the block's input as it is", "[block_stages]") {
  BlockStagesInput in = block_input("layernorm", "pre", "gelu");
  const BlockStages from_ids = transformer_block_stages(in);
  in.ids.clear();
  in.x = from_ids.x;
  const BlockStages given = transformer_block_stages(in);
  check_close(given.out, from_ids.out, 0.0f);
  check_close(given.final_out, from_ids.final_out, 0.0f);
}

TEST_CASE("block stages: the RoPE pair keeps its norm and turns by pos / 10000^(2i/Dh)",
          "[block_stages]") {
  for (int pair : {0, 1}) {
    BlockStagesInput in = block_input("none", "pre", "none", "rope", 2);
    in.rope_pair = pair;
    in.rope_head = 3;
    const BlockStages s = transformer_block_stages(in);
    REQUIRE(s.rope);
    const BlockStages::RopePair& r = *s.rope;
    CHECK(r.kv_head == 1);  // query head 3 of 4 reads K/V head 3 / (4 / 2)
    REQUIRE(r.angles.size() == 6);
    const int Dh = 4;
    for (int p = 0; p < 6; ++p) {
      CAPTURE(pair, p);
      const double want = p / std::pow(10000.0, 2.0 * pair / Dh);
      CHECK(std::abs(r.angles[size_t(p)] - want) < 1e-5 * (1 + want));
      for (const auto* m : {&r.q_before, &r.k_before}) {
        const Mat& before = *m;
        const Mat& after = m == &r.q_before ? r.q_after : r.k_after;
        CHECK(std::abs(before.row(p).norm() - after.row(p).norm()) < 1e-5f);
        // after = R(angle) before
        const double c = std::cos(want), sn = std::sin(want);
        const double x0 = before(p, 0), x1 = before(p, 1);
        CHECK(std::abs(after(p, 0) - (x0 * c - x1 * sn)) < 1e-5);
        CHECK(std::abs(after(p, 1) - (x0 * sn + x1 * c)) < 1e-5);
      }
    }
    // The rotated pair is what the scores saw: the q stage's columns.
    check_close(r.q_after, s.q.middleCols(3 * Dh + 2 * pair, 2), 0.0f);
    check_close(r.k_after, s.k.middleCols(1 * Dh + 2 * pair, 2), 0.0f);
  }
  CHECK_FALSE(transformer_block_stages(block_input("none", "pre", "none")).rope);
}

TEST_CASE("block stages: ALiBi slopes 2^(-8(h+1)/H) and one bias matrix per head",
          "[block_stages]") {
  const BlockStages s = transformer_block_stages(block_input("none", "pre", "none", "alibi"));
  const int H = 4, T = 6;
  REQUIRE(s.alibi_slopes.size() == size_t(H));
  REQUIRE(s.alibi_bias.rows() == H * T);
  REQUIRE(s.alibi_bias.cols() == T);
  for (int h = 0; h < H; ++h) {
    const double m = std::pow(2.0, -8.0 * (h + 1) / H);
    CHECK(std::abs(s.alibi_slopes[size_t(h)] - m) < 1e-7);
    for (int i = 0; i < T; ++i)
      for (int j = 0; j <= i; ++j)
        CHECK(std::abs(s.alibi_bias(h * T + i, j) + m * (i - j)) < 1e-6);
  }
  CHECK(transformer_block_stages(block_input("none", "pre", "none")).alibi_bias.size() == 0);
}

TEST_CASE("block stages: bad values throw naming their key", "[block_stages]") {
  const auto run = [](BlockStagesInput in) { return [in] { transformer_block_stages(in); }; };
  // An enum's unknown name is refused as it is read, by the key's row.
  check_error([] { block_input("batchnorm", "pre", "swiglu"); }, ErrorKind::Config, "norm",
              "batchnorm");
  check_error([] { block_input("rmsnorm", "sideways", "swiglu"); }, ErrorKind::Config,
              "norm_position", "sideways");
  check_error([] { block_input("rmsnorm", "pre", "tanh"); }, ErrorKind::Config, "ffn", "tanh");
  check_error([] { block_input("rmsnorm", "pre", "relu", "fourier"); }, ErrorKind::Config,
              "positions", "fourier");
  BlockStagesInput in = block_input("rmsnorm", "pre", "relu", "rope", 3);
  check_error(run(in), ErrorKind::Config, "kv_heads", "3");
  in = block_input("rmsnorm", "pre", "relu");
  in.config.model.ffn_mult = 9;
  check_error(run(in), ErrorKind::Config, "ffn_mult", "9");
  in = block_input("rmsnorm", "pre", "relu");
  in.config.model.d_model = 15;
  check_error(run(in), ErrorKind::Config, "d_model", "15");
  in = block_input("none", "pre", "none", "rope");
  in.rope_pair = 2;  // Dh 4: pairs 0 and 1
  check_error(run(in), ErrorKind::Input, "", "ropePair (2)");
  in = block_input("none", "pre", "none");
  in.ids = {1, 2, 99};
  check_error(run(in), ErrorKind::Input, "", "99");
  in.ids.assign(7, 1);  // seq_len 6
  check_error(run(in), ErrorKind::Input, "", "7 tokens");
}
