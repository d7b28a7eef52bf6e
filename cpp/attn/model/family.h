// The model seam: one interface for every kind of model (a family), which the Trainer, the
// weights I/O and the bindings talk to, and the registry that picks a family by its name (the
// config key `family`). Today's one family is `lm` (TinyAttentionLM, model.h: causal or masked).
// Adding a family: cpp/README.md, "Adding a model family".
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attn/base/names.h"
#include "attn/base/rng.h"
#include "attn/base/tensor.h"
#include "attn/data/batch.h"
#include "attn/kernels/ops.h"
#include "attn/nn/multihead.h"
#include "attn/nn/report.h"

namespace attn {

struct ModelConfig;  // model.h: the model keys of the config

// The families the config key `family` names, in the registry's order.
inline constexpr const char* kFamilyNames[] = {"lm"};
inline constexpr EnumNames kFamilies = {"family", ErrorKind::Config, "family", "ModelFamily",
                                        kFamilyNames, int(std::size(kFamilyNames))};

// One term a module adds to the loss beside the cross-entropy (e.g. the experts' load-balancing
// term): its name and value for the last forward. The module that adds a term in forward adds its
// gradient in backward.
struct AuxTerm {
  const char* name;
  float value;
};

// A model's activations for one batch: each family derives its own (TinyAttentionLM::State).
// Reusing one for the same shapes allocates nothing.
struct ModelState {
  virtual ~ModelState() = default;
  int B = 0, T = 0;
  // Hints a family may ignore: keep what read-outs look at (the lm: every head's scores), and
  // run attention tile by tile where it can (never holding a (T,T) matrix).
  bool inspect = false;
  bool tiled = false;
  Mat logits;   // (B*T,V) the prediction at every position
  Mat dlogits;  // (B*T,V) dL/dlogits, filled by the loss (model_loss), read by backward
  // The auxiliary terms of the last forward (forward clears them; none today).
  std::vector<AuxTerm> aux;
  float aux_loss() const;  // their sum, 0 when there are none
};

// One step's loss: the cross-entropy over the targets and the auxiliary terms, kept apart.
struct StepLoss {
  float cross_entropy = 0.0f;
  float aux = 0.0f;
  float total() const { return cross_entropy + aux; }
};

// Teaching interventions on a model's attention heads, indexed globally g = l*H + h
// (layer-major). heads_off[g]: head h of layer l has a zero output. heads_frozen[g]: its query,
// key and value rows and its output columns stop updating. scale_scores and mask apply to every
// layer (MultiHeadSelfAttention).
struct Ablation {
  std::vector<uint8_t> heads_off, heads_frozen;  // (L*H) each; empty means none
  bool scale_scores = true;
  MaskMode mask = MaskMode::Causal;
};

class Model {
 public:
  virtual ~Model() = default;

  // The family's name, one of kFamilyNames.
  virtual const char* family() const = 0;
  // The model keys it was built from, the weights file's metadata among them.
  virtual const ModelConfig& model_config() const = 0;

  // A state for this model's forward (of its family's own type).
  virtual std::unique_ptr<ModelState> new_state() const = 0;
  // batch (of a kind the family takes) -> s.logits (B*T,V) and s.aux. Training: dropout drawn
  // from rng. Throws an Error of kind Input on a batch the model cannot read.
  virtual void forward(const Batch& batch, bool training, Rng& rng, ModelState& s) = 0;
  // The same in eval mode (no dropout, no generator).
  virtual void forward(const Batch& batch, ModelState& s) = 0;
  // Reads s.dlogits and the aux terms' own gradients; overwrites every parameter gradient.
  virtual void backward(const Batch& batch, ModelState& s) = 0;

  // Every parameter with its state-dict name, in the weights file's order.
  virtual std::vector<ParamRef> parameters() = 0;
  // The floats of every parameter, and those one forward uses (they differ for experts).
  virtual int64_t param_count() const = 0;
  virtual int64_t active_param_count() const = 0;

  // Attention heads across layers (0 for a family without any).
  virtual int n_heads_total() const = 0;
  // Applies a (heads_off, scale_scores, mask); its vectors are empty or have n_heads_total()
  // entries (Trainer::set_ablation checks). Sizes the frozen heads' copies, so that
  // hold_frozen and restore_frozen allocate nothing.
  virtual void set_ablation(const Ablation& a) = 0;
  // Around an optimizer step: copy the frozen heads' weights (hold_frozen), then put them back.
  virtual void hold_frozen() = 0;
  virtual void restore_frozen() = 0;

  // ---- Hooks for the read-outs (interp/), instead of the family's members.
  // The attention layers, in order (0 for a family without any), each with n_heads heads.
  virtual int n_attention_layers() const = 0;
  virtual const MultiHeadSelfAttention& attention_layer(int l) const = 0;
  // Layer l's cache of the last forward on s: its weights() (B,H,T,T), its heads' outputs.
  virtual const MultiHeadSelfAttention::State& attention_state(const ModelState& s,
                                                               int l) const = 0;
  // The cross-entropy of one prediction (position query of one sequence ids (T), for target),
  // through an eval-mode forward and backward on s: afterwards s holds its activations and
  // gradients (every head's dweights and dscores too when s.inspect is set), and every
  // parameter gradient is this loss's. Returns the loss.
  virtual float position_loss_backward(const int32_t* ids, int T, int query, int target,
                                       ModelState& s) = 0;
  // dL/d(the first layer's input) (B*T,D) of the last backward on s: the gradient that reaches
  // the inputs (the lm: the token embedding plus any position row added to it).
  virtual const Mat& input_gradient(const ModelState& s) const = 0;
};

// Every attention layer's weights of the last forward on s, stacked layer-major:
// (L*B*H*T,T) = (L,B,H,T,T).
void stacked_attention(const Model& model, const ModelState& s, Mat& out);

// The loss of the last forward: the cross-entropy of s.logits against batch.targets (mean over
// the counted positions; writes s.dlogits) and the sum of s.aux, reported apart.
StepLoss model_loss(const Batch& batch, ModelState& s);
// The same without the gradient.
StepLoss model_loss_value(const Batch& batch, const ModelState& s);

// A family: its name, the batch kinds it takes, how to build one of its models, and what a model
// of a config reports for a batch (B,T) (nn/report.h: the state dict, parameter count,
// activations, a training step's products), composed from its modules' reports.
struct FamilyInfo {
  const char* name;
  std::vector<BatchKind> takes;
  std::unique_ptr<Model> (*make)(const ModelConfig& config, uint64_t seed);
  ModuleReport (*report)(const ModelConfig& config, int B, int T) = nullptr;
  bool takes_kind(BatchKind kind) const;
};

// Every family, in kFamilyNames' order.
const std::vector<FamilyInfo>& families();
// The family of that name; anything else is an Error of kind Config on key "family".
const FamilyInfo& find_family(std::string_view name);
// A new model of the family, initialised from seed.
std::unique_ptr<Model> make_model(std::string_view family, const ModelConfig& config,
                                  uint64_t seed);

// The report of a model of config c (its family's, c.family) for a batch (B,T).
ModuleReport model_report(const ModelConfig& c, int B, int T);

// Throws an Error of kind Config on key "family" unless the family takes what the task
// produces: "task 'x' produces float batches (images, audio frames); family 'lm' takes token
// ids".
void check_family_takes(std::string_view task, BatchKind produced, const FamilyInfo& family);

}  // namespace attn
