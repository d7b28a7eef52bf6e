#include "attn/teach/block_stages.h"

#include "attn/base/error.h"
#include "attn/nn/positions.h"

namespace attn {

namespace {

// Columns (T, 2) of pair i of the head whose block starts at column offset.
Mat pair_cols(const Mat& m, Eigen::Index offset, int pair) {
  return m.middleCols(offset + 2 * Eigen::Index(pair), 2);
}

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
  const bool norm = mc.norm != NormKind::None, ffn = mc.ffn != FfnKind::None;
  const bool pre = mc.norm_position == NormPosition::Pre;

  MultiHeadSelfAttention& attn = model.layers.front();
  MultiHeadSelfAttention::State as;
  const auto run_attn = [&](const Mat& in) {
    st.attn_out.resize(T, D);
    attn.forward(in, 1, T, as, st.attn_out);
  };
  FeedForward::State fs;
  const auto run_ffn = [&](const Mat& in) {
    st.ffn_out.resize(T, D);
    model.ffns.front().forward(in, fs, st.ffn_out);
    if (mc.ffn == FfnKind::SwiGLU) st.ffn_gate = fs.gate;
    st.ffn_up = fs.up;
    st.ffn_hidden = fs.hidden;
  };
  Norm::State ns1, ns2;
  const auto run_norm = [&](const Norm& n, Norm::State& s, const Mat& in, Mat& out) {
    out.resize(T, D);
    n.forward(in, s, out);
  };

  const Mat* attn_in = &st.x;
  if (pre) {
    if (norm) run_norm(model.attn_norms.front(), ns1, st.x, st.norm1);
    if (norm) attn_in = &st.norm1;
    run_attn(*attn_in);
    st.sum1 = st.x + st.attn_out;
    st.out = st.sum1;
    if (ffn) {
      if (norm) run_norm(model.ffn_norms.front(), ns2, st.sum1, st.norm2);
      run_ffn(norm ? st.norm2 : st.sum1);
      st.sum2 = st.sum1 + st.ffn_out;
      st.out = st.sum2;
    }
  } else {
    run_attn(st.x);
    st.sum1 = st.x + st.attn_out;
    if (norm) run_norm(model.attn_norms.front(), ns1, st.sum1, st.norm1);
    const Mat& h1 = norm ? st.norm1 : st.sum1;
    st.out = h1;
    if (ffn) {
      run_ffn(h1);
      st.sum2 = h1 + st.ffn_out;
      if (norm) run_norm(model.ffn_norms.front(), ns2, st.sum2, st.norm2);
      st.out = norm ? st.norm2 : st.sum2;
    }
  }
  // The final norm belongs to the model, not the block (lm_head's input).
  if (pre && norm) run_norm(*model.final_norm, ns1, st.out, st.final_out);

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
    attn.qkv_proj.forward(*attn_in, proj);
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
