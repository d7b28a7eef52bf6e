// One transformer block taken apart, stage by stage (the page's "The transformer block, step by
// step" view): a one-layer TinyAttentionLM built from a seed with the block's settings, run in
// eval mode on one short sequence, every intermediate kept. Every number comes from the model's
// own layers (Norm, MultiHeadSelfAttention, FeedForward, Rope, ALiBi); nothing is recomputed here.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "attn/base/tensor.h"
#include "attn/model/model.h"
#include "attn/train/trainer.h"

namespace attn {

struct BlockStagesInput {
  // The block's settings, read from the Trainer config keys: vocab_size, d_model, n_heads,
  // kv_heads, positions, max_seq_len, norm, norm_position, ffn, ffn_mult, seq_len and seed.
  // n_layers is taken as 1 and residual as true (a block always has its residual stream); the
  // other keys are validated as for a Trainer and otherwise unused.
  TrainerConfig config;
  // The input: T token ids in [0, vocab_size), embedded as the model does (token embedding plus
  // the sinusoidal or learned table when positions says so), T in [1, max context length]. Or,
  // when x is set, that (T, d_model) matrix as it is (ids are then ignored).
  std::vector<int32_t> ids;
  std::optional<Mat> x;
  // The RoPE pair drawn (positions rope only): pair rope_pair in [0, Dh/2) of query head
  // rope_head in [0, H) (and of the K/V head it reads).
  int rope_pair = 0;
  int rope_head = 0;
};

struct BlockStages {
  ModelConfig config;  // the one-layer model's config (kv_heads resolved)
  int T = 0, d_head = 0;
  // Shapes: (T, D) unless said otherwise. A stage the config leaves out is empty (0 x 0).
  //   pre:  norm1 = N1(x); attn_out = attn(norm1 | x); sum1 = x + attn_out;
  //         norm2 = N2(sum1); ffn_out = ffn(norm2 | sum1); sum2 = sum1 + ffn_out; out = sum2
  //   post: attn_out = attn(x); sum1 = x + attn_out; norm1 = N1(sum1);
  //         ffn_out = ffn(norm1 | sum1); sum2 = (norm1 | sum1) + ffn_out; norm2 = N2(sum2);
  //         out = norm2 | sum2
  // Without an FFN, sum2 is empty and out is the stream after attention (pre: sum1; post:
  // norm1 | sum1). With pre-norm and a norm, the model adds a final norm after the block
  // (final_out = final_norm(out), lm_head's input); it is not part of the block and otherwise
  // empty.
  Mat x, norm1, attn_out, sum1, norm2, ffn_out, sum2, out, final_out;
  // The attention's projections: q (T, H Dh) and k (T, KV Dh) as the scores saw them (after
  // RoPE; a differential layer's first map), v (T, KV Dh); weights (H T, T): head h's weights
  // at [h T, h T + T) (differential: the two maps' difference).
  Mat q, k, v, weights;
  // The FFN's hidden units (T, F), F = ffn_mult D: relu/gelu up = up(in) (the activation's
  // input) and hidden = act(up); swiglu gate = gate(in), up = up(in), hidden = silu(gate) * up.
  Mat ffn_gate, ffn_up, ffn_hidden;
  int ffn_width = 0;  // F, the FFN's own hidden width (0 without an FFN)

  // RoPE only: one pair of one head at every position, before and after its rotation.
  struct RopePair {
    int head = 0, kv_head = 0, pair = 0;
    std::vector<float> angles;  // (T) pos / 10000^(2 pair / Dh)
    Mat q_before, q_after, k_before, k_after;  // (T, 2): (x[2i], x[2i+1]) at each position
  };
  std::optional<RopePair> rope;
  // ALiBi only: the slopes m_h (H) and each head's bias -m_h |i - j| (H T, T), head-major.
  std::vector<float> alibi_slopes;
  Mat alibi_bias;
};

// Validates (TrainerConfig::validate with namer, so keys are named as the caller spells them;
// the input's other values throw an Error of kind Input) and runs the block.
BlockStages transformer_block_stages(const BlockStagesInput& input, KeyNamer namer = nullptr);

}  // namespace attn
