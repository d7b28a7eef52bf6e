// libFuzzer target: the Trainer's config and ids path, as the page and the bindings drive it:
// any TrainerConfig (ints, NaN/inf floats, any task name, any seed) must either validate or throw
// std::invalid_argument. A valid config small enough to train quickly builds a Trainer, runs a few
// steps (a non-finite loss is a std::runtime_error that keeps the weights), then attention() on
// fuzzed ids and length: a bad id or length throws std::invalid_argument, and anything it returns
// is finite with rows summing to 1 ((L,H,T,T) weights of a model of any depth; a differential
// head's to 1 - lambda).
#include <fuzzer/FuzzedDataProvider.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "attn/interp/readouts.h"
#include "attn/train/trainer.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_trainer: %s\n", what);
  std::abort();
}

// A key namer unlike the core's own spelling.
std::string upper_case(std::string_view key) {
  std::string s(key);
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// Mostly small values near the bounds, sometimes any int.
int pick_int(FuzzedDataProvider& in, int small_hi) {
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: return in.ConsumeIntegral<int>();
    case 1: return in.ConsumeIntegralInRange<int>(-2, 2);
    default: return in.ConsumeIntegralInRange<int>(1, small_hi);
  }
}

// Any float, including NaN, infinities and denormals, or a plain one in range.
float pick_float(FuzzedDataProvider& in, float lo, float hi) {
  if (in.ConsumeBool()) return in.ConsumeFloatingPoint<float>();
  return in.ConsumeFloatingPointInRange<float>(lo, hi);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  attn::TrainerConfig c;
  c.model.vocab_size = pick_int(in, 40);
  c.model.d_model = pick_int(in, 24);
  c.model.n_heads = pick_int(in, 6);
  c.task.seq_len = pick_int(in, 10);
  c.training.batch_size = pick_int(in, 4);
  c.training.lr = pick_float(in, 0.0f, 12.0f);
  c.training.seed = in.ConsumeIntegral<uint64_t>();
  c.model.attn_dropout = pick_float(in, 0.0f, 1.0f);
  c.model.out_dropout = pick_float(in, 0.0f, 1.0f);
  if (in.ConsumeBool()) c.task.name = in.ConsumeRandomLengthString(16);
  c.model.n_layers = in.ConsumeBool() ? 1 : pick_int(in, 4);
  c.model.residual = in.ConsumeBool();
  // Masked language modelling and the attention variants (names: mostly valid, sometimes not; an
  // enum key keeps its value when the name is not one of its choices).
  const auto pick_name = [&](const char* key, const char* a, const char* b, const char* c3) {
    std::string name;
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: name = a; break;
      case 1: name = b; break;
      case 2: name = c3 ? c3 : a; break;
      default: name = in.ConsumeRandomLengthString(8);
    }
    attn::set_value_text(c, *attn::find_config_key(key), name);
  };
  if (in.ConsumeBool()) {
    pick_name("objective", "causal", "mlm", nullptr);
    c.training.mask_rate = pick_float(in, 0.0f, 0.6f);
    pick_name("attention", "full", "window", "strided");
    c.model.window = pick_int(in, 12);
    c.model.stride = pick_int(in, 12);
    c.model.differential = in.ConsumeBool();
  }
  // validate() spells keys in its messages through a namer (the edges'); snake_case or another.
  const attn::KeyNamer namer = in.ConsumeBool() ? nullptr : &upper_case;
  try {
    c.validate(namer);
  } catch (const std::invalid_argument&) {
    try {
      attn::Trainer t(c);  // the constructor must refuse what validate refuses
    } catch (const std::invalid_argument&) {
      return 0;
    }
    fail("Trainer accepted a config validate() refused");
  }
  // Valid; train only what is quick (the validated bounds allow far larger states).
  if (c.model.vocab_size > 64 || c.model.d_model > 32 || c.task.seq_len > 16 || c.training.batch_size > 8) return 0;

  attn::Trainer t(c);
  const int steps = in.ConsumeIntegralInRange<int>(0, 3);
  try {
    const float loss = t.step(steps);
    if (steps > 0 && !std::isfinite(loss)) fail("step() returned a non-finite loss");
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).find("non-finite") == std::string::npos)
      fail("step() threw something other than the non-finite guard");
  }

  // The model's vocabulary, not the config's: the text task's is the corpus's, and an mlm
  // model's holds [MASK] as its last id.
  const int V = t.model().config.vocab_size;
  const int T = in.ConsumeIntegralInRange<int>(-1, c.task.seq_len + 2);
  std::vector<int32_t> ids;
  for (int i = 0; i < (T > 0 ? T : 0); ++i)
    ids.push_back(in.ConsumeBool() ? in.ConsumeIntegral<int32_t>()
                                   : in.ConsumeIntegralInRange<int32_t>(0, V - 1));
  attn::Mat weights, logits;
  try {
    sequence_attention(t.model(), ids.data(), T, weights, logits);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  if (weights.rows() != c.model.n_layers * c.model.n_heads * T || weights.cols() != T)
    fail("weights have the wrong shape");
  if (logits.rows() != T || logits.cols() != V) fail("logits have the wrong shape");
  if (!weights.allFinite()) fail("non-finite attention weights");
  // Rows sum to 1, a differential head's to 1 - its lambda (row i belongs to head i / T).
  for (Eigen::Index i = 0; i < weights.rows(); ++i) {
    const Eigen::Index g = i / T, l = g / c.model.n_heads, h = g % c.model.n_heads;
    const attn::RowVec& lambda = t.model().layers[size_t(l)].lambda;
    const float want = lambda.size() ? 1.0f - lambda[h] : 1.0f;
    if (std::fabs(weights.row(i).sum() - want) > 1e-4f) fail("an attention row has the wrong sum");
  }
  return 0;
}
