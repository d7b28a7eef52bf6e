#include "attn/train/config.h"

#include "attn/data/tasks.h"
#include "attn/train/config_keys.h"

namespace attn {

namespace {

// Rough count of floats a Trainer holds: parameters x 4 (value, grad, Adam m, v) + activations.
int64_t state_elements(const TrainerConfig& c) {
  const int64_t V = c.vocab_size, D = c.d_model, H = c.n_heads, T = c.seq_len, B = c.batch_size;
  const int64_t L = c.n_layers, C = std::max(c.max_seq_len, c.seq_len);
  const int64_t F = c.ffn == "none" ? 0 : int64_t(c.ffn_mult) * D;  // FFN hidden width
  const int64_t params = 2 * V * D + C * D + L * (6 * D * D + 8 * D + 3 * F * D + F) + V;
  const int64_t acts = B * T * (L * (16 * D + 8 * F) + 2 * V) + L * 3 * B * H * T * T;
  return 4 * params + acts + C * D;
}

}  // namespace

void TrainerConfig::validate(KeyNamer namer) const {
  check_config_keys(*this, namer);
  const std::string d_model_name = key_name("d_model", namer);
  require_config(d_model % 2 == 0, "d_model", d_model_name, " (", d_model,
                 ") must be even for sinusoidal positions");
  require_config(kv_heads == 0 || n_heads % kv_heads == 0, "kv_heads", key_name("n_heads", namer),
                 " (", n_heads, ") must be divisible by ", key_name("kv_heads", namer), " (",
                 kv_heads, ")");
  require_config(max_seq_len == 0 || max_seq_len >= seq_len, "max_seq_len",
                 key_name("max_seq_len", namer), " (", max_seq_len, ") must be 0 or >= ",
                 key_name("seq_len", namer), " (", seq_len, ")");
  require_config(positions != "rope" || (d_model / n_heads) % 2 == 0, "positions",
                 key_name("positions", namer), " rope needs an even head width, but ",
                 d_model_name, " / ", key_name("n_heads", namer), " is ", d_model / n_heads);
  // A norm or an FFN sits on the residual stream: both keys are named.
  for (const char* k : {"norm", "ffn"}) {
    const std::string& v = std::string(k) == "norm" ? norm : ffn;
    require_config(v == "none" || residual, k, key_name(k, namer), " (", v, ") needs ",
                   key_name("residual", namer), " (true): it works on the residual stream");
  }
  require_config(objective != "mlm" || vocab_size >= 2, "vocab_size", key_name("objective", namer),
                 " mlm replaces some selected tokens by another one: it needs ",
                 key_name("vocab_size", namer), " >= 2, got ", vocab_size);
  try {
    check_task(parse_task(task), vocab_size, seq_len);
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorKind::Config, "task", str_cat(key_name("task", namer), ": ", e.what()));
  }
  // No single key: any of the four sizes can bring it down.
  const int64_t n = state_elements(*this);
  require_config(n <= kMaxStateElements, "", "this config needs about ", n,
                 " floats of state, more than the ", kMaxStateElements, " allowed; reduce ",
                 key_name("vocab_size", namer), ", ", d_model_name, ", ",
                 key_name("seq_len", namer), " or ", key_name("batch_size", namer));
}

ModelConfig TrainerConfig::model_config() const {
  ModelConfig m;
  m.vocab_size = vocab_size;
  m.d_model = d_model;
  m.n_heads = n_heads;
  m.max_context_length = max_seq_len > 0 ? max_seq_len : seq_len;
  m.attn_dropout = attn_dropout;
  m.out_dropout = out_dropout;
  m.n_layers = n_layers;
  m.residual = residual;
  m.kv_heads = kv_heads;
  m.positions = parse_position_kind(positions);
  m.norm = parse_norm_kind(norm);
  m.norm_position = parse_norm_position(norm_position);
  m.ffn = parse_ffn_kind(ffn);
  m.ffn_mult = ffn_mult;
  m.emb_init_std = emb_init_std;
  m.objective = parse_objective(objective);
  if (m.objective == Objective::Mlm) ++m.vocab_size;  // the last id is [MASK]
  m.attention = parse_attention_kind(attention);
  m.window = window;
  m.stride = stride;
  m.differential = differential;
  return m;
}

}  // namespace attn
