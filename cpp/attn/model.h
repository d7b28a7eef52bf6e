// TinyAttentionLM: token embedding + sinusoidal positions -> multi-head attention -> LM head.
// The model knows nothing of training, I/O or UI.
#pragma once

#include "attn/embedding.h"
#include "attn/linear.h"
#include "attn/multihead.h"
#include "attn/rng.h"
#include "attn/tensor.h"

namespace attn {

struct ModelConfig {
  int vocab_size = 64;          // V
  int d_model = 32;             // D
  int n_heads = 4;              // H
  int max_context_length = 12;  // C
  float attn_dropout = 0.0f;
  float out_dropout = 0.0f;
  // Throws an Error of kind Config naming the first bad value (key: the JS config key).
  void validate() const;
};

// A parameter's PyTorch state-dict name and shape.
struct ParamSpec {
  std::string name;            // e.g. "attn.qkv_proj.weight"
  std::vector<int64_t> shape;  // (out, in) for a weight, (out) for a bias
};

// The state dict of a model with config c (the shapes depend on V and D only), in the PyTorch
// module's order. The one list of parameter names: parameters() and the weights file use it.
std::vector<ParamSpec> state_dict_specs(const ModelConfig& c);

class TinyAttentionLM {
 public:
  // Activations and gradients for one (B,T); reusing it for the same (B,T) allocates nothing.
  struct State {
    int B = 0, T = 0;
    Mat x;          // (N,D) token_emb(ids) + pe[:T]
    Mat a;          // (N,D) attention output
    Mat logits;     // (N,V)
    Mat dlogits;    // (N,V) filled by the loss, read by backward
    Mat da, dx;     // (N,D) backward workspaces
    MultiHeadSelfAttention::State attn;
  };

  // Init order as the PyTorch module: token_emb, attn.qkv_proj, attn.out_proj, lm_head.
  TinyAttentionLM(const ModelConfig& config, uint64_t seed);

  // ids (B,T) row-major -> s.logits (B*T,V); attention weights in s.attn.weights() (B,H,T,T).
  // Throws on ids outside [0, V) or T outside [1, C]. Dropout only when training.
  void forward(const int32_t* ids, int B, int T, bool training, Rng& rng, State& s);

  // Reads s.dlogits (B*T,V); overwrites every parameter gradient.
  void backward(const int32_t* ids, State& s);

  // A loss that selects one row: the cross-entropy of the prediction at position query of one
  // sequence ids (T) for target, alone, through forward (eval mode) and backward. Afterwards s
  // holds the activations and their gradients for this loss (every head's dweights and dscores
  // too when s.attn.inspect is set) and every parameter gradient is this loss's. Returns the
  // loss. The Backward panel reads one head's row from s (Trainer::row_backward); the self-test
  // checks these gradients against finite differences.
  float position_loss_backward(const int32_t* ids, int T, int query, int target, State& s);

  // Every parameter with its state-dict name, in the order of state_dict_specs(config).
  std::vector<ParamRef> parameters();

  ModelConfig config;
  TokenEmbedding token_emb;               // token_emb.embedding.weight (V,D)
  SinusoidalPositionalEmbedding pos_emb;  // buffer (C,D), not a parameter
  MultiHeadSelfAttention attn;            // attn.qkv_proj.*, attn.out_proj.*
  Linear lm_head;                         // lm_head.weight (V,D), lm_head.bias (V)

 private:
  TinyAttentionLM(const ModelConfig& config, Rng&& rng);
};

}  // namespace attn
