#include "attn/model/family.h"

#include "attn/model/model.h"
#include "attn/nn/loss.h"

namespace attn {

float ModelState::aux_loss() const {
  float sum = 0.0f;
  for (const AuxTerm& t : aux) sum += t.value;
  return sum;
}

void stacked_attention(const Model& model, const ModelState& s, Mat& out) {
  const int L = model.n_attention_layers();
  if (L == 0) {
    out.resize(0, s.T);
    return;
  }
  const Eigen::Index rows = model.attention_state(s, 0).weights().rows();  // B*H*T of one layer
  out.resize(rows * L, s.T);
  for (int l = 0; l < L; ++l)
    out.middleRows(rows * l, rows) = model.attention_state(s, l).weights();
}

StepLoss model_loss(const Batch& batch, ModelState& s) {
  s.dlogits.resize(s.logits.rows(), s.logits.cols());
  return {cross_entropy(s.logits, batch.targets.data(), s.dlogits), s.aux_loss()};
}

StepLoss model_loss_value(const Batch& batch, const ModelState& s) {
  return {cross_entropy_loss(s.logits, batch.targets.data()), s.aux_loss()};
}

bool FamilyInfo::takes_kind(BatchKind kind) const {
  for (BatchKind k : takes)
    if (k == kind) return true;
  return false;
}

namespace {
std::unique_ptr<Model> make_lm(const ModelConfig& c, uint64_t seed) {
  return std::make_unique<TinyAttentionLM>(c, seed);
}
}  // namespace

// The one place a family is chosen by its name: one row per family, in kFamilyNames' order.
const std::vector<FamilyInfo>& families() {
  static const std::vector<FamilyInfo> rows = {
      {"lm", {BatchKind::Ids}, make_lm, &TinyAttentionLM::report},
  };
  return rows;
}

const FamilyInfo& find_family(std::string_view name) {
  return families()[size_t(parse_enum(kFamilies, std::string(name)))];
}

std::unique_ptr<Model> make_model(std::string_view family, const ModelConfig& config,
                                  uint64_t seed) {
  return find_family(family).make(config, seed);
}

ModuleReport model_report(const ModelConfig& c, int B, int T) {
  return find_family(family_name(c.family)).report(c, B, T);
}

void check_family_takes(std::string_view task, BatchKind produced, const FamilyInfo& family) {
  if (family.takes_kind(produced)) return;
  std::string takes;
  for (size_t i = 0; i < family.takes.size(); ++i)
    takes += str_cat(i == 0 ? "" : i + 1 == family.takes.size() ? " or " : ", ",
                     batch_kind_taken(family.takes[i]));
  throw Error(ErrorKind::Config, "family",
              str_cat("task '", task, "' produces ", batch_kind_produced(produced), "; family '",
                      family.name, "' takes ", takes));
}

}  // namespace attn
