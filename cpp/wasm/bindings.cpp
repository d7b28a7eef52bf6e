// Embind bindings: the JS API of DESIGN.md, declared in web/src/core/attention-core.d.ts.
// The only file that includes Emscripten headers. It converts types and checks JS input; the math
// lives in cpp/attn. Data crosses as copies: JS never keeps a view into the wasm heap.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <iomanip>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/bench.h"
#include "attn/selftest.h"
#include "attn/tensor.h"
#include "attn/trainer.h"
#include "attn/weights.h"

namespace {

using attn::ErrorKind;
using attn::Mat;
using attn::require;
using attn::require_config;
using attn::str_cat;
using attn::TrainerConfig;
using emscripten::typed_memory_view;
using emscripten::val;

// ---- Errors: every C++ exception reaches JS as an Error carrying the C++ message, its .kind
// (attn::error_kind_name: "config", "input", "nonFinite", "format", "state", "io", or "internal"
// for an exception that is not an attn::Error / attn::RuntimeError) and, when the core named
// one, its .key (the JS config key, e.g. "dModel"); without a key there is no .key property.
// ("io" never reaches JS: no call here reads or writes files.)

// Runs body. A C++ exception is copied into strings inside the catch block and thrown as an
// Error after the block has ended, so the C++ exception object is already freed.
template <typename Body>
auto js_call(Body&& body) -> decltype(body()) {
  std::string message, key;
  ErrorKind kind = ErrorKind::Internal;
  try {
    return body();
  } catch (const std::exception& e) {
    message = e.what();
    kind = attn::error_kind(e);
    key = attn::error_key(e);
  }
  val error = val::global("Error").new_(message);
  error.set("kind", std::string(attn::error_kind_name(kind)));
  if (!key.empty()) error.set("key", key);
  error.throw_();
}

// ---- JS -> C++ conversions. Each names the key it reads. A bad value of a Trainer config key
// throws kind config with that key; any other bad argument throws kind input.

std::string type_of(const val& v) {
  if (v.isNull()) return "null";
  if (v.isArray()) return "an array";
  return v.typeOf().as<std::string>();
}

// Throws an attn::Error "<name><rest>" when cond is false; kind Config gets name as its key.
template <typename... Args>
void require_value(bool cond, ErrorKind kind, const std::string& name, const Args&... rest) {
  if (!cond) throw attn::Error(kind, kind == ErrorKind::Config ? name : "", str_cat(name, rest...));
}

// A finite JS number; name is the key or argument it came from, kind Config for a config key.
double to_number(const val& v, const std::string& name, ErrorKind kind = ErrorKind::Input) {
  require_value(v.isNumber(), kind, name, " must be a number, got ", type_of(v));
  const double d = v.as<double>();
  require_value(std::isfinite(d), kind, name, " (", d, ") must be a finite number");
  return d;
}

// A JS number that is an integer in [lo, hi]. For config keys the range only guards the
// conversion; TrainerConfig::validate has the real bounds.
int64_t to_integer(const val& v, const std::string& name, double lo, double hi,
                   ErrorKind kind = ErrorKind::Input) {
  const double d = to_number(v, name, kind);
  require_value(d == std::trunc(d), kind, name, " (", d, ") must be an integer");
  require_value(d >= lo && d <= hi, kind, name, " (", d, ") must be in [",
                static_cast<int64_t>(lo), ", ", static_cast<int64_t>(hi), "]");
  return static_cast<int64_t>(d);
}

constexpr double kIntMax = 2147483647.0;
constexpr double kMaxSafeInteger = 9007199254740991.0;  // Number.MAX_SAFE_INTEGER

const char* const kConfigKeys[] = {"vocabSize", "dModel",  "nHeads",      "seqLen",     "batchSize",
                                   "lr",        "seed",    "attnDropout", "outDropout", "task"};

// Throws (with the given kind, no key) naming the first own key of the object js that is not in
// known ("unknown <what> key 'x'; the keys are a b c").
template <size_t N>
void check_keys(const val& js, const char* const (&known)[N], const char* what, ErrorKind kind) {
  const val keys = val::global("Object").call<val>("keys", js);
  const int n_keys = keys["length"].as<int>();
  for (int i = 0; i < n_keys; ++i) {
    const std::string key = keys[i].as<std::string>();
    bool ok = false;
    std::string list;
    for (const char* k : known) {
      ok = ok || key == k;
      list += list.empty() ? k : str_cat(" ", k);
    }
    if (!ok)
      throw attn::Error(kind, "",
                        str_cat("unknown ", what, " key '", key, "'; the keys are ", list));
  }
}

// {vocabSize, ...} -> TrainerConfig. Missing keys keep the DemoConfig defaults; a key of the
// wrong type, an unknown key or a value out of range throws naming the key.
TrainerConfig to_trainer_config(const val& js) {
  require_config(js.typeOf().as<std::string>() == "object" && !js.isNull() && !js.isArray(), "",
                 "config must be an object, got ", type_of(js));
  check_keys(js, kConfigKeys, "config", ErrorKind::Config);
  auto has = [&](const char* key) { return !js[key].isUndefined(); };
  // A config key that is an integer, or a float.
  auto integer = [&](const char* key, double lo, double hi) {
    return to_integer(js[key], key, lo, hi, ErrorKind::Config);
  };
  auto number = [&](const char* key) {
    return static_cast<float>(to_number(js[key], key, ErrorKind::Config));
  };
  TrainerConfig c;
  if (has("vocabSize")) c.vocab_size = integer("vocabSize", -kIntMax, kIntMax);
  if (has("dModel")) c.d_model = integer("dModel", -kIntMax, kIntMax);
  if (has("nHeads")) c.n_heads = integer("nHeads", -kIntMax, kIntMax);
  if (has("seqLen")) c.seq_len = integer("seqLen", -kIntMax, kIntMax);
  if (has("batchSize")) c.batch_size = integer("batchSize", -kIntMax, kIntMax);
  if (has("lr")) c.lr = number("lr");
  if (has("seed")) c.seed = integer("seed", 0, kMaxSafeInteger);
  if (has("attnDropout")) c.attn_dropout = number("attnDropout");
  if (has("outDropout")) c.out_dropout = number("outDropout");
  if (has("task")) {
    const val task = js["task"];
    require_config(task.isString(), "task", "task must be a string, got ", type_of(task));
    c.task = task.as<std::string>();
  }
  c.validate(TrainerConfig::KeyStyle::Js);
  return c;
}

// The shortest decimal that reads back as f, so config() shows lr 0.005, not 0.004999999888.
double shortest_decimal(float f) {
  for (int digits = 6;; ++digits) {
    const double d = std::stod(str_cat(std::setprecision(digits), f));
    if (static_cast<float>(d) == f || digits == 9) return d;
  }
}

val to_js_config(const TrainerConfig& c) {
  val js = val::object();
  js.set("vocabSize", c.vocab_size);
  js.set("dModel", c.d_model);
  js.set("nHeads", c.n_heads);
  js.set("seqLen", c.seq_len);
  js.set("batchSize", c.batch_size);
  js.set("lr", shortest_decimal(c.lr));
  js.set("seed", static_cast<double>(c.seed));
  js.set("attnDropout", shortest_decimal(c.attn_dropout));
  js.set("outDropout", shortest_decimal(c.out_dropout));
  js.set("task", c.task);
  return js;
}

// Copies n elements of a C++ buffer into a new JS typed array (e.g. "Float32Array").
template <typename T>
val copy_out(const char* array_type, const T* data, size_t n) {
  return val::global(array_type).new_(typed_memory_view(n, data));
}

// Copies a JS typed array of the given type into a new vector; the length is checked first, so
// a huge array is refused before anything is allocated.
template <typename T>
std::vector<T> copy_in(const val& array, const char* array_type, const char* name,
                       size_t max_length) {
  require(array.instanceof(val::global(array_type)), name, " must be of type ", array_type,
          ", got ", type_of(array));
  const size_t n = array["length"].as<size_t>();
  require(n <= max_length, name, " has ", n, " elements, more than the ", max_length, " allowed");
  std::vector<T> out(n);
  val(typed_memory_view(n, out.data())).call<void>("set", array);
  return out;
}

// {data: Float32Array, rows, cols} -> Mat, the matrix format of selfAttention.
Mat to_mat(const val& obj, const char* name, int max_rows, int max_cols) {
  require(obj.typeOf().as<std::string>() == "object" && !obj.isNull(), name,
          " must be {data: Float32Array, rows, cols}, got ", type_of(obj));
  const std::string prefix(name);
  const int rows = to_integer(obj["rows"], prefix + ".rows", 1, max_rows);
  const int cols = to_integer(obj["cols"], prefix + ".cols", 1, max_cols);
  const std::vector<float> data =
      copy_in<float>(obj["data"], "Float32Array", (prefix + ".data").c_str(),
                     static_cast<size_t>(rows) * cols);
  require(data.size() == static_cast<size_t>(rows) * cols, name, ".data has ", data.size(),
          " elements but rows * cols = ", rows, " * ", cols, " = ", rows * cols);
  Mat m = Eigen::Map<const Mat>(data.data(), rows, cols);
  require(m.allFinite(), name, ".data contains NaN or Infinity");
  return m;
}

val from_mat(const Mat& m) {
  val js = val::object();
  js.set("data", copy_out("Float32Array", m.data(), m.size()));
  js.set("rows", static_cast<int>(m.rows()));
  js.set("cols", static_cast<int>(m.cols()));
  return js;
}

// ---- The API table's entries.

attn::Trainer* new_trainer(val config) {
  return js_call([&] { return new attn::Trainer(to_trainer_config(config)); });
}

float trainer_step(attn::Trainer& t, val n) {
  return js_call([&] {
    return t.step(static_cast<int>(to_integer(n, "step count", 0, kIntMax)));
  });
}

float trainer_last_accuracy(attn::Trainer& t) { return t.last_accuracy(); }

float trainer_eval_accuracy(attn::Trainer& t, val n) {
  return js_call([&] {
    return t.eval_accuracy(static_cast<int>(to_integer(n, "evalAccuracy batches", 1, 1000)));
  });
}

float trainer_peek_loss(attn::Trainer& t) {
  return js_call([&] { return t.peek_loss(); });
}

val trainer_loss_history(attn::Trainer& t) {
  const std::vector<float>& h = t.loss_history();
  return copy_out("Float32Array", h.data(), h.size());
}

val trainer_attention(attn::Trainer& t, val ids) {
  return js_call([&] {
    const std::vector<int32_t> tokens =
        copy_in<int32_t>(ids, "Int32Array", "ids", t.config().seq_len);
    Mat weights, logits;
    t.attention(tokens.data(), static_cast<int>(tokens.size()), weights, logits);
    val out = val::object();
    out.set("weights", copy_out("Float32Array", weights.data(), weights.size()));
    out.set("logits", copy_out("Float32Array", logits.data(), logits.size()));
    out.set("nHeads", t.config().n_heads);
    out.set("seqLen", static_cast<int>(tokens.size()));
    out.set("vocabSize", t.config().vocab_size);
    return out;
  });
}

val trainer_export_weights(attn::Trainer& t) {
  return js_call([&] {
    const std::vector<uint8_t> bytes = attn::save_model(t.model());
    return copy_out("Uint8Array", bytes.data(), bytes.size());
  });
}

// A safetensors file is parameters plus a JSON header; 1 GiB is far above any valid config.
constexpr size_t kMaxWeightsBytes = size_t{1} << 30;

void trainer_import_weights(attn::Trainer& t, val bytes) {
  js_call([&] {
    const std::vector<uint8_t> data =
        copy_in<uint8_t>(bytes, "Uint8Array", "bytes", kMaxWeightsBytes);
    attn::load_weights(t.model(), data.data(), data.size());
  });
}

val trainer_evaluate(attn::Trainer& t, val n) {
  return js_call([&] {
    const attn::Trainer::Evaluation e =
        t.evaluate(static_cast<int>(to_integer(n, "evaluate batches", 1, 1000)));
    val out = val::object();
    out.set("loss", e.loss);
    out.set("accuracy", e.accuracy);
    return out;
  });
}

// A JS boolean (undefined gives fallback).
bool to_bool(const val& v, const std::string& name, bool fallback) {
  if (v.isUndefined()) return fallback;
  require(v.isTrue() || v.isFalse(), name, " must be a boolean, got ", type_of(v));
  return v.isTrue();
}

// An array of H booleans (undefined: none set).
std::vector<uint8_t> to_head_flags(const val& v, const std::string& name, int H) {
  if (v.isUndefined()) return {};
  require(v.isArray(), name, " must be an array of ", H, " booleans, got ", type_of(v));
  const int n = v["length"].as<int>();
  require(n == H, name, " has ", n, " entries, expected one per head (", H, ")");
  std::vector<uint8_t> out(static_cast<size_t>(H));
  for (int h = 0; h < H; ++h) out[size_t(h)] = to_bool(v[h], str_cat(name, "[", h, "]"), false);
  return out;
}

const char* const kAblationKeys[] = {"zeroed", "frozen", "scaleScores", "mask"};

void trainer_set_ablation(attn::Trainer& t, val js) {
  js_call([&] {
    require(js.typeOf().as<std::string>() == "object" && !js.isNull() && !js.isArray(),
            "ablation must be an object, got ", type_of(js));
    check_keys(js, kAblationKeys, "ablation", ErrorKind::Input);
    const int H = t.config().n_heads;
    attn::Trainer::Ablation a;
    a.zeroed = to_head_flags(js["zeroed"], "zeroed", H);
    a.frozen = to_head_flags(js["frozen"], "frozen", H);
    a.scale_scores = to_bool(js["scaleScores"], "scaleScores", true);
    const val mask = js["mask"];
    if (!mask.isUndefined()) {
      require(mask.isString(), "mask must be a string, got ", type_of(mask));
      a.mask = attn::parse_mask_mode(mask.as<std::string>());
    }
    t.set_ablation(a);
  });
}

val trainer_ablation(attn::Trainer& t) {
  const attn::Trainer::Ablation& a = t.ablation();
  val zeroed = val::array(), frozen = val::array();
  for (int h = 0; h < t.config().n_heads; ++h) {
    zeroed.call<void>("push", a.zeroed.empty() ? false : a.zeroed[size_t(h)] != 0);
    frozen.call<void>("push", a.frozen.empty() ? false : a.frozen[size_t(h)] != 0);
  }
  val out = val::object();
  out.set("zeroed", zeroed);
  out.set("frozen", frozen);
  out.set("scaleScores", a.scale_scores);
  out.set("mask", std::string(attn::mask_mode_name(a.mask)));
  return out;
}

val trainer_attention_stats(attn::Trainer& t) {
  return js_call([&] {
    const attn::Trainer::HeadStats st = t.attention_stats();
    val out = val::object();
    out.set("entropy", copy_out("Float32Array", st.entropy.data(), st.entropy.size()));
    out.set("maxWeight", copy_out("Float32Array", st.max_weight.data(), st.max_weight.size()));
    out.set("answerMass", copy_out("Float32Array", st.answer_mass.data(), st.answer_mass.size()));
    return out;
  });
}

val from_row(const attn::RowVec& v) { return copy_out("Float32Array", v.data(), size_t(v.size())); }

val trainer_row_backward(attn::Trainer& t, val ids, val head, val query, val target) {
  return js_call([&] {
    const std::vector<int32_t> tokens =
        copy_in<int32_t>(ids, "Int32Array", "ids", t.config().seq_len);
    const int T = static_cast<int>(tokens.size());
    const attn::Trainer::RowBackward r = t.row_backward(
        tokens.data(), T, static_cast<int>(to_integer(head, "head", -kIntMax, kIntMax)),
        static_cast<int>(to_integer(query, "query", -kIntMax, kIntMax)),
        static_cast<int>(to_integer(target, "target", -kIntMax, kIntMax)));
    const auto& g = r.row;
    val out = val::object();
    out.set("loss", r.loss);
    out.set("q", from_row(g.q));
    out.set("k", from_mat(g.k));
    out.set("v", from_mat(g.v));
    out.set("scores", from_row(g.scores));
    out.set("weights", from_row(g.weights));
    out.set("out", from_row(g.out));
    out.set("dOut", from_row(g.d_out));
    out.set("dWeights", from_row(g.d_weights));
    out.set("dScores", from_row(g.d_scores));
    out.set("dQ", from_row(g.d_q));
    out.set("dK", from_mat(g.d_k));
    out.set("dV", from_mat(g.d_v));
    out.set("scale", t.model().attn.score_scale());
    return out;
  });
}

// {weights, input, expected} as Uint8Arrays (the three files of one reference case) or null.
val trainer_self_test(attn::Trainer& t, val reference) {
  return js_call([&] {
    attn::ReferenceCase ref;
    const bool given = !reference.isNull() && !reference.isUndefined();
    if (given) {
      require(reference.typeOf().as<std::string>() == "object",
              "reference must be {weights, input, expected} or null, got ", type_of(reference));
      ref.weights = copy_in<uint8_t>(reference["weights"], "Uint8Array", "reference.weights", kMaxWeightsBytes);
      ref.input = copy_in<uint8_t>(reference["input"], "Uint8Array", "reference.input", kMaxWeightsBytes);
      ref.expected = copy_in<uint8_t>(reference["expected"], "Uint8Array", "reference.expected", kMaxWeightsBytes);
    }
    const std::vector<attn::SelfTestResult> results = attn::run_self_tests(t.model(), given ? &ref : nullptr);
    val out = val::array();
    for (const attn::SelfTestResult& r : results) {
      val o = val::object();
      o.set("id", r.id);
      o.set("name", r.name);
      o.set("maxError", r.max_error);
      o.set("tolerance", r.tolerance);
      o.set("pass", r.pass);
      o.set("detail", r.detail);
      out.call<void>("push", o);
    }
    return out;
  });
}

val task_targets(val task, val ids) {
  return js_call([&] {
    require_config(task.isString(), "task", "task must be a string, got ", type_of(task));
    const attn::Task k = attn::parse_task(task.as<std::string>());
    const std::vector<int32_t> x = copy_in<int32_t>(ids, "Int32Array", "ids", 4096);
    require(!x.empty(), "ids must not be empty");
    std::vector<int32_t> y(x.size());
    attn::task_targets(k, x.data(), static_cast<int>(x.size()), y.data());
    return copy_out("Int32Array", y.data(), y.size());
  });
}

val trainer_config(attn::Trainer& t) { return to_js_config(t.config()); }
double trainer_steps_done(attn::Trainer& t) { return static_cast<double>(t.steps_done()); }
double trainer_history_stride(attn::Trainer& t) { return static_cast<double>(t.history_stride()); }

// The single-head view's bounds: T tokens typed by hand, small widths.
constexpr int kMaxSelfAttentionT = 1024, kMaxSelfAttentionWidth = 4096;

val self_attention(val args) {
  return js_call([&] {
    require(args.typeOf().as<std::string>() == "object" && !args.isNull(),
            "selfAttention expects {X, Wq, Wk, Wv, causal}, got ", type_of(args));
    const Mat X = to_mat(args["X"], "X", kMaxSelfAttentionT, kMaxSelfAttentionWidth);
    const Mat Wq = to_mat(args["Wq"], "Wq", kMaxSelfAttentionWidth, kMaxSelfAttentionWidth);
    const Mat Wk = to_mat(args["Wk"], "Wk", kMaxSelfAttentionWidth, kMaxSelfAttentionWidth);
    const Mat Wv = to_mat(args["Wv"], "Wv", kMaxSelfAttentionWidth, kMaxSelfAttentionWidth);
    const val causal = args["causal"];
    require(causal.isUndefined() || causal.isTrue() || causal.isFalse(),
            "causal must be a boolean, got ", type_of(causal));
    const attn::AttentionStages s = attn::self_attention_stages(X, Wq, Wk, Wv, causal.isTrue());
    val out = val::object();
    out.set("Q", from_mat(s.Q));
    out.set("K", from_mat(s.K));
    out.set("V", from_mat(s.V));
    out.set("scores", from_mat(s.scores));
    out.set("scaledScores", from_mat(s.scaled_scores));
    out.set("maskedScores", from_mat(s.masked_scores));
    out.set("weights", from_mat(s.weights));
    out.set("output", from_mat(s.output));
    return out;
  });
}

// Bytes the allocator has handed out and not taken back: lets the tests see a leak long before
// it would grow the wasm memory.
double heap_bytes_in_use() { return static_cast<double>(mallinfo().uordblks); }

val default_config() { return to_js_config(TrainerConfig{}); }

// reps products of (n,n) matrices with the training kernel, for the benchmarks' GFLOP/s.
double gemm_probe(int n, int reps) {
  return js_call([&] { return static_cast<double>(attn::gemm_probe(n, reps)); });
}

#ifdef __wasm_simd128__
constexpr bool kSimd = true;
#else
constexpr bool kSimd = false;
#endif

}  // namespace

EMSCRIPTEN_BINDINGS(attention_core) {
  using namespace emscripten;
  class_<attn::Trainer>("Trainer")
      .constructor(&new_trainer, allow_raw_pointers())
      .function("step", &trainer_step)
      .function("peekLoss", &trainer_peek_loss)
      .function("lastAccuracy", &trainer_last_accuracy)
      .function("evalAccuracy", &trainer_eval_accuracy)
      .function("lossHistory", &trainer_loss_history)
      .function("attention", &trainer_attention)
      .function("exportWeights", &trainer_export_weights)
      .function("importWeights", &trainer_import_weights)
      .function("evaluate", &trainer_evaluate)
      .function("setAblation", &trainer_set_ablation)
      .function("ablation", &trainer_ablation)
      .function("attentionStats", &trainer_attention_stats)
      .function("rowBackward", &trainer_row_backward)
      .function("selfTest", &trainer_self_test)
      .function("config", &trainer_config)
      .function("stepsDone", &trainer_steps_done)
      .function("historyStride", &trainer_history_stride);
  function("selfAttention", &self_attention);
  function("taskTargets", &task_targets);
  function("defaultConfig", &default_config);
  function("heapBytesInUse", &heap_bytes_in_use);
  function("gemmProbe", &gemm_probe);
  constant("simd", kSimd);
}
