#include "wasm/convert.h"

#include "attn/base/parallel.h"

#include <emscripten/bind.h>

#include <cmath>
#include <initializer_list>

#include "attn/train/config.h"

namespace attn::js {

using emscripten::typed_memory_view;

void throw_error(const std::string& message, ErrorKind kind, const std::string& key) {
  val error = val::global("Error").new_(message);
  error.set("kind", std::string(error_kind_name(kind)));
  if (!key.empty()) error.set("key", key);
  error.throw_();
}

namespace {

constexpr double kMaxSafeInteger = 9007199254740991.0;  // Number.MAX_SAFE_INTEGER
// A safetensors file is parameters plus a JSON header; 1 GiB is far above any valid config.
constexpr size_t kMaxFileBytes = size_t{1} << 30;
// More entries than any model has heads (nLayers <= 4, nHeads <= dModel <= 4096).
constexpr int kMaxHeadFlags = kMaxLayers * 4096;
// taskTargets' ids, and the single-head view's bounds: T tokens typed by hand, small widths.
constexpr size_t kMaxTaskIds = 4096;
constexpr int kMaxSelfAttentionT = 1024, kMaxSelfAttentionWidth = 4096;

std::string type_of(const val& v) {
  if (v.isNull()) return "null";
  if (v.isArray()) return "an array";
  return v.typeOf().as<std::string>();
}

bool is_object(const val& v) {
  return v.typeOf().as<std::string>() == "object" && !v.isNull() && !v.isArray();
}

// Throws an attn::Error "<name><rest>" when cond is false; kind Config gets name as its key.
template <typename... Args>
void require_value(bool cond, ErrorKind kind, const std::string& name, const Args&... rest) {
  if (!cond) throw Error(kind, kind == ErrorKind::Config ? name : "", str_cat(name, rest...));
}

// A finite JS number; name is the key or argument it came from, kind Config for a config key.
double to_number(const val& v, const std::string& name, ErrorKind kind = ErrorKind::Input) {
  require_value(v.isNumber(), kind, name, " must be a number, got ", type_of(v));
  const double d = v.as<double>();
  require_value(std::isfinite(d), kind, name, " (", d, ") must be a finite number");
  return d;
}

// A JS number that is an integer in [lo, hi].
int64_t to_integer(const val& v, const std::string& name, double lo, double hi,
                   ErrorKind kind = ErrorKind::Input) {
  const double d = to_number(v, name, kind);
  require_value(d == std::trunc(d), kind, name, " (", d, ") must be an integer");
  require_value(d >= lo && d <= hi, kind, name, " (", d, ") must be in [",
                static_cast<int64_t>(lo), ", ", static_cast<int64_t>(hi), "]");
  return static_cast<int64_t>(d);
}

// A JS boolean (undefined gives fallback).
bool to_bool(const val& v, const std::string& name, bool fallback) {
  if (v.isUndefined()) return fallback;
  require(v.isTrue() || v.isFalse(), name, " must be a boolean, got ", type_of(v));
  return v.isTrue();
}

// An array of L*H booleans, global head g = l*H + h (undefined: empty, none set). Its length is
// the Trainer's to check; a length no model could have is refused before anything is read.
std::vector<uint8_t> to_head_flags(const val& v, const std::string& name, int L, int H) {
  if (v.isUndefined()) return {};
  const int G = L * H;
  require(v.isArray(), name, " must be an array of ", G, " booleans, got ", type_of(v));
  const int n = v["length"].as<int>();
  require(n <= kMaxHeadFlags, name, " has ", n, " entries, more than the ", kMaxHeadFlags,
          " allowed");
  // The Trainer checks this too, in its C++ names; here it names the JS key.
  if (L == 1)
    require(n == 0 || n == G, name, " has ", n, " entries, expected one per head (", G, ")");
  else
    require(n == 0 || n == G, name, " has ", n, " entries, expected one per head (", L,
            " layers x ", H, " heads = ", G, ", index layer * ", H, " + head)");
  std::vector<uint8_t> out(static_cast<size_t>(n));
  for (int h = 0; h < n; ++h) out[size_t(h)] = to_bool(v[h], str_cat(name, "[", h, "]"), false);
  return out;
}

// Throws (with the given kind, no key) naming the first own key of the object js that is not in
// known ("unknown <what> key 'x'; the keys are a b c").
template <typename Known>
void check_keys(const val& js, const Known& known, const char* what, ErrorKind kind) {
  const val keys = val::global("Object").call<val>("keys", js);
  const int n_keys = keys["length"].as<int>();
  for (int i = 0; i < n_keys; ++i) {
    const std::string key = keys[i].as<std::string>();
    bool ok = false;
    std::string list;
    for (const auto& k : known) {
      ok = ok || key == k;
      list += list.empty() ? std::string(k) : str_cat(" ", k);
    }
    if (!ok)
      throw Error(kind, "", str_cat("unknown ", what, " key '", key, "'; the keys are ", list));
  }
}

// Copies a JS typed array of the given type into a new vector; the length is checked first, so
// a huge array is refused before anything is allocated.
template <typename T>
std::vector<T> copy_in(const val& array, const char* array_type, const std::string& name,
                       size_t max_length) {
  require(array.instanceof(val::global(array_type)), name, " must be of type ", array_type,
          ", got ", type_of(array));
  const size_t n = array["length"].as<size_t>();
  require(n <= max_length, name, " has ", n, " elements, more than the ", max_length, " allowed");
  std::vector<T> out(n);
  val(typed_memory_view(n, out.data())).call<void>("set", array);
  return out;
}

// Copies n elements of a C++ buffer into a new JS typed array (e.g. "Float32Array").
template <typename T>
val copy_out(const char* array_type, const T* data, size_t n) {
  return val::global(array_type).new_(typed_memory_view(n, data));
}

// {data: Float32Array, rows, cols} -> Mat, the matrix format of selfAttention.
Mat to_mat(const val& obj, const char* name, int max_rows, int max_cols) {
  require(obj.typeOf().as<std::string>() == "object" && !obj.isNull(), name,
          " must be {data: Float32Array, rows, cols}, got ", type_of(obj));
  const std::string prefix(name);
  const int rows = to_integer(obj["rows"], prefix + ".rows", 1, max_rows);
  const int cols = to_integer(obj["cols"], prefix + ".cols", 1, max_cols);
  const std::vector<float> data =
      copy_in<float>(obj["data"], "Float32Array", prefix + ".data", size_t(rows) * cols);
  require(data.size() == size_t(rows) * cols, name, ".data has ", data.size(),
          " elements but rows * cols = ", rows, " * ", cols, " = ", rows * cols);
  Mat m = Eigen::Map<const Mat>(data.data(), rows, cols);
  require(m.allFinite(), name, ".data contains NaN or Infinity");
  return m;
}

const char* const kAblationKeys[] = {"headsOff", "headsFrozen", "scaleScores", "mask"};

}  // namespace

// ---- JS -> C++

TrainerConfig to_trainer_config(const val& js) {
  require_config(is_object(js), "", "config must be an object, got ", type_of(js));
  std::vector<std::string> names;
  for (const ConfigKey& k : config_keys()) names.push_back(js_key(k.name));
  check_keys(js, names, "config", ErrorKind::Config);
  TrainerConfig c;
  for (size_t i = 0; i < names.size(); ++i) {
    const ConfigKey& k = config_keys()[i];
    const std::string& name = names[i];
    const val v = js[name];
    if (v.isUndefined()) continue;
    // Integers are checked against int's range (or the seed's, a safe integer) only to convert.
    switch (k.type) {
      case ConfigType::Int:
        key_value<int>(c, k) =
            static_cast<int>(to_integer(v, name, -kIntMax, kIntMax, ErrorKind::Config));
        break;
      case ConfigType::UInt64:
        key_value<uint64_t>(c, k) =
            static_cast<uint64_t>(to_integer(v, name, 0, kMaxSafeInteger, ErrorKind::Config));
        break;
      case ConfigType::Float:
        key_value<float>(c, k) = static_cast<float>(to_number(v, name, ErrorKind::Config));
        break;
      case ConfigType::Bool:
        require_value(v.isTrue() || v.isFalse(), ErrorKind::Config, name,
                      " must be a boolean, got ", type_of(v));
        key_value<bool>(c, k) = v.isTrue();
        break;
      case ConfigType::String:
        require_value(v.isString(), ErrorKind::Config, name, " must be a string, got ", type_of(v));
        set_choice(c, k, v.as<std::string>(), &js_key);
        break;
    }
  }
  return c;
}

void validate_js(const TrainerConfig& c) { c.validate(&js_key); }

int to_int(const val& v, const char* name, double lo, double hi) {
  return static_cast<int>(to_integer(v, name, lo, hi));
}

double to_double(const val& v, const char* name) { return to_number(v, name); }

std::vector<double> to_doubles(const val& v, const char* name, size_t max_length) {
  return copy_in<double>(v, "Float64Array", name, max_length);
}

std::vector<int32_t> to_ids(const val& ids, size_t max_length) {
  return copy_in<int32_t>(ids, "Int32Array", "ids", max_length);
}

std::vector<uint8_t> to_bytes(const val& bytes, const char* name) {
  return copy_in<uint8_t>(bytes, "Uint8Array", name, kMaxFileBytes);
}

Trainer::Ablation to_ablation(const val& js, const TrainerConfig& c) {
  require(is_object(js), "ablation must be an object, got ", type_of(js));
  check_keys(js, kAblationKeys, "ablation", ErrorKind::Input);
  Trainer::Ablation a;
  const int L = c.model.n_layers, H = c.model.n_heads;
  a.heads_off = to_head_flags(js["headsOff"], "headsOff", L, H);
  a.heads_frozen = to_head_flags(js["headsFrozen"], "headsFrozen", L, H);
  a.scale_scores = to_bool(js["scaleScores"], "scaleScores", true);
  const val mask = js["mask"];
  if (!mask.isUndefined()) {
    require(mask.isString(), "mask must be a string, got ", type_of(mask));
    a.mask = parse_mask_mode(mask.as<std::string>());
  }
  return a;
}

bool to_reference(const val& js, ReferenceCase& out) {
  if (js.isNull() || js.isUndefined()) return false;
  require(js.typeOf().as<std::string>() == "object",
          "reference must be {weights, input, expected} or null, got ", type_of(js));
  out.weights = to_bytes(js["weights"], "reference.weights");
  out.input = to_bytes(js["input"], "reference.input");
  out.expected = to_bytes(js["expected"], "reference.expected");
  return true;
}

TaskParams to_task_params(const val& params) {
  require(params.typeOf().as<std::string>() == "object" && !params.isNull(),
          "the task's settings must be an object such as {lag: 3}, got ", type_of(params));
  TaskParams p;
  if (!params["lag"].isUndefined()) p.lag = to_int(params["lag"], "lag", 1, 4095);
  if (!params["markovOrder"].isUndefined())
    p.markov_order = to_int(params["markovOrder"], "markovOrder", 1, 3);
  return p;
}

std::string to_task_name(const val& task) {
  require_config(task.isString(), "task", "task must be a string, got ", type_of(task));
  return task.as<std::string>();
}

std::string to_text(const val& text, const char* name) {
  if (text.isString()) return text.as<std::string>();
  require(text.instanceof(val::global("Uint8Array")), name, " must be a string or a Uint8Array, got ",
          type_of(text));
  const std::vector<uint8_t> b = copy_in<uint8_t>(text, "Uint8Array", name, kMaxFileBytes);
  return std::string(b.begin(), b.end());
}

FillOptions to_fill_options(const val& js) {
  FillOptions o;
  if (js.isUndefined()) return o;
  require(is_object(js), "fill options must be an object, got ", type_of(js));
  check_keys(js, std::initializer_list<const char*>{"blank", "top"}, "fill options",
             ErrorKind::Input);
  if (!js["blank"].isUndefined()) {
    const std::u32string blank = decode_utf8(to_text(js["blank"], "blank"));
    require(blank.size() == 1, "blank must be one character, got ", blank.size());
    o.blank = blank[0];
  }
  if (!js["top"].isUndefined()) o.top = int(to_integer(js["top"], "top", -kIntMax, kIntMax));
  return o;
}

DecoderOptions to_decoder_options(const val& js) {
  require(is_object(js), "Decoder options must be an object, got ", type_of(js));
  check_keys(js, std::initializer_list<const char*>{"useCache", "window"}, "Decoder options",
             ErrorKind::Input);
  DecoderOptions o;
  o.use_cache = to_bool(js["useCache"], "useCache", true);
  if (!js["window"].isUndefined()) o.window = to_integer(js["window"], "window", 0, kIntMax);
  return o;
}

InspectRequest to_inspect_request(const val& js, int max_length) {
  require(is_object(js), "inspect's argument must be an object, got ", type_of(js));
  check_keys(js, std::initializer_list<const char*>{"ids", "answers", "corrupted", "position",
                                                    "answerClean", "answerCorrupt"},
             "inspect", ErrorKind::Input);
  InspectRequest r;
  r.ids = to_ids(js["ids"], size_t(max_length));
  // Answers may hold -100 (kIgnoreIndex: no answer there); the core checks the rest.
  if (!js["answers"].isUndefined()) r.answers = to_ids(js["answers"], size_t(max_length));
  if (!js["corrupted"].isUndefined()) r.corrupted = to_ids(js["corrupted"], size_t(max_length));
  const auto opt = [&](const char* key, int& out) {
    if (!js[key].isUndefined()) out = int(to_integer(js[key], key, -1, kIntMax));
  };
  opt("position", r.patching.position);
  opt("answerClean", r.patching.answer_clean);
  opt("answerCorrupt", r.patching.answer_corrupt);
  return r;
}

val matrix_to_js(ConstMatRef m) { return js_value(Mat(m)); }

std::vector<int32_t> to_task_ids(const val& ids) {
  std::vector<int32_t> x = to_ids(ids, kMaxTaskIds);
  require(!x.empty(), "ids must not be empty");
  return x;
}

SelfAttentionArgs to_self_attention_args(const val& js) {
  require(js.typeOf().as<std::string>() == "object" && !js.isNull(),
          "selfAttention expects {X, Wq, Wk, Wv, causal}, got ", type_of(js));
  SelfAttentionArgs a;
  a.X = to_mat(js["X"], "X", kMaxSelfAttentionT, kMaxSelfAttentionWidth);
  a.Wq = to_mat(js["Wq"], "Wq", kMaxSelfAttentionWidth, kMaxSelfAttentionWidth);
  a.Wk = to_mat(js["Wk"], "Wk", kMaxSelfAttentionWidth, kMaxSelfAttentionWidth);
  a.Wv = to_mat(js["Wv"], "Wv", kMaxSelfAttentionWidth, kMaxSelfAttentionWidth);
  a.causal = to_bool(js["causal"], "causal", false);
  return a;
}

namespace {

constexpr int kMaxLessonHeads = 64;
const char* const kMultiHeadKeys[] = {"X", "Wq", "Wk", "Wv", "Wo", "mask", "causal"};

// An array of 1 to kMaxLessonHeads matrices.
std::vector<Mat> to_mats(const val& js, const char* name) {
  require(js.isArray(), name, " must be an array of matrices (one per head), got ", type_of(js));
  const int n = js["length"].as<int>();
  require(n >= 1 && n <= kMaxLessonHeads, name, " has ", n, " matrices; expected 1 to ",
          kMaxLessonHeads);
  std::vector<Mat> out;
  for (int h = 0; h < n; ++h)
    out.push_back(to_mat(js[h], str_cat(name, "[", h, "]").c_str(), kMaxSelfAttentionWidth,
                         kMaxSelfAttentionWidth));
  return out;
}

}  // namespace

MultiHeadArgs to_multi_head_args(const val& js) {
  require(is_object(js), "multiHeadSelfAttention expects {X, Wq, Wk, Wv, Wo, mask}, got ",
          type_of(js));
  check_keys(js, kMultiHeadKeys, "multiHeadSelfAttention", ErrorKind::Input);
  MultiHeadArgs a;
  a.X = to_mat(js["X"], "X", kMaxSelfAttentionT, kMaxSelfAttentionWidth);
  a.Wq = to_mats(js["Wq"], "Wq");
  a.Wk = to_mats(js["Wk"], "Wk");
  a.Wv = to_mats(js["Wv"], "Wv");
  a.Wo = to_mat(js["Wo"], "Wo", kMaxSelfAttentionWidth, kMaxSelfAttentionWidth);
  const bool causal = to_bool(js["causal"], "causal", false);
  const val mask = js["mask"];
  if (!mask.isUndefined()) {
    require(!causal, "give mask or causal, not both");
    const size_t T = size_t(a.X.rows());
    a.mask = copy_in<uint8_t>(mask, "Uint8Array", "mask", T * T);
  } else if (causal) {
    a.mask = causal_cells(int(a.X.rows()));
  }
  return a;
}

const char* const kBlockKeys[] = {"config", "ids", "x", "ropePair", "ropeHead"};

BlockStagesInput to_block_input(const val& js) {
  require(is_object(js), "transformerBlock expects {config, ids | x, ropePair, ropeHead}, got ",
          type_of(js));
  check_keys(js, kBlockKeys, "transformerBlock", ErrorKind::Input);
  BlockStagesInput in;
  in.config = to_trainer_config(js["config"].isUndefined() ? val::object() : js["config"]);
  const val ids = js["ids"], x = js["x"];
  require(ids.isUndefined() != x.isUndefined(), "give ids or x, one of them");
  if (!x.isUndefined()) in.x = to_mat(x, "x", kMaxSelfAttentionT, kMaxSelfAttentionWidth);
  else in.ids = copy_in<int32_t>(ids, "Int32Array", "ids", kMaxSelfAttentionT);
  if (!js["ropePair"].isUndefined()) in.rope_pair = to_integer(js["ropePair"], "ropePair", 0, kIntMax);
  if (!js["ropeHead"].isUndefined()) in.rope_head = to_integer(js["ropeHead"], "ropeHead", 0, kIntMax);
  return in;
}

const char* const kLessonKeys[] = {"tokens", "dModel", "dk", "dv", "heads", "seed"};

LessonArgs to_lesson_args(const val& js) {
  require(is_object(js), "lessonInputs expects {tokens, dModel, dk, dv, heads, seed}, got ",
          type_of(js));
  check_keys(js, kLessonKeys, "lessonInputs", ErrorKind::Input);
  const val tokens = js["tokens"];
  require(tokens.isArray(), "tokens must be an array of strings, got ", type_of(tokens));
  const int T = tokens["length"].as<int>();
  require(T >= 1 && T <= kLessonMaxWords, "tokens has ", T, " words; expected 1 to ",
          kLessonMaxWords);
  LessonArgs a;
  for (int t = 0; t < T; ++t) {
    const val w = tokens[t];
    require(w.isString(), "tokens[", t, "] must be a string, got ", type_of(w));
    a.tokens.push_back(w.as<std::string>());
  }
  a.d_model = int(to_integer(js["dModel"], "dModel", 1, kLessonMaxWidth));
  a.dk = int(to_integer(js["dk"], "dk", 1, kLessonMaxWidth));
  a.dv = int(to_integer(js["dv"], "dv", 1, kLessonMaxWidth));
  a.heads = js["heads"].isUndefined() ? 1 : int(to_integer(js["heads"], "heads", 1, kLessonMaxHeads));
  a.seed = to_seed(js["seed"]);
  return a;
}

Mat to_matrix_arg(const val& js, const char* name) {
  return to_mat(js, name, kMaxSelfAttentionT, kMaxSelfAttentionWidth);
}

// ---- C++ -> JS

val to_js(const TrainerConfig& c) {
  val js = val::object();
  for (const ConfigKey& k : config_keys()) {
    const std::string name = js_key(k.name);
    switch (k.type) {
      case ConfigType::Int: js.set(name, key_value<int>(c, k)); break;
      case ConfigType::UInt64: js.set(name, static_cast<double>(key_value<uint64_t>(c, k))); break;
      case ConfigType::Float: js.set(name, shortest_decimal(key_value<float>(c, k))); break;
      case ConfigType::Bool: js.set(name, key_value<bool>(c, k)); break;
      case ConfigType::String: js.set(name, value_text(c, k)); break;
    }
  }
  return js;
}

val to_js(const Trainer::Ablation& a, const TrainerConfig& c) {
  val off = val::array(), frozen = val::array();
  const int n_heads = c.model.n_layers * c.model.n_heads;  // global, layer-major
  for (int h = 0; h < n_heads; ++h) {
    off.call<void>("push", a.heads_off.empty() ? false : a.heads_off[size_t(h)] != 0);
    frozen.call<void>("push", a.heads_frozen.empty() ? false : a.heads_frozen[size_t(h)] != 0);
  }
  val js = val::object();
  js.set("headsOff", off);
  js.set("headsFrozen", frozen);
  js.set("scaleScores", a.scale_scores);
  js.set("mask", std::string(mask_mode_name(a.mask)));
  return js;
}

val to_js(const Predictions& p, const std::vector<int32_t>& answers) {
  val js = val::object();
  js.set("k", p.k);
  js.set("top", js_value(p.top));
  js.set("probs", js_value(p.probs));
  js.set("answers", js_value(answers));
  js.set("answerProbs", js_value(p.answer_probs));
  return js;
}

int js_thread_capacity() {
  if (!threads_supported()) return 1;
  const val pool = val::module_property("threadPoolSize");
  return pool.isNumber() ? std::max(1, pool.as<int>() + 1) : 1;
}

val attention_to_js(const Mat& weights, const Mat& logits, const TrainerConfig& c, int T) {
  val js = val::object();
  js.set("weights", copy_out("Float32Array", weights.data(), size_t(weights.size())));
  js.set("logits", copy_out("Float32Array", logits.data(), size_t(logits.size())));
  js.set("nHeads", c.model.n_heads);
  js.set("nLayers", c.model.n_layers);
  js.set("seqLen", T);
  js.set("vocabSize", int(logits.cols()));  // the model's: with [MASK] for an mlm model
  return js;
}

val js_value(double x) { return val(x); }
val js_value(bool x) { return val(x); }
val js_value(const std::string& s) { return val(s); }
val js_value(const char* s) { return val(std::string(s)); }
val js_value(const std::vector<float>& v) { return copy_out("Float32Array", v.data(), v.size()); }
val js_value(const std::vector<double>& v) { return copy_out("Float64Array", v.data(), v.size()); }

val js_value(const std::vector<std::vector<double>>& v) {
  val out = val::array();
  for (const std::vector<double>& row : v) out.call<void>("push", js_value(row));
  return out;
}
val js_value(const std::vector<int32_t>& v) { return copy_out("Int32Array", v.data(), v.size()); }
val js_value(const std::vector<uint8_t>& v) { return copy_out("Uint8Array", v.data(), v.size()); }
val js_value(const RowVec& v) { return copy_out("Float32Array", v.data(), size_t(v.size())); }

namespace {
template <typename M>
val matrix(const char* array_type, const M& m) {
  val js = val::object();
  js.set("data", copy_out(array_type, m.data(), size_t(m.size())));
  js.set("rows", static_cast<int>(m.rows()));
  js.set("cols", static_cast<int>(m.cols()));
  return js;
}
}  // namespace

val js_value(const Mat& m) { return matrix("Float32Array", m); }
val js_value(const IntMat& m) { return matrix("Int32Array", m); }
val js_value(MatOrNull m) { return m.m->size() == 0 ? val::null() : js_value(*m.m); }

#define ATTN_JS_PUT(T) \
  void put(val& js, const char* name, T x) { js.set(name, js_value(x)); }
ATTN_JS_PUT(double)
ATTN_JS_PUT(bool)
ATTN_JS_PUT(const std::string&)
ATTN_JS_PUT(const char*)
ATTN_JS_PUT(const std::vector<float>&)
ATTN_JS_PUT(const std::vector<double>&)
ATTN_JS_PUT(const std::vector<int32_t>&)
ATTN_JS_PUT(const std::vector<uint8_t>&)
ATTN_JS_PUT(const RowVec&)
ATTN_JS_PUT(const Mat&)
ATTN_JS_PUT(const IntMat&)
ATTN_JS_PUT(MatOrNull)
#undef ATTN_JS_PUT

// ---- The lesson's panels: why sqrt(dk), softmax stability.

uint64_t to_seed(const val& v) { return uint64_t(to_integer(v, "seed", 0, 4294967295.0)); }

RowVec to_logits(const val& v) {
  const std::vector<float> x = copy_in<float>(v, "Float32Array", "logits", 64);
  require(!x.empty(), "logits must hold at least one value");
  RowVec r = Eigen::Map<const RowVec>(x.data(), Eigen::Index(x.size()));
  require(r.allFinite(), "logits contain NaN or Infinity");
  return r;
}

std::vector<float> to_next_logits(const val& v) {
  std::vector<float> x = copy_in<float>(v, "Float32Array", "logits", 65536);
  require(!x.empty(), "logits must hold at least one value");
  return x;
}

std::vector<float> to_probs(const val& v) {
  std::vector<float> x = copy_in<float>(v, "Float32Array", "probs", 65536);
  require(!x.empty(), "probs must hold at least one value");
  return x;
}

SamplingOptions to_sampling_options(const val& v) {
  SamplingOptions o;
  if (v.isUndefined()) return o;
  require(is_object(v), "the sampling options must be an object, got ", type_of(v));
  check_keys(v, std::initializer_list<const char*>{"temperature", "topK", "topP", "minP"},
             "sampling option", ErrorKind::Input);
  if (!v["temperature"].isUndefined()) o.temperature = float(to_number(v["temperature"], "temperature"));
  if (!v["topK"].isUndefined()) o.top_k = int(to_integer(v["topK"], "topK", 0, 65536));
  if (!v["topP"].isUndefined()) o.top_p = float(to_number(v["topP"], "topP"));
  if (!v["minP"].isUndefined()) o.min_p = float(to_number(v["minP"], "minP"));
  return o;
}

// ---- Speculative decoding and tiled attention.

SpeculativeArgs to_speculative_args(const val& js, SpeculativeCall call) {
  const char* what = call == SpeculativeCall::Exactness    ? "speculativeExactness"
                     : call == SpeculativeCall::Acceptance ? "expectedAcceptance"
                                                           : "speculative";
  require(is_object(js), what, " options must be an object, got ", type_of(js));
  SpeculativeArgs a;
  if (call == SpeculativeCall::Acceptance) {
    check_keys(js, std::initializer_list<const char*>{"ids", "options", "window"}, what,
               ErrorKind::Input);
    a.prompt = copy_in<int32_t>(js["ids"], "Int32Array", "ids", size_t(kMaxPromptTokens));
    a.options.sampling = to_sampling_options(js["options"]);
    if (!js["window"].isUndefined()) a.options.window = to_integer(js["window"], "window", 0, kIntMax);
    return a;
  }
  std::vector<const char*> known = {"prompt", "draftTokens", "options", "seed", "window"};
  if (call != SpeculativeCall::Exactness) known.push_back("tokens");
  if (call == SpeculativeCall::Generate) known.push_back("comparePlain");
  if (call == SpeculativeCall::Exactness) known.push_back("samples");
  check_keys(js, known, what, ErrorKind::Input);
  a.prompt = copy_in<int32_t>(js["prompt"], "Int32Array", "prompt", size_t(kMaxPromptTokens));
  if (call != SpeculativeCall::Exactness) a.tokens = to_integer(js["tokens"], "tokens", 0, kIntMax);
  if (!js["draftTokens"].isUndefined())
    a.options.draft_tokens = to_integer(js["draftTokens"], "draftTokens", -kIntMax, kIntMax);
  a.options.sampling = to_sampling_options(js["options"]);
  if (!js["seed"].isUndefined()) a.options.seed = to_seed(js["seed"]);
  if (!js["window"].isUndefined()) a.options.window = to_integer(js["window"], "window", 0, kIntMax);
  a.compare_plain = to_bool(js["comparePlain"], "comparePlain", true);
  if (call == SpeculativeCall::Exactness) a.samples = to_integer(js["samples"], "samples", -kIntMax, kIntMax);
  return a;
}

val speculative_chunk_to_js(const SpeculativeDecoder& d, size_t from) {
  val js = val::object();
  js.set("tokens", js_value(std::vector<int32_t>(d.tokens().begin() + from, d.tokens().end())));
  js.set("fates", js_value(fate_bytes(d.fates(), from)));
  js.set("done", d.done());
  return js;
}

TiledTraceArgs to_tiled_trace_args(const val& js) {
  require(is_object(js), "tiledAttention expects {config, ids | x, head, tileSize}, got ", type_of(js));
  check_keys(js, std::initializer_list<const char*>{"config", "ids", "x", "head", "tileSize"},
             "tiledAttention", ErrorKind::Input);
  TiledTraceArgs a;
  val block = val::object();
  for (const char* k : {"config", "ids", "x"})
    if (!js[k].isUndefined()) block.set(k, js[k]);
  a.block = to_block_input(block);
  a.head = to_integer(js["head"], "head", -kIntMax, kIntMax);
  a.tile = to_integer(js["tileSize"], "tileSize", -kIntMax, kIntMax);
  return a;
}

}  // namespace attn::js
