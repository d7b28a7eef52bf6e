// Trainer: owns the model, Adam, the task generator, the loss history and every workspace.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attn/data/tasks.h"
#include "attn/data/text.h"
#include "attn/interp/circuits.h"
#include "attn/interp/length_eval.h"
#include "attn/model/model.h"
#include "attn/train/adam.h"
#include "attn/train/config.h"

namespace attn {

class Trainer {
 public:
  // Validates config first (TrainerConfig::validate, keys in snake_case).
  explicit Trainer(const TrainerConfig& config);
  // The text task trains on corpus (nullptr: make_corpus(default_corpus())), and the model's
  // vocab_size is the corpus's (config().vocab_size reports it; the config's own is ignored).
  // A corpus whose splits cannot hold a window of seq_len + 1 characters is an Error of kind
  // Input (check_corpus_fits). Any other task ignores corpus.
  Trainer(const TrainerConfig& config, std::shared_ptr<const TextCorpus> corpus);

  // Runs n >= 0 training steps; returns the last loss (the previous one when n = 0, NaN before
  // any step). If a loss or gradient turns non-finite, that step is not applied and a
  // RuntimeError of kind NonFinite says so; the weights stay as they were and the Trainer stays
  // usable.
  float step(int n = 1);

  // The loss the next step() will report, before it updates anything: the next batch (with
  // dropout, as training applies it) under the current weights. Changes no state; calling
  // peek_loss() then step(1) gives the same loss twice. This is the loss at step 0.
  float peek_loss();

  // Eval mode, one sequence ids (T), T in [1, seq_len]: weights (L*H*T,T) = (L,H,T,T), layer-major
  // (the rows of global head g = l*H + h start at g*T), logits (T,V).
  void attention(const int32_t* ids, int T, Mat& weights, Mat& logits);

  // Losses of every step, or of every history_stride()-th step once more than
  // kMaxHistory steps were run (the history is thinned, never grown past its cap).
  const std::vector<float>& loss_history() const { return history_; }
  // Token accuracy of the last step's batch, before its update (NaN before any step). With
  // objective mlm, every loss and accuracy is over the selected positions only (mask_for_mlm):
  // the masked-position accuracy.
  float last_accuracy() const { return last_accuracy_; }

  // Token accuracy in eval mode over n_batches fresh batches of the task. The batches come from
  // their own generator, seeded the same way on every call, so two calls see the same data and
  // training is not disturbed. For text they are windows of the validation split (training
  // batches come from the training split only).
  float eval_accuracy(int n_batches);
  int64_t history_stride() const { return history_stride_; }

  // Mean loss and token accuracy (predictable positions only) in eval mode over the same
  // n_batches batches as eval_accuracy(), under the current ablation.
  struct Evaluation {
    float loss, accuracy;
  };
  Evaluation evaluate(int n_batches);

  // The text task's readout: the validation loss (nats per character, over evaluate(n_batches)'s
  // windows), the same in bits per character (loss / ln 2), the token accuracy, and the unigram
  // entropy of the training split in nats and bits (the loss of a model that only counts
  // characters: the line a model that uses its context goes below). Another task: an Error of
  // kind State.
  struct TextEvaluation {
    double val_loss, val_bits_per_char, accuracy, unigram_nats, unigram_bits;
  };
  TextEvaluation evaluate_text(int n_batches);
  // The text task's corpus (vocab, splits); nullptr for the other tasks.
  const TextCorpus* corpus() const { return corpus_.get(); }

  // The task's sample sequence (T ids) for seed: task_sample(task, V, T, seed), and for text the
  // first T characters of the validation split whatever the seed.
  std::vector<int32_t> sample_sequence(uint64_t seed) const;

  // The live model (its weights and interventions) on its task at another length seq_len, over
  // n_batches batches of batch_size sequences from the same seed as evaluate(), so
  // evaluate_at(seq_len, n) measures what evaluate(n) does. Past max_seq_len with learned
  // positions: an Error of kind Config naming max_seq_len (evaluate_at_length, length_eval.h;
  // namer spells the key in the message). Changes no state.
  LengthEvaluation evaluate_at(int seq_len, int n_batches, KeyNamer namer = nullptr);

  // Teaching interventions on the attention layers, applied to training and to every readout.
  // Heads are indexed globally, g = l*H + h (layer-major). heads_off[g]: head h of layer l has a
  // zero output. heads_frozen[g]: its rows of layer l's qkv_proj (query, key, value) and its
  // columns of layer l's out_proj stop updating. scale_scores and mask apply to every layer; see
  // MultiHeadSelfAttention.
  struct Ablation {
    std::vector<uint8_t> heads_off, heads_frozen;  // (L*H) each; empty means none
    bool scale_scores = true;
    MaskMode mask = MaskMode::Causal;
  };
  // Throws std::invalid_argument (and changes nothing) unless heads_off and heads_frozen are empty
  // or have n_layers * n_heads entries.
  void set_ablation(const Ablation& a);
  const Ablation& ablation() const { return ablation_; }

  // Per head of every layer (L*H entries, global index g = l*H + h), over the first eval batch in
  // eval mode: the mean entropy (nats) of the attention rows, the mean of each row's largest
  // weight (saturation), and the mean weight on the keys that hold the target token (over
  // predictable rows).
  struct HeadStats {
    std::vector<float> entropy, max_weight, answer_mass;
  };
  HeadStats attention_stats();

  // One query row of one head (global index head = l*H + h), forward and backward, for the loss
  // -log p(target) of the model's prediction at that position of the sequence ids (T), in eval
  // mode: the model's own backward for that loss (TinyAttentionLM::position_loss_backward), read
  // out by layer l's head_row. Overwrites the parameter gradients (step() recomputes them).
  struct RowBackward {
    float loss;
    MultiHeadSelfAttention::HeadRow row;
  };
  RowBackward row_backward(const int32_t* ids, int T, int head, int query, int target);
  int64_t steps_done() const { return adam_.t; }

  const TrainerConfig& config() const { return config_; }
  TinyAttentionLM& model() { return model_; }
  const Batch& last_batch() const { return batch_; }

  static constexpr size_t kMaxHistory = 16384;

  // ---- Circuits: cpp/attn/interp/circuits.h has the math and the conventions. ----
  // Per head, global index g = l * H + h, in eval mode under the current ablation, over a fixed
  // set of induction rows (kScoreRows rows from their own generator, the same on every call,
  // whatever the training task): previous_token[g] and prefix_matching[g] (NaN when the config
  // cannot hold induction rows: seq_len < 4 or vocab_size too small; previous_token then comes
  // from random rows). composition[(l * H + h1) * H + h2] is the K-composition from head h1 of
  // layer l to head h2 of layer l + 1 ((L-1)*H*H entries); composition_baseline is its mean for
  // random heads of the same shapes (k_composition_baseline, kBaselineSamples draws; NaN for one
  // layer, which has no pair of layers to compare).
  struct HeadScores {
    std::vector<float> previous_token, prefix_matching, composition;
    float composition_baseline;
  };
  HeadScores head_scores();
  static constexpr int kScoreRows = 64, kBaselineSamples = 200;

  // The step of the phase change in the loss history (PhaseChangeRule's defaults), or -1 while
  // none is found; once found it stays.
  int64_t phase_change_step();

 private:
  PhaseChangeDetector phase_;
  // k_composition_baseline for heads of shape (D, Dh), drawn once per shape in the process.
  static float composition_baseline(int D, int Dh);

 private:
  void record_loss(float loss);
  // A batch of the task from rng: for text, windows of the validation or the training split;
  // with objective mlm, masked (mask_for_mlm) from the same rng.
  void draw_batch(Rng& rng, Batch& batch, bool validation);

  std::shared_ptr<const TextCorpus> corpus_;  // text task only; before config_, which reads it
  TrainerConfig config_;
  Task task_;
  TinyAttentionLM model_;
  Adam adam_;
  bool mlm_;         // objective mlm: every batch is masked (mask_for_mlm) from its own rng
  Rng data_rng_;     // batches only, so dropout cannot change the data a seed gives
  Rng dropout_rng_;  // dropout masks of training steps
  Batch batch_;
  TinyAttentionLM::State train_state_, eval_state_, row_state_;  // row_state_: row_backward()
  Batch eval_batch_;
  std::vector<float> history_;
  int64_t history_stride_ = 1;
  float last_loss_;
  float last_accuracy_;
  Ablation ablation_;
  // Parameter copies taken before Adam, per layer with a frozen head (empty for the others).
  struct FrozenCopy {
    Mat qkv_w, out_w;
    RowVec qkv_b, lambda;  // lambda: differential only
  };
  std::vector<FrozenCopy> frozen_;  // (L)
  bool any_frozen_ = false;
  bool layer_frozen(int l) const;
  void restore_frozen();
};

}  // namespace attn
