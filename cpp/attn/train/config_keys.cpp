#include "attn/train/config_keys.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <stdexcept>

#include "attn/base/error.h"
#include "attn/base/tensor.h"
#include "attn/data/tasks.h"

namespace attn {

namespace {

// Row builders, one per type; the bounds setters below return the row for chaining.
struct Row : ConfigKey {
  Row(const char* name, ConfigType type, const char* symbol, const char* doc)
      : ConfigKey{name, type, symbol, doc} {}
  Row& in(double low, double high, bool low_open = false, bool high_open = false) {
    bounded = true;
    lo = low, hi = high, lo_open = low_open, hi_open = high_open;
    return *this;
  }
  Row& at_most(const char* key) {
    hi_key = key;
    return *this;
  }
  Row& dividing(const char* key) {
    divides = key;
    return *this;
  }
};

Row int_key(const char* name, int TrainerConfig::*m, const char* symbol, const char* doc) {
  Row r(name, ConfigType::Int, symbol, doc);
  r.int_member = m;
  return r;
}
Row u64_key(const char* name, uint64_t TrainerConfig::*m, const char* symbol, const char* doc) {
  Row r(name, ConfigType::UInt64, symbol, doc);
  r.u64_member = m;
  return r;
}
Row float_key(const char* name, float TrainerConfig::*m, const char* symbol, const char* doc) {
  Row r(name, ConfigType::Float, symbol, doc);
  r.float_member = m;
  return r;
}
Row bool_key(const char* name, bool TrainerConfig::*m, const char* doc) {
  Row r(name, ConfigType::Bool, "", doc);
  r.bool_member = m;
  return r;
}
Row string_key(const char* name, std::string TrainerConfig::*m, const char* symbol,
               const char* doc, void (*check)(const std::string&)) {
  Row r(name, ConfigType::String, symbol, doc);
  r.string_member = m;
  r.check_text = check;
  return r;
}

// Bounds keep a Trainer's state under kMaxStateElements floats for any one key; the total is
// TrainerConfig::validate's to check.
std::vector<ConfigKey> make_keys() {
  using C = TrainerConfig;
  const Row rows[] = {
      int_key("vocab_size", &C::vocab_size, "V", "vocabulary size").in(1, 65536),
      int_key("d_model", &C::d_model, "D", "model width (even, divisible by {n_heads})")
          .in(2, 4096),
      int_key("n_heads", &C::n_heads, "H", "attention heads").in(1, 4096).at_most("d_model")
          .dividing("d_model"),
      int_key("seq_len", &C::seq_len, "T", "sequence length (= max context length)").in(1, 4096),
      int_key("batch_size", &C::batch_size, "B", "sequences per step").in(1, 4096),
      float_key("lr", &C::lr, "LR", "Adam learning rate").in(0, 10, true, false),
      u64_key("seed", &C::seed, "N", "seed for weights, batches and dropout"),
      float_key("attn_dropout", &C::attn_dropout, "P", "dropout on attention weights, in [0, 1)")
          .in(0, 1, false, true),
      float_key("out_dropout", &C::out_dropout, "P",
                "dropout on the attention output, in [0, 1)")
          .in(0, 1, false, true),
      string_key("task", &C::task, "NAME",
                 "training task: repeat, shift, copy, reverse, sort, future, induction or text "
                 "(the characters of a corpus)",
                 [](const std::string& s) { parse_task(s); }),
      int_key("n_layers", &C::n_layers, "L", "attention layers, 1 to 4").in(1, kMaxLayers),
      bool_key("residual", &C::residual,
               "add each layer's output to the residual stream (x = x + attn(x))"),
      int_key("kv_heads", &C::kv_heads, "KV",
              "key/value heads, dividing {n_heads} (1 = multi-query); 0 = {n_heads}")
          .in(0, 4096).at_most("n_heads"),
      string_key("positions", &C::positions, "KIND",
                 "position method: sinusoidal, learned, rope, alibi or none",
                 [](const std::string& s) { parse_position_kind(s); }),
      int_key("max_seq_len", &C::max_seq_len, "C",
              "longest sequence the model accepts (rows of a learned table), >= {seq_len}; "
              "0 = {seq_len}")
          .in(0, 4096),
      string_key("norm", &C::norm, "KIND", "norm in each block: none, layernorm or rmsnorm",
                 [](const std::string& s) { parse_norm_kind(s); }),
      string_key("norm_position", &C::norm_position, "WHERE",
                 "norm before each sublayer (pre) or after each sum (post)",
                 [](const std::string& s) { parse_norm_position(s); }),
      string_key("ffn", &C::ffn, "KIND", "feed-forward network: none, relu, gelu or swiglu",
                 [](const std::string& s) { parse_ffn_kind(s); }),
      int_key("ffn_mult", &C::ffn_mult, "M", "FFN hidden width in multiples of {d_model}, 1 to 8")
          .in(1, FeedForward::kMaxFfnMult),
      float_key("emb_init_std", &C::emb_init_std, "S",
                "std of the token embedding's initial values (0.02 in the curriculum)")
          .in(0, 10, true, false),
      string_key("objective", &C::objective, "KIND",
                 "causal (predict the next token) or mlm (masked language modelling: "
                 "bidirectional attention, predict the selected tokens; one more id, [MASK])",
                 [](const std::string& s) { parse_objective(s); }),
      float_key("mask_rate", &C::mask_rate, "P",
                "mlm: the chance that each token is selected (80% become [MASK], 10% another "
                "token, 10% stay)")
          .in(0.01, 0.5),
      string_key("attention", &C::attention, "KIND",
                 "which keys a query sees: full, window (the last {window}) or strided "
                 "(the window and every {stride}-th position)",
                 [](const std::string& s) { parse_attention_kind(s); }),
      int_key("window", &C::window, "W",
              "attention window in keys, the query's own included (window, strided)")
          .in(1, kMaxPatternSize),
      int_key("stride", &C::stride, "S", "strided keys at the multiples of S (strided)")
          .in(1, kMaxPatternSize),
      bool_key("differential", &C::differential,
               "differential attention: two softmax maps per head, the second weighed by a "
               "learned lambda (0.5 at init)"),
  };
  return std::vector<ConfigKey>(std::begin(rows), std::end(rows));
}

const ConfigKey& key_named(std::string_view name) {
  const ConfigKey* k = find_config_key(name);
  if (!k) throw std::logic_error(str_cat("no config key ", name));
  return *k;
}

}  // namespace

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = make_keys();
  return keys;
}

const ConfigKey* find_config_key(std::string_view snake_name) {
  for (const ConfigKey& k : config_keys())
    if (snake_name == k.name) return &k;
  return nullptr;
}

std::string expand_keys(std::string_view doc, KeyNamer namer) {
  std::string out;
  size_t i = 0;
  while (i < doc.size()) {
    const size_t open = doc.find('{', i), close = doc.find('}', open);
    if (open == std::string_view::npos || close == std::string_view::npos) break;
    out.append(doc.substr(i, open - i));
    out += key_name(doc.substr(open + 1, close - open - 1), namer);
    i = close + 1;
  }
  if (i < doc.size()) out.append(doc.substr(i));
  return out;
}

double number_value(const TrainerConfig& c, const ConfigKey& k) {
  switch (k.type) {
    case ConfigType::Int: return c.*k.int_member;
    case ConfigType::UInt64: return static_cast<double>(c.*k.u64_member);
    case ConfigType::Float: return c.*k.float_member;
    default: throw std::logic_error(str_cat("config key ", k.name, " is not a number"));
  }
}

double shortest_decimal(float f) {
  for (int digits = 6;; ++digits) {
    const double d = std::stod(str_cat(std::setprecision(digits), f));
    if (static_cast<float>(d) == f || digits == 9) return d;
  }
}

std::string value_text(const TrainerConfig& c, const ConfigKey& k) {
  switch (k.type) {
    case ConfigType::Int: return std::to_string(c.*k.int_member);
    case ConfigType::UInt64: return std::to_string(c.*k.u64_member);
    case ConfigType::Float: return str_cat(shortest_decimal(c.*k.float_member));
    case ConfigType::Bool: return c.*k.bool_member ? "true" : "false";
    case ConfigType::String: return c.*k.string_member;
  }
  return "";
}

void check_config_keys(const TrainerConfig& c, KeyNamer namer) {
  for (const ConfigKey& k : config_keys()) {
    const std::string name = key_name(k.name, namer);
    if (k.type == ConfigType::String && k.check_text) {
      try {
        k.check_text(c.*k.string_member);
      } catch (const std::invalid_argument& e) {
        throw Error(ErrorKind::Config, k.name, str_cat(name, ": ", e.what()));
      }
    }
    if (!k.bounded) continue;
    const double hi = k.hi_key ? std::min(k.hi, number_value(c, key_named(k.hi_key))) : k.hi;
    if (k.type == ConfigType::Float) {
      // Compared with the bounds as floats, so that a bound such as 0.01 accepts itself.
      const float v = c.*k.float_member, lo_f = static_cast<float>(k.lo);
      const float hi_f = static_cast<float>(hi);
      const bool ok = std::isfinite(v) && (k.lo_open ? v > lo_f : v >= lo_f) &&
                      (k.hi_open ? v < hi_f : v <= hi_f);
      require_config(ok, k.name, name, " (", v, ") must be in ", k.lo_open ? "(" : "[", k.lo,
                     ", ", hi, k.hi_open ? ")" : "]");
    } else {
      const double v = number_value(c, k);
      const bool ok = (k.lo_open ? v > k.lo : v >= k.lo) && (k.hi_open ? v < hi : v <= hi);
      require_config(ok, k.name, name, " (", value_text(c, k), ") must be in ",
                     k.lo_open ? "(" : "[", static_cast<int64_t>(k.lo), ", ",
                     static_cast<int64_t>(hi), k.hi_open ? ")" : "]");
    }
    if (k.divides) {
      const ConfigKey& whole = key_named(k.divides);
      const int64_t w = static_cast<int64_t>(number_value(c, whole));
      const int64_t part = static_cast<int64_t>(number_value(c, k));
      require_config(w % part == 0, whole.name, key_name(whole.name, namer), " (", w,
                     ") must be divisible by ", name, " (", part, ")");
    }
  }
}

}  // namespace attn
