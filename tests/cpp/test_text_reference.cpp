// PyTorch parity of a text model's export: tests/reference/data/text holds a
// text model the native CLI trained and saved (2 layers, D 32, H 4, T 32, pre-norm LayerNorm,
// RoPE, GELU, on the default corpus) and greedy.json, the greedy continuation that
// tests/reference/make_text_reference.py computed with block.py's BlockLM (the file loaded with
// load_state_dict(strict=True); a full forward over the sliding window at every step). The core
// loads the same file with load_model and read_vocab; generate() must pick the same characters,
// and the cached and uncached decoders must give PyTorch's logits at every step, through and past
// the window, within test_reference.cpp's output tolerances.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "attn/base/json.h"
#include "attn/data/text.h"
#include "attn/io/weights.h"
#include "attn/model/decoder.h"
#include "attn/teach/selftest.h"
#include "compare.h"
#include "reference_dir.h"

using namespace attn;

TEST_CASE("text reference: the greedy continuation and its logits match PyTorch",
          "[text][reference]") {
  const std::string dir = testdata::reference_dir() + "/text/";
  const std::vector<uint8_t> listing = read_file(dir + "greedy.json");
  const json::Value ref = json::parse(std::string(listing.begin(), listing.end()));
  const std::vector<uint8_t> bytes = read_file(dir + ref.find("weights")->string);
  const auto model = load_model(bytes.data(), bytes.size());
  const std::optional<std::u32string> vocab = read_vocab(bytes.data(), bytes.size());
  REQUIRE(vocab);
  const int V = model->config.vocab_size;
  REQUIRE(int(vocab->size()) == V);

  const std::string prompt = ref.find("prompt")->string;
  const int n = int(ref.find("tokens")->integer);
  const int window = int(ref.find("window")->integer);
  CHECK(window == model->config.max_context_length);
  std::vector<int32_t> expected_ids;
  for (const json::Value& v : ref.find("ids")->array) expected_ids.push_back(int32_t(v.integer));
  const std::vector<json::Value>& logits = ref.find("logits")->array;
  REQUIRE(int(expected_ids.size()) == n);
  REQUIRE(int(logits.size()) == n);
  const std::vector<int32_t> prompt_ids = encode(*vocab, prompt);
  REQUIRE(int(prompt_ids.size()) + n > window);  // the context slides: the test covers it

  SamplingOptions greedy;
  greedy.temperature = 0.0f;
  const std::vector<int32_t> got = generate(*model, prompt_ids, n, greedy, 0);
  CHECK(got == expected_ids);
  CHECK(decode(*vocab, got) == ref.find("continuation")->string);

  for (const bool use_cache : {true, false}) {
    CAPTURE(use_cache);
    Decoder decoder(*model, use_cache);
    const RowVec* ours = nullptr;
    for (int32_t t : prompt_ids) ours = &decoder.push(t);
    for (int i = 0; i < n; ++i) {
      CAPTURE(i);
      std::vector<float> torch;
      for (const json::Value& v : logits[size_t(i)].array) torch.push_back(float(v.number));
      REQUIRE(int(torch.size()) == V);
      const compare::Stats st = compare::within(ours->data(), torch.data(), torch.size(),
                                                kReferenceOutAbs, kReferenceOutRel);
      INFO(st.n << " logits, max |diff| " << st.max_abs_diff << ", " << st.bad
                << " out of tolerance" << st.first_bad);
      CHECK(st.bad == 0);
      ours = &decoder.push(expected_ids[size_t(i)]);
    }
  }
}
