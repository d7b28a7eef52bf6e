#include "attn/train/draft.h"

#include <algorithm>

namespace attn {

TrainerConfig draft_config(const TrainerConfig& target) {
  TrainerConfig d = target;
  d.n_layers = 1;
  d.residual = true;
  d.d_model = std::min(32, target.d_model);
  d.n_heads = d.d_model % 2 == 0 && (d.d_model / 2) % 2 == 0 ? 2 : 1;
  d.kv_heads = 0;
  d.norm = "layernorm";
  d.norm_position = "pre";
  d.ffn = "gelu";
  d.ffn_mult = 2;
  d.lr = 5e-3f;
  d.attn_dropout = 0.0f;
  d.out_dropout = 0.0f;
  return d;
}

std::unique_ptr<BigramDraft> trainer_bigram_draft(const Trainer& t, const std::string* text) {
  require(t.corpus() != nullptr, "a bigram draft needs a text model: this trainer's task is ",
          t.config().task, ", not text");
  if (!text) return make_bigram_draft(t.corpus()->vocab, *t.corpus());
  return make_bigram_draft(t.corpus()->vocab, make_corpus(*text, 1));
}

}  // namespace attn
