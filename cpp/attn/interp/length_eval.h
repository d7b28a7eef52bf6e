// Length extrapolation: a model evaluated on its task at a sequence length other than
// the one it was trained at. The one implementation behind `attn eval`, the JS API's evaluateAt
// and the page's "Longer than trained" panel.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "attn/data/mlm.h"
#include "attn/data/task_data.h"
#include "attn/data/tasks.h"
#include "attn/model/model.h"

namespace attn {

// A model on its task at some length N (length_eval.h): mean cross-entropy and token accuracy over
// the predictable positions, and the accuracy at each of the N positions (NaN where the task
// never sets a target; loss and accuracy are NaN when no position is predictable).
struct LengthEvaluation {
  double loss, accuracy;
  std::vector<double> accuracy_per_position;
};


// The longest sequence a model may be evaluated at past its max_seq_len (position methods other
// than learned extrapolate; the cap bounds the work). From kTiledMinLength on the attention runs
// tile by tile: at 4096 the plain path would hold B*H*T^2 floats per layer (4 GB for B 16, H 4).
constexpr int kMaxEvalLength = 4096;

// A new model with model's weights and teaching interventions (heads off, score scaling, mask)
// that accepts sequences of up to length positions (length > model.config.max_context_length):
// the sinusoidal and RoPE tables are computed for length rows, ALiBi and none need nothing. With
// learned positions this is an Error of kind Config naming max_seq_len (there is no row past the
// table); a length outside (C, max(kMaxEvalLength, C)] is one naming seq_len. namer spells the
// keys in the message (nullptr: snake_case).
std::unique_ptr<TinyAttentionLM> model_for_length(TinyAttentionLM& model, int length,
                                                  KeyNamer namer = nullptr);

// Loss, accuracy and accuracy per position (LengthEvaluation) over the predictable
// positions of n_batches fresh batches of `batch` sequences of the task at length N, in eval
// mode; the batches come from Rng(seed). Evaluates model at length N, through model_for_length when N is past its max_seq_len (the
// errors above; N outside [1, max(kMaxEvalLength, C)] names seq_len). The task must then fit N
// (check_task: an Error of kind Config naming task).
// n_batches in [1, 1000], batch in [1, 4096]. For the text task the windows of N+1 characters
// come from text (a split of a corpus, make_text_batch); without one it is an Error of kind Input.
// A masked language model (objective mlm) is evaluated on the same batches masked with
// mask_for_mlm at mask_rate (from the same rng), over the selected positions.
LengthEvaluation evaluate_at_length(TinyAttentionLM& model, Task task, int N, int n_batches,
                                    int batch, uint64_t seed, KeyNamer namer = nullptr,
                                    const std::vector<int32_t>* text = nullptr,
                                    float mask_rate = kDefaultMaskRate);

// The same on the model's own data: its task and batch size, the batches from data.eval_seed()
// (evaluate()'s, so N = data.seq_len measures what evaluate(model, data, n) does; readouts.h), and
// for text the validation split. Changes nothing.
LengthEvaluation evaluate_at_length(TinyAttentionLM& model, const TaskData& data, int N,
                                    int n_batches, KeyNamer namer = nullptr);

}  // namespace attn
