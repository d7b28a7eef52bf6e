// Read-outs over a model: what the page's panels, the JS API and the CLI measure on a model as it
// stands (its weights and its teaching interventions: heads switched off, score scaling, the
// mask), in eval mode. Free functions, so a Trainer, a loaded weights file or a test model are
// read the same way; the batches they evaluate on come from a TaskData (data/task_data.h), whose
// eval_rng() gives the same batches on every call. None changes the weights; row_backward alone
// overwrites the parameter gradients. inspect.h (looking inside one sequence), circuits.h (the
// score rules) and length_eval.h (another sequence length) are read-outs too. These read the
// model through the seam (model/family.h): its forward on a batch and its read-out hooks.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/base/tensor.h"
#include "attn/data/task_data.h"
#include "attn/model/family.h"
#include "attn/model/model.h"
#include "attn/nn/head_row.h"
#include "attn/nn/multihead.h"

namespace attn {

// One sequence ids (T), T in [1, C]: weights (L*H*T,T) = (L,H,T,T), layer-major (the rows of
// global head g = l*H + h start at g*T), logits (T,V).
void sequence_attention(Model& model, const int32_t* ids, int T, Mat& weights,
                        Mat& logits);

// Mean loss and token accuracy (predictable positions only) over n_batches in [1, 1000] batches
// of data drawn from data.eval_rng() (for text, windows of the validation split); NaN for both
// when no position is predictable.
struct Evaluation {
  float loss, accuracy;
};
Evaluation evaluate(Model& model, const TaskData& data, int n_batches);

// The text task's readout: the validation loss (nats per character, over evaluate()'s windows),
// the same in bits per character (loss / ln 2), the token accuracy, and the unigram entropy of
// the training split in nats and bits (the loss of a model that only counts characters: the line
// a model that uses its context goes below). Without a corpus (another task): an Error of kind
// State.
struct TextEvaluation {
  double val_loss, val_bits_per_char, accuracy, unigram_nats, unigram_bits;
};
TextEvaluation evaluate_text(Model& model, const TaskData& data, int n_batches);

// Per head of every layer (L*H entries, global index g = l*H + h), over the first evaluation
// batch of data: the mean entropy (nats) of the attention rows, the mean of each row's largest
// weight (saturation), and the mean weight on the keys that hold the target token (over
// predictable rows; NaN with none).
struct HeadStats {
  std::vector<float> entropy, max_weight, answer_mass;
};
HeadStats attention_stats(Model& model, const TaskData& data);

// Circuits (circuits.h has the math and the conventions). Per head, global index g = l*H + h,
// over a fixed set of induction rows of data's shape (kScoreRows rows from their own generator,
// seeded from data.seed, the same on every call, whatever data's task): previous_token[g] and
// prefix_matching[g] (NaN when the shape cannot hold induction rows: T < 4 or V too small;
// previous_token then comes from random rows). composition[(l*H + h1)*H + h2] is the
// K-composition from head h1 of layer l to head h2 of layer l + 1 ((L-1)*H*H entries);
// composition_baseline is its mean for random heads of the same shapes (k_composition_baseline,
// kBaselineSamples draws; NaN for one layer, which has no pair of layers to compare).
struct HeadScores {
  std::vector<float> previous_token, prefix_matching, composition;
  float composition_baseline;
};
constexpr int kScoreRows = 64, kBaselineSamples = 200;
HeadScores head_scores(Model& model, const TaskData& data);

// One query row of one head (global index head = l*H + h), forward and backward, for the loss
// -log p(target) of the model's prediction at that position of the sequence ids (T): the
// model's own backward for that loss (Model::position_loss_backward), read out by layer
// l's head_row. Overwrites the parameter gradients (a training step recomputes them).
struct RowBackward {
  float loss;
  HeadRow row;
};
RowBackward row_backward(Model& model, const int32_t* ids, int T, int head, int query,
                         int target);

// The model's k most likely next tokens at each position of one sequence ids (T), with their
// probabilities: next_token_distribution (sampling.h) at temperature 1, the distribution the
// sampler draws from. answers (T, may be null) are the tokens wanted at each position
// (kIgnoreIndex for none).
struct Predictions {
  int k;                           // min(k, V)
  std::vector<int32_t> top;        // (T,k) most likely first; ties: the smaller id first
  std::vector<float> probs;        // (T,k) their probabilities
  std::vector<float> answer_probs; // (T) the probability of answers[t]; NaN where there is none
};
Predictions predictions(Model& model, const int32_t* ids, int T, int k,
                        const int32_t* answers);

}  // namespace attn
