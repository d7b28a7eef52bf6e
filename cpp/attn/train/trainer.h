// Trainer: owns the model, Adam, the task's data, the loss history and the training workspace.
// It only trains, and only through the model seam (model/family.h): it builds the config's
// family, and a step is batch -> forward -> cross-entropy + aux -> backward -> Adam. What is
// measured on its model is read out by free functions over model() and data()
// (interp/readouts.h, inspect.h, length_eval.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attn/data/task_data.h"
#include "attn/data/text.h"
#include "attn/interp/circuits.h"
#include "attn/model/family.h"
#include "attn/model/model.h"
#include "attn/train/adam.h"
#include "attn/train/config.h"

namespace attn {

class Trainer {
 public:
  // Validates config first (TrainerConfig::validate, keys in snake_case), then that the family
  // takes the batches the task produces (check_family_takes, an Error of kind Config).
  explicit Trainer(const TrainerConfig& config);
  // The text task trains on corpus (nullptr: make_corpus(default_corpus())), and the model's
  // vocab_size is the corpus's (config().vocab_size reports it; the config's own is ignored).
  // A corpus whose splits cannot hold a window of seq_len + 1 characters is an Error of kind
  // Input (check_corpus_fits). Any other task ignores corpus. The markov task's model has the
  // chain's markov_symbols ids (config().vocab_size reports it) and its data the run's chain
  // (data().chain, markov_chain_for).
  Trainer(const TrainerConfig& config, std::shared_ptr<const TextCorpus> corpus);

  // Runs n >= 0 training steps; returns the last loss, the cross-entropy plus the auxiliary
  // terms (the previous one when n = 0, NaN before any step). If a loss or gradient turns non-finite, that step is not applied and a
  // RuntimeError of kind NonFinite says so; the weights stay as they were and the Trainer stays
  // usable.
  float step(int n = 1);

  // The loss the next step() will report, before it updates anything: the next batch (with
  // dropout, as training applies it) under the current weights. Changes no state; calling
  // peek_loss() then step(1) gives the same loss twice. This is the loss at step 0.
  float peek_loss();

  // Losses of every step, or of every history_stride()-th step once more than
  // kMaxHistory steps were run (the history is thinned, never grown past its cap).
  const std::vector<float>& loss_history() const { return history_; }
  int64_t history_stride() const { return history_stride_; }
  // Token accuracy of the last step's batch, before its update (NaN before any step). With
  // objective mlm, every loss and accuracy is over the selected positions only (mask_for_mlm):
  // the masked-position accuracy.
  float last_accuracy() const { return last_accuracy_; }
  // The last step's loss in its two parts (NaN before any step): the cross-entropy, and the sum
  // of the auxiliary terms the modules added (0 for every family of today).
  StepLoss last_loss_parts() const { return last_parts_; }

  // The text task's corpus (vocab, splits); nullptr for the other tasks.
  const TextCorpus* corpus() const { return corpus_.get(); }
  // Where the batches come from: the task at the config's shapes and seed, the corpus for text.
  // The read-outs over model() (interp/readouts.h: evaluate, attention_stats, head_scores, ...)
  // take their fixed evaluation batches from it.
  const TaskData& data() const { return data_; }

  // Teaching interventions on the attention layers, applied to training and to every readout
  // (Ablation, model/family.h: heads indexed globally, g = l*H + h).
  using Ablation = attn::Ablation;
  // Throws std::invalid_argument (and changes nothing) unless heads_off and heads_frozen are empty
  // or have n_layers * n_heads entries.
  void set_ablation(const Ablation& a);
  const Ablation& ablation() const { return ablation_; }

  int64_t steps_done() const { return adam_.t; }

  const TrainerConfig& config() const { return config_; }
  // The model, behind the seam.
  Model& family_model() { return *model_; }
  // The same as the lm family's class, for the read-outs not yet written against the seam (an
  // Error of kind Config for another family).
  TinyAttentionLM& model() { return lm_of(*model_, "this read-out"); }
  const Batch& last_batch() const { return batch_; }

  static constexpr size_t kMaxHistory = 16384;

  // The step of the phase change in the loss history (PhaseChangeRule's defaults), or -1 while
  // none is found; once found it stays.
  int64_t phase_change_step();

 private:
  void record_loss(float loss);

  std::shared_ptr<const TextCorpus> corpus_;  // text task only; before config_, which reads it
  TrainerConfig config_;
  TaskData data_;
  std::unique_ptr<Model> model_;
  Adam adam_;
  Rng data_rng_;     // batches only, so dropout cannot change the data a seed gives
  Rng dropout_rng_;  // dropout masks of training steps
  Batch batch_;
  std::unique_ptr<ModelState> train_state_;
  std::vector<float> history_;
  PhaseChangeDetector phase_;
  int64_t history_stride_ = 1;
  float last_loss_;
  float last_accuracy_;
  StepLoss last_parts_;
  Ablation ablation_;
  bool any_frozen_ = false;
};

}  // namespace attn
