// ModelConfig's rows, its validation and legacy(): the model's part of the
// config schema.
#include <iterator>

#include "attn/model/model.h"

namespace attn {

const std::vector<ConfigKey> &model_config_keys() {
  using M = ModelConfig;
  using G = ConfigGroup;
  using W = InWeights;
  static const ConfigRow rows[] = {
      config_key("vocab_size", "vocab-size", G::Model, &M::vocab_size, "V",
                 "vocabulary size")
          .in(1, 65536)
          .kept(W::Shape),
      config_key("d_model", "d-model", G::Model, &M::d_model, "D",
                 "model width (even, divisible by {n_heads})")
          .in(2, 4096)
          .kept(W::Shape),
      config_key("n_heads", "heads", G::Model, &M::n_heads, "H",
                 "attention heads")
          .in(1, 4096)
          .at_most("d_model")
          .dividing("d_model")
          .kept(W::Always),
      config_key("max_seq_len", "max-seq-len", G::Block, &M::max_context_length,
                 "C",
                 "longest sequence the model accepts (rows of a learned "
                 "table), >= {seq_len}; "
                 "0 = {seq_len}")
          .in(0, 4096)
          .zero_is("seq_len")
          .kept(W::Block)
          .for_families({"lm"}),
      config_key("attn_dropout", "attn-dropout", G::Training, &M::attn_dropout,
                 "P", "dropout on attention weights, in [0, 1)")
          .in(0, 1, false, true),
      config_key("out_dropout", "out-dropout", G::Training, &M::out_dropout,
                 "P", "dropout on the attention output, in [0, 1)")
          .in(0, 1, false, true),
      config_key("n_layers", "layers", G::Model, &M::n_layers, "L",
                 "attention layers, 1 to 4")
          .in(1, kMaxLayers)
          .kept(W::Depth),
      config_key(
          "residual", "residual", G::Model, &M::residual,
          "add each layer's output to the residual stream (x = x + attn(x))")
          .kept(W::Depth),
      config_key("kv_heads", "kv-heads", G::Block, &M::kv_heads, "KV",
                 "key/value heads, dividing {n_heads} (1 = multi-query); 0 = "
                 "{n_heads}")
          .in(0, 4096)
          .at_most("n_heads")
          .zero_is("n_heads")
          .kept(W::Block)
          .for_families({"lm"}),
      config_key("positions", "positions", G::Block, &M::positions, "KIND",
                 "position method: {choices}")
          .one_of(kPositionKinds)
          .kept(W::Block)
          .for_families({"lm"}),
      config_key("norm", "norm", G::Block, &M::norm, "KIND",
                 "norm in each block: {choices}")
          .one_of(kNormKinds)
          .kept(W::Block)
          .for_families({"lm"}),
      config_key("norm_position", "norm-position", G::Block, &M::norm_position,
                 "WHERE",
                 "norm before each sublayer (pre) or after each sum (post)")
          .one_of(kNormPositions)
          .kept(W::Block)
          .applies_when("norm", "layernorm", "rmsnorm")
          .for_families({"lm"}),
      config_key("ffn", "ffn", G::Block, &M::ffn, "KIND",
                 "feed-forward network: {choices}")
          .one_of(kFfnKinds)
          .kept(W::Block)
          .for_families({"lm"}),
      config_key("ffn_mult", "ffn-mult", G::Block, &M::ffn_mult, "M",
                 "FFN hidden width floor(M * {d_model}), M in [1, 8]")
          .in(1, FeedForward::kMaxFfnMult)
          .kept(W::Block)
          .applies_when("ffn", std::vector<const char*>(std::begin(kFfnKindNames) + 1,
                                                        std::end(kFfnKindNames)))  // all but none
          .for_families({"lm"}),
      config_key("emb_init_std", "emb-init-std", G::Training, &M::emb_init_std,
                 "S",
                 "std of the token embedding's initial values (0.02 in the "
                 "curriculum)")
          .in(0, 10, true, false),
      config_key(
          "objective", "objective", G::Model, &M::objective, "KIND",
          "causal (predict the next token) or mlm (masked language modelling: "
          "bidirectional attention, predict the selected tokens; one more id, "
          "[MASK])")
          .one_of(kObjectives)
          .kept(W::Changed)
          .for_families({"lm"}),
      config_key("attention", "attention", G::Block, &M::attention, "KIND",
                 "which keys a query sees: full, window (the last {window}) or "
                 "strided "
                 "(the window and every {stride}-th position)")
          .one_of(kAttentionKinds)
          .kept(W::Changed)
          .for_families({"lm"}),
      config_key("window", "window", G::Block, &M::window, "W",
                 "attention window in keys, the query's own included (window, "
                 "strided)")
          .in(1, kMaxPatternSize)
          .kept(W::Changed)
          .applies_when("attention", "window", "strided")
          .for_families({"lm"}),
      config_key("stride", "stride", G::Block, &M::stride, "S",
                 "strided keys at the multiples of S (strided)")
          .in(1, kMaxPatternSize)
          .kept(W::Changed)
          .applies_when("attention", "strided")
          .for_families({"lm"}),
      config_key("differential", "differential", G::Block, &M::differential,
                 "differential attention: two softmax maps per head, the "
                 "second weighed by a "
                 "learned lambda (0.5 at init)")
          .kept(W::Changed)
          .for_families({"lm"}),
      config_key("family", "family", G::Model, &M::family, "FAMILY",
                 "model family: {choices}")
          .one_of(kFamilies)
          .kept(W::Changed),
      // The course's capstone (issue 39).
      config_key("tie_embeddings", "tie-embeddings", G::Block, &M::tie_embeddings,
                 "the LM head is the token embedding's transpose (one matrix, no head bias)")
          .kept(W::Changed).for_families({"lm"}),
      config_key("bias", "bias", G::Block, &M::bias, "BOOL",
                 "a bias in every Linear layer (false: none, as torch's bias=False)")
          .kept(W::Changed).for_families({"lm"}),
      config_key("pos_init_std", "pos-init-std", G::Training, &M::pos_init_std, "S",
                 "std of the learned position table's initial values")
          .in(0, 10, true, false).applies_when("positions", "learned").for_families({"lm"}),
  };
  static const std::vector<ConfigKey> keys(std::begin(rows), std::end(rows));
  return keys;
}

void ModelConfig::validate(KeyNamer namer) const {
  const std::vector<ConfigKey> &rows = model_config_keys();
  for (const ConfigKey &k : rows)
    check_row(k, this, rows, namer);
  // The rules across keys. A trainer's seq_len sets max_context_length when
  // max_seq_len is 0.
  const std::string d_model_name = key_name("d_model", namer);
  require_config(d_model % 2 == 0, "d_model", d_model_name, " (", d_model,
                 ") must be even for sinusoidal positions");
  require_config(max_context_length >= 1, "seq_len", key_name("seq_len", namer),
                 " (", max_context_length, ") must be >= 1");
  require_config(kv_heads == 0 || n_heads % kv_heads == 0, "kv_heads",
                 key_name("n_heads", namer), " (", n_heads,
                 ") must be divisible by ", key_name("kv_heads", namer), " (",
                 kv_heads, ")");
  require_config(positions != PositionKind::Rope ||
                     (d_model / n_heads) % 2 == 0,
                 "positions", key_name("positions", namer),
                 " rope needs an even head width, but ", d_model_name, " / ",
                 key_name("n_heads", namer), " is ", d_model / n_heads);
  // A norm or an FFN sits on the residual stream: both keys are named.
  for (const char *k : {"norm", "ffn"}) {
    const bool none = std::string(k) == "norm" ? norm == NormKind::None
                                               : ffn == FfnKind::None;
    require_config(none || residual, k, key_name(k, namer), " (",
                   row_text(*find_row(rows, k), this), ") needs ",
                   key_name("residual", namer),
                   " (true): it works on the residual stream");
  }
  // The random replacement of a selected token is another real id: it needs two
  // of them.
  require_config(objective != Objective::Mlm || real_vocab_size() >= 2,
                 "vocab_size", key_name("objective", namer),
                 " mlm replaces some selected tokens by another one: it needs ",
                 key_name("vocab_size", namer), " >= 2, got ",
                 real_vocab_size());
}

bool ModelConfig::legacy() const {
  const ModelConfig d;
  const std::vector<ConfigKey> &rows = model_config_keys();
  for (const ConfigKey &k : rows) {
    if (k.weights != InWeights::Block && k.weights != InWeights::Changed)
      continue;
    if (k.zero_means) {
      // A file writes the key when it differs from the one it stands for
      // (kv_heads from n_heads); a model's C is its sequence length, so
      // max_seq_len (0 = seq_len) is never written.
      const ConfigKey *other = find_row(rows, k.zero_means);
      const double v = row_number(k, this);
      if (v != 0 && other && v != row_number(*other, this))
        return false;
    } else if (row_text(k, this) != row_text(k, &d)) {
      return false;
    }
  }
  return true;
}

} // namespace attn
