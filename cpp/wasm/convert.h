// Conversions between JS values and the core's types, for the Embind table in bindings.cpp.
// With bindings.cpp, the only code that includes Emscripten headers. No math here, and the
// values are the core's to validate: a reader checks what it must to convert (types, unknown
// keys, integer ranges, lengths before a copy). Results are copied into new JS objects and typed
// arrays, so JS never keeps a view into the wasm heap, which moves when memory grows.
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "attn/data/text.h"
#include "attn/interp/inspect.h"
#include "attn/interp/length_eval.h"
#include "attn/interp/readouts.h"
#include "attn/kernels/ops.h"
#include "attn/model/fill.h"
#include "attn/model/sampling.h"
#include "attn/model/speculative.h"
#include "attn/nn/attention.h"
#include "attn/teach/block_stages.h"
#include "attn/teach/lesson.h"
#include "attn/teach/selftest.h"
#include "attn/teach/tiled_trace.h"
#include "attn/train/bench.h"
#include "attn/train/trainer.h"
#include "wasm/structs.h"

namespace attn::js {

using emscripten::val;

// ---- Errors

// Throws a JS Error with message, .kind (error_kind_name: "config", "input", "nonFinite",
// "format", "state", "io" or "internal") and, when key is not empty, .key (a JS config key).
[[noreturn]] void throw_error(const std::string& message, ErrorKind kind, const std::string& key);

// Runs body and returns its result. A C++ exception becomes a JS Error carrying its message, its
// kind (internal for an exception that is not an attn::Error or RuntimeError) and its key in JS
// spelling. The strings are copied out in the catch block and the Error is thrown after it, once
// the C++ exception object is freed.
template <typename Body>
auto js_call(Body&& body) -> decltype(body()) {
  std::string message, key;
  ErrorKind kind = ErrorKind::Internal;
  try {
    return body();
  } catch (const std::exception& e) {
    message = e.what();
    kind = error_kind(e);
    key = js_key(error_key(e));
  }
  throw_error(message, kind, key);
}

// The threads the JS API accepts: the pthread workers the module started (Module.threadPoolSize)
// + 1 in the threads build, else 1.
int js_thread_capacity();

// ---- JS -> C++. Each reader names the key or argument it reads. A bad value of a Trainer config
// key throws kind config with that key; any other bad argument throws kind input.

// {vocabSize, ...} -> TrainerConfig, one key per row of the schema (train/config.h) in camelCase. A
// missing key keeps its DemoConfig default; a key of the wrong type or an unknown key throws.
// The values' bounds are then checked by TrainerConfig::validate, its messages in JS names.
TrainerConfig to_trainer_config(const val& js);
// TrainerConfig::validate with the keys in the messages spelled as in JS (js_key).
void validate_js(const TrainerConfig& c);

// A JS number that is an integer in [lo, hi] (by default the range of int, which only guards the
// conversion).
constexpr double kIntMax = 2147483647.0;
int to_int(const val& v, const char* name, double lo = -kIntMax, double hi = kIntMax);
// A JS number (any value; the core checks its range).
double to_double(const val& v, const char* name);
// A Float64Array of at most max_length values.
std::vector<double> to_doubles(const val& v, const char* name, size_t max_length);

// An Int32Array of at most max_length token ids.
std::vector<int32_t> to_ids(const val& ids, size_t max_length);
// taskTargets' ids: an Int32Array of 1 to 4096 ids.
std::vector<int32_t> to_task_ids(const val& ids);

// A Uint8Array of at most 1 GiB (a safetensors file).
std::vector<uint8_t> to_bytes(const val& bytes, const char* name);

// {headsOff, headsFrozen, scaleScores, mask}; a missing key takes the default. A head list has
// n_layers * n_heads entries of config c (or none), global head g = l * n_heads + h.
Trainer::Ablation to_ablation(const val& js, const TrainerConfig& c);

// {weights, input, expected} as Uint8Arrays into out; false for null or undefined.
bool to_reference(const val& js, ReferenceCase& out);

// A task name, for taskTargets (kind config, key task, as for a Trainer config).
std::string to_task_name(const val& task);
// {lag, markovOrder} (either optional; other keys ignored, so a config object will do) -> the
// tasks' settings, their defaults where absent.
TaskParams to_task_params(const val& params);

// A text as UTF-8 bytes: a JS string (Embind encodes it) or a Uint8Array of the file's bytes (so a
// file that is not valid UTF-8 reaches the core's check as it is).
std::string to_text(const val& text, const char* name);
// fill's options {blank, top}: blank one character (default "_"), top an integer (default 1).
struct FillOptions {
  char32_t blank = kDefaultBlank;
  int top = 1;
};
FillOptions to_fill_options(const val& js);

// new Decoder(trainer, {useCache, window}): the options checked (unknown keys, types).
struct DecoderOptions {
  bool use_cache = true;
  int window = 0;
};
DecoderOptions to_decoder_options(const val& js);
// trainer.inspect({ids, answers?, corrupted?, position?, answerClean?, answerCorrupt?}).
InspectRequest to_inspect_request(const val& js, int max_length);
val matrix_to_js(ConstMatRef m);  // Matrix

// selfAttention's argument {X, Wq, Wk, Wv, causal}, each matrix {data: Float32Array, rows, cols}.
struct SelfAttentionArgs {
  Mat X, Wq, Wk, Wv;
  bool causal = false;
};
SelfAttentionArgs to_self_attention_args(const val& js);

// multiHeadSelfAttention's argument {X, Wq, Wk, Wv, Wo, mask, causal}: Wq, Wk, Wv arrays of one
// matrix per head (1 to 64 heads), mask a Uint8Array of T*T cells (nonzero = masked) or absent;
// causal (default false) only without a mask.
struct MultiHeadArgs {
  Mat X, Wo;
  std::vector<Mat> Wq, Wk, Wv;
  CellMask mask;
};
MultiHeadArgs to_multi_head_args(const val& js);
// transformerBlock's argument {config, ids | x, ropePair, ropeHead}: config a Trainer config
// (to_trainer_config; only the block's keys matter), ids an Int32Array of token ids or x a
// matrix (T, dModel) (one of them), ropePair and ropeHead integers (default 0).
BlockStagesInput to_block_input(const val& js);
// addPositions' argument: one matrix E.
Mat to_matrix_arg(const val& js, const char* name);
// lessonInputs' argument {tokens, dModel, dk, dv, heads, seed}: tokens an array of strings.
struct LessonArgs {
  std::vector<std::string> tokens;
  int d_model, dk, dv, heads;
  uint64_t seed;
};
LessonArgs to_lesson_args(const val& js);

// ---- C++ -> JS, in the shapes of web/src/core/attention-core.d.ts. A struct with a field table
// (structs.h) converts by it (to_js in fields.h; its interface is in core-structs.ts); these are the
// results shaped by hand.

val to_js(const TrainerConfig& c);                  // ResolvedTrainerConfig
val to_js(const Trainer::Ablation& a, const TrainerConfig& c);  // Required<Ablation>, L*H heads
// Predictions with the answers they were measured against (T entries).
val to_js(const Predictions& p, const std::vector<int32_t>& answers);  // Predictions
// AttentionResult of one sequence of T tokens: weights (L*H*T,T) layer-major, logits (T,V).
val attention_to_js(const Mat& weights, const Mat& logits, const TrainerConfig& c, int T);


// ---- The lesson's panels: why sqrt(dk), softmax stability (scalingDemo, softmaxSteps).

// A seed: an integer in [0, 2^32 - 1], the range of the page's seed setting.
uint64_t to_seed(const val& v);
// softmaxSteps' logits: a Float32Array of 1 to 64 finite values.
RowVec to_logits(const val& v);

// ---- Decoding: nextTokenDistribution's arguments.

// Logits of one next token: a Float32Array of 1 to 65536 values (finiteness is the core's check).
std::vector<float> to_next_logits(const val& v);
// {temperature, topK, topP, minP}, each optional (the core's defaults); unknown keys refused.
SamplingOptions to_sampling_options(const val& v);
// Sampler.draw's probabilities: a Float32Array of 1 to 65536 values (the core checks them).
std::vector<float> to_probs(const val& v);

// ---- Speculative decoding and tiled attention.

// The options of a speculative generation or exactness check: {prompt (Int32Array of token ids),
// tokens, draftTokens, options (SamplingOptions), seed, window}, plus comparePlain (generation)
// or samples (exactness); what is absent takes the core's default. Unknown keys refused.
struct SpeculativeArgs {
  std::vector<int32_t> prompt;
  int tokens = 0;
  SpeculativeOptions options;
  bool compare_plain = true;
  int samples = 0;
};
// Acceptance (expectedAcceptance) reads {ids, options, window}, ids into prompt.
enum class SpeculativeCall { Decoder, Generate, Exactness, Acceptance };
SpeculativeArgs to_speculative_args(const val& js, SpeculativeCall call);
// The tokens and fates from index `from` on: {tokens: Int32Array, fates: Uint8Array, done}.
val speculative_chunk_to_js(const SpeculativeDecoder& d, size_t from);
// tiledAttention's argument: transformerBlock's (to_block_input) plus head and tileSize.
struct TiledTraceArgs {
  BlockStagesInput block;
  int head = 0, tile = 0;
};
TiledTraceArgs to_tiled_trace_args(const val& js);

}  // namespace attn::js
