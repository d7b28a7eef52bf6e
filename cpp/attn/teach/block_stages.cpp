#include "attn/teach/block_stages.h"

#include "attn/base/error.h"
#include "attn/nn/positions.h"

namespace attn {

namespace {

// Columns (T, 2) of pair i of the head whose block starts at column offset.
Mat pair_cols(const Mat& m, Eigen::Index offset, int pair) {
  return m.middleCols(offset + 2 * Eigen::Index(pair), 2);
}

// Keeps each step's output as its stage: the norms', the attention's and the FFN's outputs, and
// the two sums.
struct StageRecorder : ForwardHooks {
  explicit StageRecorder(BlockStages& st) : st(st) {}
  void block_step(int, const BlockStep& step, const Mat& out) override {
    switch (step.op) {
      case BlockOp::Norm1: st.norm1 = out; break;
      case BlockOp::Attention: st.attn_out = out; break;
      case BlockOp::Norm2: st.norm2 = out; break;
      case BlockOp::Ffn: st.ffn_out = out; break;
      case BlockOp::Add: (adds++ == 0 ? st.sum1 : st.sum2) = out; break;
    }
  }
  BlockStages& st;
  int adds = 0;
};

}  // namespace

BlockStages transformer_block_stages(const BlockStagesInput& input, KeyNamer namer) {
  TrainerConfig tc = input.config;
  tc.model.n_layers = 1;
  tc.model.residual = true;
  tc.validate(namer);
  BlockStages st;
  st.config = tc.model_config();
  ModelConfig& mc = st.config;
  mc.kv_heads = mc.kv_heads_resolved();
  TinyAttentionLM model(mc, tc.training.seed);
  const int D = mc.d_model, H = mc.n_heads, KV = mc.kv_heads, C = mc.max_context_length;
  const int Dh = D / H;
  st.d_head = Dh;
  // The block's input x: the model's own embedding of the ids (its forward's s.x), or the given
  // matrix.
  TinyAttentionLM::State ms;
  if (input.x) {
    const Mat& x = *input.x;
    require(x.cols() == D, "x has ", x.cols(), " columns, expected d_model (", D, ")");
    require(x.rows() >= 1 && x.rows() <= C, "x has ", x.rows(), " rows, expected 1 to ", C);
    require(x.allFinite(), "x contains NaN or Infinity");
    st.x = x;
  } else {
    const int T = int(input.ids.size());
    require(T >= 1 && T <= C, "ids has ", T, " tokens, expected 1 to ", C);
    model.forward(input.ids.data(), 1, T, ms);  // checks the ids against V
    st.x = ms.x;
  }
  const int T = int(st.x.rows());
  st.T = T;
  // The model's own layer (layer_forward, the steps of block_steps), each step's output kept
  // through the hooks; the attention's input kept for the RoPE pair.
  MultiHeadSelfAttention& attn = model.layers.front();
  MultiHeadSelfAttention::State as;
  Mat attn_in;
  StageRecorder rec(st);
  TinyAttentionLM::State::Block bk;
  Mat a = st.x, y(T, D);
  model.layer_forward(0, a, y, bk, [&](const Mat& in, Mat& out) {
    attn_in = in;
    attn.forward(in, 1, T, as, out);
  }, &rec);
  st.out = a;
  if (mc.ffn != FfnKind::None) {
    if (model.ffns.front().gate) st.ffn_gate = bk.ffn.gate;
    st.ffn_up = bk.ffn.up;
    st.ffn_hidden = bk.ffn.hidden;
    st.ffn_width = model.ffns.front().hidden_dim;
  }
  // The final norm belongs to the model, not the block (lm_head's input).
  if (model.final_norm) {
    Norm::State ns;
    st.final_out.resize(T, D);
    model.final_norm->forward(st.out, ns, st.final_out);
  }

  // q, k (as the scores saw them: after RoPE; differential: the first map's) and v, from the
  // layer's fused projection.
  st.q = as.qkv.middleCols(attn.q_offset(0), Eigen::Index(H) * Dh);
  st.k = as.qkv.middleCols(attn.k_offset(0), Eigen::Index(KV) * Dh);
  st.v = as.qkv.middleCols(attn.v_offset(0), Eigen::Index(KV) * Dh);
  st.weights = as.weights();

  if (mc.positions == PositionKind::Rope) {
    BlockStages::RopePair rp;
    require(input.rope_head >= 0 && input.rope_head < H, "ropeHead (", input.rope_head,
            ") must be in [0, ", H - 1, "]");
    require(input.rope_pair >= 0 && input.rope_pair < Dh / 2, "ropePair (", input.rope_pair,
            ") must be in [0, ", Dh / 2 - 1, "]");
    rp.head = input.rope_head;
    rp.kv_head = attn.kv_head(rp.head);
    rp.pair = input.rope_pair;
    // Before the rotation: the projection itself, qkv_proj(attention's input).
    Mat proj(T, attn.qkv_proj.out_features);
    attn.qkv_proj.forward(attn_in, proj);
    rp.q_before = pair_cols(proj, attn.q_offset(rp.head), rp.pair);
    rp.k_before = pair_cols(proj, attn.k_offset(rp.head), rp.pair);
    rp.q_after = pair_cols(as.qkv, attn.q_offset(rp.head), rp.pair);
    rp.k_after = pair_cols(as.qkv, attn.k_offset(rp.head), rp.pair);
    for (int p = 0; p < T; ++p) rp.angles.push_back(Rope::angle(p, rp.pair, Dh));
    st.rope = std::move(rp);
  }
  if (mc.positions == PositionKind::Alibi) {
    st.alibi_slopes = attn.alibi_m;
    st.alibi_bias = Mat::Zero(Eigen::Index(H) * T, T);
    for (int h = 0; h < H; ++h)
      add_alibi_bias(st.alibi_bias.middleRows(Eigen::Index(h) * T, T), st.alibi_slopes[size_t(h)]);
  }
  return st;
}

}  // namespace attn
