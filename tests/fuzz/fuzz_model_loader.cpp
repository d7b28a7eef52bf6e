// libFuzzer target: the model loader, i.e. the safetensors reader plus config inference
// (infer_config) and load_model / load_weights. Every input either loads or throws
// std::invalid_argument. A model that loads runs one eval forward pass, and saving it, loading
// the saved bytes and saving again gives the same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <vector>

#include "attn/io/weights.h"
#include "attn/model/model.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_model_loader: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attn::ModelConfig inferred;
  try {
    inferred = attn::infer_config(data, size);
  } catch (const std::invalid_argument&) {
    // load_model must refuse the same input.
    try {
      attn::load_model(data, size);
    } catch (const std::invalid_argument&) {
      return 0;
    }
    fail("load_model accepted a file infer_config refused");
  }
  std::unique_ptr<attn::TinyAttentionLM> model;
  try {
    model = attn::load_model(data, size);
  } catch (const std::invalid_argument&) {
    return 0;  // e.g. a non-finite weight: config fine, values not
  }
  const attn::ModelConfig& c = model->config;
  if (c.vocab_size != inferred.vocab_size || c.d_model != inferred.d_model ||
      c.n_heads != inferred.n_heads || c.max_context_length != inferred.max_context_length)
    fail("load_model's config differs from infer_config's");

  // One short sequence through the loaded weights.
  const int T = c.max_context_length < 4 ? c.max_context_length : 4;
  std::vector<int32_t> ids(T);
  for (int t = 0; t < T; ++t) ids[t] = (t * 7 + 3) % c.vocab_size;
  attn::TinyAttentionLM::State state;
  model->forward(ids.data(), 1, T, state);
  if (state.logits.rows() != T || state.logits.cols() != c.vocab_size)
    fail("forward gave logits of the wrong shape");

  // save -> load -> save is a fixed point.
  const std::vector<uint8_t> saved = attn::save_model(*model);
  std::unique_ptr<attn::TinyAttentionLM> again = attn::load_model(saved.data(), saved.size());
  if (attn::save_model(*again) != saved) fail("save(load(save(m))) != save(m)");
  return 0;
}
