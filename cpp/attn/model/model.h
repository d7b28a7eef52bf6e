// TinyAttentionLM, the family `lm` behind the model seam (family.h): token embedding + sinusoidal positions -> n_layers multi-head attention layers
// (each added to the residual stream with `residual`, else replacing it) -> LM head. With the
// defaults (1 layer, no residual) it is the curriculum's model, number for number.
// The model knows nothing of training, I/O or UI.
#pragma once

#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "attn/base/config_row.h"
#include "attn/base/rng.h"
#include "attn/base/tensor.h"
#include "attn/model/family.h"
#include "attn/nn/embedding.h"
#include "attn/nn/ffn.h"
#include "attn/nn/linear.h"
#include "attn/nn/multihead.h"
#include "attn/nn/norm.h"
#include "attn/nn/report.h"

namespace attn {

// The largest n_layers a model may have.
constexpr int kMaxLayers = 4;
// The largest attention window and stride.
constexpr int kMaxPatternSize = 4096;

// How the model knows positions: a fixed table added to the embedding (sinusoidal), a trained one
// (learned), a rotation of q and k (rope), a bias on the scores (alibi), or nothing (none).
enum class PositionKind { Sinusoidal, Learned, Rope, Alibi, None };
inline constexpr const char* kPositionKindNames[] = {"sinusoidal", "learned", "rope", "alibi",
                                                     "none"};
inline constexpr EnumNames kPositionKinds = {"positions", ErrorKind::Config, "positions",
                                             "PositionKind", kPositionKindNames,
                                             int(std::size(kPositionKindNames))};
// A name of kPositionKinds; anything else throws an Error of kind Config on key "positions".
PositionKind parse_position_kind(const std::string& name);
const char* position_kind_name(PositionKind kind);

// Where the block's norms sit: before each sublayer (pre, with a final norm) or after each sum.
enum class NormPosition { Pre, Post };
inline constexpr const char* kNormPositionNames[] = {"pre", "post"};
inline constexpr EnumNames kNormPositions = {"position", ErrorKind::Config, "norm_position",
                                             "NormPosition", kNormPositionNames,
                                             int(std::size(kNormPositionNames))};
// A name of kNormPositions; anything else throws an Error of kind Config on key "norm_position".
NormPosition parse_norm_position(const std::string& name);
const char* norm_position_name(NormPosition p);

// What the model learns: the next token from the left (causal, a GPT) or the selected tokens of
// a masked sequence from both sides (mlm, BERT's masked language modelling).
enum class Objective { Causal, Mlm };
inline constexpr const char* kObjectiveNames[] = {"causal", "mlm"};
inline constexpr EnumNames kObjectives = {"objective", ErrorKind::Config, "objective", "ObjectiveKind",
                                          kObjectiveNames, int(std::size(kObjectiveNames))};
// A name of kObjectives; anything else throws an Error of kind Config on key "objective".
Objective parse_objective(const std::string& name);
const char* objective_name(Objective o);

// Which keys each query sees: all that the objective allows (full), the last `window` ones
// (window), or those plus every position that is a multiple of `stride` (strided).
enum class AttentionKind { Full, Window, Strided };
inline constexpr const char* kAttentionKindNames[] = {"full", "window", "strided"};
inline constexpr EnumNames kAttentionKinds = {"attention", ErrorKind::Config, "attention",
                                              "AttentionKind", kAttentionKindNames,
                                              int(std::size(kAttentionKindNames))};
// A name of kAttentionKinds; anything else throws an Error of kind Config on key "attention".
AttentionKind parse_attention_kind(const std::string& name);
const char* attention_kind_name(AttentionKind kind);

// Which kind of model: an index into the seam's kFamilyNames (family.h), the one list of the
// families (the first, 0, is `lm`: a language model over token ids, causal or masked). Every
// config key says which families it applies to (ConfigKey::families).
enum class ModelFamily : int {};
// A family's name, as the seam (family.h) knows it.
inline const char* family_name(ModelFamily f) { return kFamilyNames[int(f)]; }

// The model's settings; its config keys are model_config_keys(), one row per member (bounds and
// choices there, defaults here).
struct ModelConfig {
  int vocab_size = 64;          // V
  int d_model = 32;             // D
  int n_heads = 4;              // H
  int max_context_length = 12;  // C
  float attn_dropout = 0.0f;
  float out_dropout = 0.0f;
  int n_layers = 1;       // L, in [1, kMaxLayers]
  bool residual = false;  // x = x + attn_l(x) (true) or x = attn_l(x) (false)
  // The block; every default keeps the curriculum's model. kv_heads 0 means n_heads.
  int kv_heads = 0;
  PositionKind positions = PositionKind::Sinusoidal;
  NormKind norm = NormKind::None;
  NormPosition norm_position = NormPosition::Pre;
  FfnKind ffn = FfnKind::None;
  float ffn_mult = 4.0f;  // the FFN's hidden width is floor(ffn_mult * D) (ffn_hidden_width)
  // The token embedding's init: N(0, emb_init_std^2). Only the init; not in a weights file.
  float emb_init_std = 0.02f;
  // mlm: bidirectional attention, and the last id (vocab_size - 1) is [MASK]: vocab_size counts
  // it (a task of V ids makes a model of V + 1).
  Objective objective = Objective::Causal;
  AttentionKind attention = AttentionKind::Full;
  int window = 4;  // W: keys a window holds, the query's own included (window, strided)
  int stride = 4;  // S: strided keys at the positions that are multiples of S (strided)
  bool differential = false;  // differential attention (AttentionOptions::differential)
  ModelFamily family{};  // kFamilyNames[0], lm
  // The LM head is the token embedding's transpose (one matrix, no head bias); every Linear has
  // a bias; the learned position table's init N(0, pos_init_std^2) (only the init).
  bool tie_embeddings = false;
  bool bias = true;
  float pos_init_std = 0.02f;
  // K/V heads with the default resolved.
  int kv_heads_resolved() const { return kv_heads > 0 ? kv_heads : n_heads; }
  // The [MASK] id of an mlm model (vocab_size - 1); -1 for a causal one.
  int mask_id() const { return objective == Objective::Mlm ? vocab_size - 1 : -1; }
  // The ids that are tokens of the task or the text: vocab_size, but [MASK].
  int real_vocab_size() const { return objective == Objective::Mlm ? vocab_size - 1 : vocab_size; }
  // Which keys each query sees, as the layers apply it.
  MaskPattern mask_pattern() const;
  // Every key a weights file keeps only for a block model (InWeights Block or Changed) at its
  // default: today's names, file and metadata.
  bool legacy() const;
  // Checks each key on its row (model_config_keys()), then the rules across keys; throws an Error
  // of kind Config keyed by the config key, the message naming keys as namer spells them
  // (nullptr: snake_case).
  void validate(KeyNamer namer = nullptr) const;
};

// The model's config keys, one row per member of ModelConfig, in its order: the trainer's
// schema (train/config.h) composes them with the training's and the task's. In a ModelConfig the
// row max_seq_len holds the model's C (max_context_length), and vocab_size counts [MASK].
const std::vector<ConfigKey>& model_config_keys();

// A parameter's PyTorch state-dict name and shape (nn/report.h).
using ParamSpec = TensorSpec;

// The state dict of a model with config c, in the PyTorch module's order (= init order = file
// order): TinyAttentionLM::report's tensors, each named by its module: token_emb, pos_emb
// (learned), per layer attn_norm, qkv_proj, out_proj, ffn_norm, ffn, then final_norm and lm_head
// (differential: each layer's diff_lambda (H) first, a parameter of the layer itself, which
// PyTorch lists before its submodules'). The weights file reads it. Layer l is "attn." for the
// curriculum's one-layer model and "layers.<l>." otherwise (a torch.nn.ModuleList named layers;
// always for a block model): layer_prefix(c, l).
std::vector<ParamSpec> state_dict_specs(const ModelConfig& c);
std::string layer_prefix(const ModelConfig& c, int layer);

// The block's topology, written once: a layer is a short list of steps on its residual stream a
// (N,D), each reading and writing one of three slots: the stream, the next sublayer's input (a
// pre-norm's output) or the sublayer's output y (which an Add adds to the stream).
enum class BlockOp { Norm1, Attention, Norm2, Ffn, Add };
enum class BlockSlot { Stream, Input, Output };
struct BlockStep {
  BlockOp op;
  BlockSlot in, out;  // Add: in Output, out Stream (a = a + y)
};
struct BlockSteps {
  BlockStep steps[6];
  int size = 0;
  const BlockStep* begin() const { return steps; }
  const BlockStep* end() const { return steps + size; }
};
// The steps of a layer of config c, in order (the norms and the FFN only when c has them):
//   no residual: a = attn(a)           (Attention Stream -> Stream)
//   pre:  a = a + attn(norm1(a)); a = a + ffn(norm2(a))
//   post: a = norm1(a + attn(a)); a = norm2(a + ffn(a))
// (a residual layer without norms or FFN is pre's and post's case a = a + attn(a)). The forward
// (layer_forward), the backward (layer_backward) and the block view (teach/block_stages.cpp,
// through ForwardHooks::block_step) all run this table.
BlockSteps block_steps(const ModelConfig& c);

// Hooks into TinyAttentionLM::forward, as PyTorch's forward hooks: each sees (and may change) one
// activation of the batch, (N,D) row-major, before the model goes on with it. inspect.h reads the
// residual stream and the heads' outputs through them, and patches them. The defaults do nothing.
struct ForwardHooks {
  virtual ~ForwardHooks() = default;
  // The residual stream a as it enters layer l (for l = L: after the last layer, before the final
  // norm and lm_head). Without the residual stream, a is layer l's input (l = L: lm_head's).
  virtual void stream(int /*l*/, Mat& /*a*/) {}
  // Layer l's attention output y = out_proj(merged) before it joins the stream; st holds the
  // layer's cache, every head's output in st.merged (N,D), head h at columns [h Dh, (h+1) Dh).
  // A hook that changes st.merged must recompute y (the layer's out_proj.forward(st.merged, y)).
  virtual void attention(int /*l*/, MultiHeadSelfAttention::State& /*st*/, MatRef /*y*/) {}
  // Layer l's FFN output (with its down bias) before it joins the stream (models with an FFN).
  virtual void ffn(int /*l*/, MatRef /*y*/) {}
  // After each step of layer l (block_steps), the slot it wrote: read only.
  virtual void block_step(int /*l*/, const BlockStep& /*step*/, const Mat& /*out*/) {}
};

class TinyAttentionLM : public Model {
 public:
  // Activations and gradients for one (B,T); reusing it for the same (B,T) and model depth
  // allocates nothing. Not copyable (attn refers into layers). From ModelState: B, T, logits
  // (N,V), dlogits (N,V, filled by the loss, read by backward), aux (none), and the flags
  // inspect (set before forward() to inspect heads, MultiHeadSelfAttention::State::inspect, in
  // every layer) and tiled (run every layer's attention tile by tile where it can,
  // MultiHeadSelfAttention::State::tiled).
  struct State : ModelState {
    State();
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    Mat x;          // (N,D) token_emb(ids) + pe[:T], the input of layer 0
    Mat a;          // (N,D) the residual stream after the last layer: lm_head's input
    Mat y;          // (N,D) one layer's attention output before it joins the stream (residual)
    Mat da;         // (N,D) dL/da
    Mat dx;         // (N,D) dL/dx, the gradient that reaches the embeddings
    Mat dstream;    // (N,D) backward workspace: one layer's dL/d(its input) through attention
    Mat dhead;      // (V,D) tie_embeddings: the head's share of dL/d(the shared matrix)
    // The block's caches, per layer (sized L by forward; empty parts when the model has no norm
    // or FFN): the norms' and the FFN's states, and the pre-norm inputs of attention and FFN.
    struct Block {
      Norm::State norm1, norm2;
      FeedForward::State ffn;
      Mat attn_in, ffn_in;
    };
    std::vector<Block> blocks;
    Norm::State final_norm;
    // Layer l's forward cache and backward workspace; size L after a forward. Layer l's input is
    // layers[l].x, its weights layers[l].weights() (B,H,T,T).
    std::vector<MultiHeadSelfAttention::State> layers;
    MultiHeadSelfAttention::State& attn;  // layers[0], the one layer of the curriculum's model
    // Every layer's attention weights, stacked layer-major: (L*B*H*T,T) = (L,B,H,T,T). For one
    // layer it is layers[0].weights().
    void stacked_weights(Mat& out) const;
  };

  // Init order as the PyTorch module: token_emb, pos_emb (learned), then per layer qkv_proj,
  // out_proj and the FFN, then lm_head (norms draw nothing). Not copyable (attn refers into layers).
  TinyAttentionLM(const ModelConfig& config, uint64_t seed);
  TinyAttentionLM(const TinyAttentionLM&) = delete;
  TinyAttentionLM& operator=(const TinyAttentionLM&) = delete;

  // ids (B,T) row-major -> s.logits (B*T,V); layer l's attention weights in
  // s.layers[l].weights() (B,H,T,T).
  // Throws on ids outside [0, V) or T outside [1, C]. Dropout only when training, drawn from
  // rng. hooks, when given, are called as ForwardHooks describes.
  void forward(const int32_t* ids, int B, int T, bool training, Rng& rng, State& s,
               ForwardHooks* hooks = nullptr);
  // The same in eval mode: no dropout, so no generator. Every read-out runs this one.
  void forward(const int32_t* ids, int B, int T, State& s, ForwardHooks* hooks = nullptr);

  // Reads s.dlogits (B*T,V); overwrites every parameter gradient.
  void backward(const int32_t* ids, State& s);

  // A loss that selects one row: the cross-entropy of the prediction at position query of one
  // sequence ids (T) for target, alone, through forward (eval mode) and backward. Afterwards s
  // holds the activations and their gradients for this loss (every head's dweights and dscores
  // in every layer too when s.inspect is set) and every parameter gradient is this loss's.
  // Returns the loss. The Backward panel reads one head's row from s (row_backward, readouts.h);
  // the self-test checks these gradients against finite differences.
  float position_loss_backward(const int32_t* ids, int T, int query, int target, State& s);
  float position_loss_backward(const int32_t* ids, int T, int query, int target,
                               ModelState& s) override;

  // The seam (family.h), for a batch of token ids: the functions above on batch.inputs.
  const char* family() const override { return "lm"; }
  const ModelConfig& model_config() const override { return config; }
  std::unique_ptr<ModelState> new_state() const override;
  void forward(const Batch& batch, bool training, Rng& rng, ModelState& s) override;
  void forward(const Batch& batch, ModelState& s) override;
  void backward(const Batch& batch, ModelState& s) override;

  // Every parameter with its state-dict name, in the order of state_dict_specs(config).
  std::vector<ParamRef> parameters() override;

  // The model of config c for a batch (B,T), from its modules' reports (nn/report.h): the state
  // dict (state_dict_specs), the parameter count, the activations, a training step's products.
  static ModuleReport report(const ModelConfig& c, int B, int T);

  // The floats of every parameter (the sum of the state dict's tensor sizes), and those one
  // forward uses. They differ only for a model that routes each token through some of its weights
  // (experts); for this model they are equal.
  int64_t param_count() const override;
  int64_t active_param_count() const override { return param_count(); }

  ModelConfig config;
  BlockSteps steps;                       // block_steps(config): every layer's
  TokenEmbedding token_emb;               // token_emb.embedding.weight (V,D)
  SinusoidalPositionalEmbedding pos_emb;  // buffer (C,D), not a parameter
  // Learned positions only: pos_emb.weight (C,D), drawn right after token_emb.
  std::optional<TokenEmbedding> learned_pos;
  // Per layer with ffn != none: layers.<l>.ffn.*. Declared before layers, whose construction
  // fills it: each layer's FFN draws right after its attention.
  std::vector<FeedForward> ffns;
  // L layers: layer_prefix(config, l) + qkv_proj.*, out_proj.*. Never resized after construction.
  std::vector<MultiHeadSelfAttention> layers;
  MultiHeadSelfAttention& attn;           // layers[0], the one layer of the curriculum's model
  // Per layer with norm != none: attn_norm (norm1), and ffn_norm (norm2) when there is an FFN.
  std::vector<Norm> attn_norms, ffn_norms;
  std::optional<Norm> final_norm;         // pre-norm with a norm: final_norm.*
  // lm_head.weight (V,D), lm_head.bias (V, with bias). With tie_embeddings its weight is empty
  // and the head reads token_emb.weight, which the state dict then names lm_head.weight (as
  // safetensors.torch.save_model keeps a tied pair): head_forward and head_weight know it.
  Linear lm_head;

  // a (N,D) -> logits (N,V) = a W^T (+ b), W the head's matrix (head_weight()).
  void head_forward(ConstMatRef a, MatRef logits) const;
  // The head's (V,D) matrix: token_emb.weight when tied, else lm_head.weight.
  const Mat& head_weight() const { return config.tie_embeddings ? token_emb.weight : lm_head.weight; }

  // Global head index g = l * H + h (layer-major), as the ablation and the readouts use it.
  int n_heads_total() const override { return config.n_layers * config.n_heads; }
  // The ablation on every layer's heads (Ablation, family.h), and the frozen heads' copies:
  // with grouped K/V heads a frozen head's k and v stay put for its whole group, and a
  // differential head keeps its second query and key and its lambda too.
  void set_ablation(const Ablation& a) override;
  void hold_frozen() override;
  void restore_frozen() override;
  // The read-outs' hooks (family.h): the layers and their caches.
  int n_attention_layers() const override { return config.n_layers; }
  const MultiHeadSelfAttention& attention_layer(int l) const override;
  const MultiHeadSelfAttention::State& attention_state(const ModelState& s,
                                                       int l) const override;
  const Mat& input_gradient(const ModelState& s) const override { return own_state(s).dx; }

  // Layer l on the residual stream a (N,D), in place, with its attention given as
  // attend(in, out), (N,D) -> (N,D), out possibly aliasing in: the steps of block_steps, run by
  // forward() over (B,T), by the Decoder (decoder.h) on one new row and by the block view.
  // y (N,D) is scratch (it ends holding the last sublayer's output); bk keeps the norms' and the
  // FFN's caches and the pre-norm inputs. The final norm and lm_head are not part of it.
  template <typename Attend>
  void layer_forward(int l, Mat& a, Mat& y, State::Block& bk, Attend&& attend,
                     ForwardHooks* hooks = nullptr) const;

  // The backward of layer_forward for layer l: da (N,D) holds dL/d(the stream the layer wrote)
  // and becomes dL/d(the stream it read); reads the caches bk and st (the layer's attention) of
  // the forward; scratch (N,D) is workspace. Overwrites the layer's parameter gradients
  // (attention, norms, FFN). backward() runs it from the last layer down. The steps in reverse:
  //   no residual: a = attn(a)                       =>  da = attn'^T da
  //   pre:  =>  da += norm2'^T ffn'^T da;  da += norm1'^T attn'^T da
  //   post: =>  da = norm2'^T da; da += ffn'^T da;  da = norm1'^T da; da += attn'^T da
  void layer_backward(int l, Mat& da, Mat& scratch, State::Block& bk,
                      MultiHeadSelfAttention::State& st);

 private:
  TinyAttentionLM(const ModelConfig& config, Rng&& rng);
  // The State of a seam call, checked to be this family's; the batch, checked to be ids (B,T).
  static State& own_state(ModelState& s);
  static const State& own_state(const ModelState& s);
  void check_ids(const Batch& batch) const;
  // Parameter copies taken by hold_frozen, per layer with a frozen head (empty for the others).
  struct FrozenCopy {
    Mat qkv_w, out_w;
    RowVec qkv_b, lambda;  // lambda: differential only
  };
  std::vector<FrozenCopy> frozen_;          // (L)
  std::vector<uint8_t> heads_frozen_;       // (L*H)
  bool layer_frozen(int l) const;
  // forward() with dropout drawn from *dropout, or none when it is null (eval mode).
  void run(const int32_t* ids, int B, int T, Rng* dropout, State& s, ForwardHooks* hooks);
};

// The lm family's model behind the seam; for any other family an Error of kind Config on key
// "family" naming what needed the lm (a read-out not yet written against the seam).
TinyAttentionLM& lm_of(Model& model, const char* what);

template <typename Attend>
void TinyAttentionLM::layer_forward(int l, Mat& a, Mat& y, State::Block& bk, Attend&& attend,
                                    ForwardHooks* hooks) const {
  const size_t i = size_t(l);
  const Eigen::Index N = a.rows(), D = a.cols();
  for (const BlockStep& step : steps) {
    // The sublayer's input slot: the attention's (norm1's output) or the FFN's (norm2's).
    const bool attn_side = step.op == BlockOp::Norm1 || step.op == BlockOp::Attention;
    Mat& input = attn_side ? bk.attn_in : bk.ffn_in;
    Mat& out = step.out == BlockSlot::Stream ? a : step.out == BlockSlot::Input ? input : y;
    const Mat& in = step.in == BlockSlot::Input ? input : a;
    switch (step.op) {
      case BlockOp::Norm1:
      case BlockOp::Norm2:
        if (&out != &a) out.resize(N, D);
        if (attn_side) attn_norms[i].forward(a, bk.norm1, out);
        else ffn_norms[i].forward(a, bk.norm2, out);
        break;
      case BlockOp::Attention:
        attend(in, out);
        break;
      case BlockOp::Ffn:
        ffns[i].forward(in, bk.ffn, out);
        if (hooks) hooks->ffn(l, out);
        break;
      case BlockOp::Add:
        a += y;
        break;
    }
    if (hooks) hooks->block_step(l, step, out);
  }
}

}  // namespace attn
