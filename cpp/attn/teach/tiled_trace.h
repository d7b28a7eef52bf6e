// The block view's tiled-attention step: one head of the block (block_stages.h) computed tile by
// tile (nn/tiled_attention.h), with every row's running max and sum after each key tile, the
// final rows against the softmax the layer itself computed, and the memory of both paths.
#pragma once

#include <cstdint>

#include "attn/nn/tiled_attention.h"
#include "attn/teach/block_stages.h"

namespace attn {

struct BlockTiledTrace {
  int head = 0, kv_head = 0;  // query head h and the K/V head it reads
  int T = 0, d_head = 0;
  float scale = 0.0f, alibi_slope = 0.0f;
  TiledTrace trace;  // the head's q, k, v from the block, tile by tile
  // max |trace.weights - the layer's own softmax rows of this head|
  float max_layer_weight_difference = 0.0f;
  // Bytes of this head's attention buffers in a forward of the T rows, per path
  // (plain_attention_bytes and tiled_attention_bytes with one query tile of T rows).
  int64_t plain_bytes = 0, tiled_bytes = 0;
};

// input as for transformer_block_stages (its errors); head in [0, n_heads), tile in [1, T]:
// Errors of kind Input naming them.
BlockTiledTrace block_tiled_trace(const BlockStagesInput& input, int head, int tile,
                                  KeyNamer namer = nullptr);

}  // namespace attn
