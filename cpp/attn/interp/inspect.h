// Look inside a trained model: the logit lens, direct logit attribution, activation
// patching and the QK/OV circuits of every head, as TransformerLens teaches them, computed by the
// model's own layers (through ForwardHooks, model.h) in eval mode for one sequence ids (T).
//
// The model is used as it stands, with its interventions: a head that is switched off
// (head_off, the Trainer's ablation) writes zero, so its attribution is 0 and patching it
// changes nothing; scale_scores and the mask apply as in every forward. The circuits read the
// weights alone and ignore the ablation.
//
// Answers: answers[t] is the token wanted at position t (what the model should predict next),
// kIgnoreIndex where there is none (NaN in the outputs that need one).
// Bad arguments (a token outside [0, V), answers or a corrupted input of another length, a
// position, layer or head out of range) throw an Error of kind Input with one sentence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/base/tensor.h"
#include "attn/model/model.h"

namespace attn {

// ---- 1. Logit lens ----
// The residual stream after the embedding (row 0) and after each layer l (row l + 1), each
// decoded as the end of the model decodes its last one: the final norm (when the model has one,
// with its own statistics of that stream) then lm_head, then softmax. Row L is the model's own
// prediction. Needs the residual stream (residual true): without it a layer's output replaces
// its input, and only the last one is ever decoded, so applies is false and reason says so.
struct LogitLens {
  bool applies = false;
  std::string reason;  // one sentence when applies is false, else empty
  IntMat top_token;    // (L+1,T) the most probable token
  Mat top_prob;        // (L+1,T) its probability
  Mat answer_prob;     // (L+1,T) the answer's probability (NaN where there is no answer)
};
LogitLens logit_lens(TinyAttentionLM& model, const int32_t* ids, int T, const int32_t* answers);

// ---- 2. Direct logit attribution ----
// At each position t with answer a, the direction d = e_a - (1/V) 1 over the logits: the
// total is logit[a] - mean logit. The final stream is a sum (embedding + every layer's
// attention and FFN output), and with the final norm's statistics frozen at the clean run's
// (divide by that position's rms (RMSNorm) or std (LayerNorm, after subtracting each part's own
// mean), multiply by the weight) every part goes linearly through lm_head; its share is that
// part's logits dotted with d. Head h of layer l: its output merged_h through its columns of
// out_proj (without the bias). The parts add up to total exactly (up to float rounding):
//   total = embed + sum(heads) + sum(ffn) + bias.
// Needs the residual stream with the norms before each sublayer: without the stream, or with
// norms after each sum (post-norm), the last stream is no sum of the parts, so applies is false.
struct Attribution {
  bool applies = false;
  std::string reason;  // one sentence when applies is false
  Mat heads;           // (L*H,T), row g = l*H + h
  RowVec embed;        // (T) token embedding + positions
  Mat ffn;             // (L,T) each layer's FFN output (with its biases); (0,T) without FFNs
  // (T) every bias that is no head's and no FFN's: the out_proj biases, the final norm's bias
  // (LayerNorm), and lm_head's bias b[a] - mean b.
  RowVec bias;
  RowVec total;        // (T) logit[a] - mean logit of the model's own logits
};
Attribution direct_attribution(TinyAttentionLM& model, const int32_t* ids, int T,
                               const int32_t* answers);

// ---- 3. Activation patching ----
// Runs the corrupted input with one activation taken from the clean run, for every site:
//   resid(l, t):     the residual stream entering layer l (l = L: after the last layer, before
//                    the final norm) at position t; without the residual stream, layer l's input;
//   heads(g, t):     head g = l*H + h's output (merged, before out_proj) at position t;
//   heads_all(g):    head g's output at every position.
// The metric at the answer position p: logit[answer_clean] - logit[answer_corrupt] when the two
// differ, else logit[answer_clean] - mean logit (logit_diff false). Each patched run's metric m
// is reported normalised, (m - metric_corrupt) / (metric_clean - metric_corrupt): 0 = as the
// corrupted run, 1 = as the clean run (NaN when the two runs' metrics are equal). Patching
// resid(L, p) gives exactly 1. Every run is batched (a few forwards in all).
struct PatchingOptions {
  int position = -1;        // p; -1: the last position t with answers[t] set (else T - 1)
  int answer_clean = -1;    // -1: answers[p], or the clean run's top token when unset
  int answer_corrupt = -1;  // -1: the corrupted run's top token at p
};
struct Patching {
  int position = 0, answer_clean = 0, answer_corrupt = 0;
  bool logit_diff = true;  // the metric's kind, as above
  float metric_clean = 0.0f, metric_corrupt = 0.0f;
  Mat resid;         // (L+1,T)
  Mat heads;         // (L*H,T)
  RowVec heads_all;  // (L*H)
};
// answers may be nullptr (no answers). corrupted has the same length T as clean.
Patching activation_patching(TinyAttentionLM& model, const int32_t* clean,
                             const int32_t* corrupted, int T, const int32_t* answers,
                             const PatchingOptions& options = {});

// The default corrupted input for the induction task: ids with the last token of the repeated
// segment's first occurrence (find_repeat, tasks.h) replaced by the smallest token that is not
// in the sequence (or the next token mod V when every token is). At position, the last of the
// second occurrence whose answer the first occurrence sets, the clean answer is the replaced
// token and the corrupted one its replacement. No repeat: an Error of kind Input.
struct Corruption {
  std::vector<int32_t> ids;  // (T)
  int changed = 0;           // the index of the replaced token
  int position = 0, answer_clean = 0, answer_corrupt = 0;
};
Corruption induction_corruption(const int32_t* ids, int T, int vocab_size);

// ---- 4. QK and OV circuits ----
// For head h of layer l, one-layer paths from the token embedding E (V,D) to the unembedding
// U = diag(w) lm_head.weight^T (D,V), w the final norm's weight (1 without one):
//   qk = E W_QK^h E^T (V,V): row i, column j is the score of query token i on key token j;
//   ov = E W_OV^h U   (V,V): row i is what the head, attending to token i, adds to the logits;
// with W_QK^h and W_OV^h as circuits.h (qk_circuit, ov_circuit; with grouped K/V the head's
// K/V head). Biases, positions, the score scale and the norms before the sublayers are left
// out. copying = copying_score(ov).
struct HeadCircuit {
  Mat qk, ov;
  float copying;
};
HeadCircuit head_circuit(const TinyAttentionLM& model, int layer, int head);

// The share of positive eigenvalue mass of a square matrix: sum of max(Re lambda, 0) over sum
// of |lambda| (0 for a zero matrix). 1: the matrix maps every token onto itself with a positive
// weight (a copying head); 0: none. Eigen's EigenSolver, in double.
float copying_score(ConstMatRef m);

// ---- Everything in one call ----
struct InspectRequest {
  std::vector<int32_t> ids;        // (T) the clean input
  std::vector<int32_t> answers;    // (T) or empty: the clean run's top token at every position
  std::vector<int32_t> corrupted;  // (T) or empty: no patching
  PatchingOptions patching;
};
struct Inspection {
  std::vector<int32_t> answers;  // (T) the answers used (the request's, or the top tokens)
  LogitLens lens;
  Attribution attribution;
  bool patched = false;  // patching holds results (a corrupted input was given)
  Patching patching;
  std::vector<HeadCircuit> circuits;  // (L*H), g = l*H + h
};
Inspection inspect(TinyAttentionLM& model, const InspectRequest& request);

}  // namespace attn
