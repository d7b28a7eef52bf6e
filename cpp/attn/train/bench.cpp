#include "attn/train/bench.h"

#include "attn/kernels/kernels.h"
#include "attn/model/decoder.h"

namespace attn {

double train_step_flops(const TrainerConfig& c) {
  const double N = double(c.batch_size) * c.seq_len, D = c.d_model, V = c.vocab_size;
  const double T = c.seq_len, BH = double(c.batch_size) * c.n_heads, Dh = D / c.n_heads;
  const double KV = c.kv_heads > 0 ? c.kv_heads : c.n_heads;
  const double F = c.ffn == "none" ? 0.0 : double(c.ffn_mult) * D;  // FFN hidden width
  const double ffn_mats = c.ffn == "swiglu" ? 3 : 2;                 // gate, up, down
  const double M = c.differential ? 2 : 1;                           // q/k maps per head
  const double layer = 2 * N * D * (M * (D + KV * Dh) + KV * Dh)  // qkv_proj
                      + M * 2 * BH * T * T * Dh                    // Q K^T
                      + 2 * BH * T * T * Dh                        // weights V
                      + 2 * N * D * D                  // out_proj
                      + ffn_mats * 2 * N * D * F;      // the FFN
  const double forward = c.n_layers * layer + 2 * N * D * V;  // + lm_head
  return 3 * forward;
}

float gemm_probe(int n, int reps) {
  require(n >= 1 && n <= 4096, "gemm size (", n, ") must be in [1, 4096]");
  require(reps >= 1, "gemm reps (", reps, ") must be >= 1");
  Mat A(n, n), B(n, n), C(n, n);
  Rng rng(1);
  for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = rng.uniform() - 0.5f;
  for (Eigen::Index i = 0; i < B.size(); ++i) B.data()[i] = rng.uniform() - 0.5f;
  float checksum = 0.0f;
  for (int r = 0; r < reps; ++r) {
    matmul_nn(A, B, C);
    checksum += C(r % n, (r * 7) % n);
  }
  return checksum;
}

TrainerConfig text_preset_config() {
  TrainerConfig c;
  c.task = "text";
  c.d_model = 64;
  c.n_heads = 4;
  c.seq_len = 64;
  c.batch_size = 16;
  c.lr = 3e-3f;
  c.seed = 0;
  c.n_layers = 2;
  c.residual = true;
  c.positions = "rope";
  c.norm = "layernorm";
  c.ffn = "gelu";
  return c;
}

ModelConfig generation_bench_config() {
  ModelConfig c{60, 64, 4, 64};  // V, D, H, C
  c.n_layers = 2;
  c.residual = true;
  c.positions = PositionKind::Rope;
  c.norm = NormKind::LayerNorm;
  c.norm_position = NormPosition::Pre;
  c.ffn = FfnKind::GELU;
  return c;
}

int64_t generation_probe(TinyAttentionLM& model, int n_tokens, bool use_cache) {
  require(n_tokens >= 1 && n_tokens <= kMaxGenerateTokens, "generation tokens (", n_tokens,
          ") must be in [1, ", kMaxGenerateTokens, "]");
  Decoder decoder(model, use_cache);
  int32_t token = 0;
  int64_t checksum = 0;
  for (int i = 0; i < n_tokens; ++i) {
    const RowVec& logits = decoder.push(token);
    token = int32_t(row_argmax(logits.data(), logits.size()));
    checksum += token;
  }
  return checksum;
}

}  // namespace attn
