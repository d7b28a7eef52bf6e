#include "attn/train/draft.h"

#include <algorithm>

namespace attn {

TrainerConfig draft_config(const TrainerConfig& target) {
  TrainerConfig d = target;
  d.model.n_layers = 1;
  d.model.residual = true;
  d.model.d_model = std::min(32, target.model.d_model);
  d.model.n_heads = d.model.d_model % 2 == 0 && (d.model.d_model / 2) % 2 == 0 ? 2 : 1;
  d.model.kv_heads = 0;
  d.model.norm = NormKind::LayerNorm;
  d.model.norm_position = NormPosition::Pre;
  d.model.ffn = FfnKind::GELU;
  d.model.ffn_mult = 2;
  d.training.lr = 5e-3f;
  d.model.attn_dropout = 0.0f;
  d.model.out_dropout = 0.0f;
  return d;
}

std::unique_ptr<BigramDraft> trainer_bigram_draft(const Trainer& t, const std::string* text) {
  require(t.corpus() != nullptr, "a bigram draft needs a text model: this trainer's task is ",
          t.config().task.name, ", not text");
  if (!text) return make_bigram_draft(t.corpus()->vocab, *t.corpus());
  return make_bigram_draft(t.corpus()->vocab, make_corpus(*text, 1));
}

}  // namespace attn
