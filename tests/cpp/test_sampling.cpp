// Decoding (cpp/attn/model/sampling.h): next_token_distribution by hand, against the GPT lesson's
// samplers (tests/reference/make_sampling_reference.py wrote data/sampling/cases.json), and the
// inverse-CDF draw.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attn/base/json.h"
#include "attn/io/weights.h"
#include "attn/model/sampling.h"
#include "expect_error.h"
#include "reference_dir.h"

using namespace attn;

namespace {

SamplingOptions sampling_options(float temperature, int top_k = 0, float top_p = 1.0f, float min_p = 0.0f) {
  SamplingOptions o;
  o.temperature = temperature;
  o.top_k = top_k;
  o.top_p = top_p;
  o.min_p = min_p;
  return o;
}

void check_probs(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  double sum = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("token " << i);
    CHECK(std::abs(double(got[i]) - want[i]) <= tol);
    if (want[i] == 0.0) CHECK(got[i] == 0.0f);  // excluded means exactly 0
    sum += got[i];
  }
  CHECK(std::abs(sum - 1.0) <= 1e-6);
}

}  // namespace

TEST_CASE("next_token_distribution: each strategy by hand") {
  // logits ln 4, ln 2, ln 1, ln 1: softmax 0.5, 0.25, 0.125, 0.125.
  const std::vector<float> l = {std::log(4.0f), std::log(2.0f), 0.0f, 0.0f};
  check_probs(next_token_distribution(l, sampling_options(1)), {0.5, 0.25, 0.125, 0.125}, 1e-7);
  // Temperature 0.5 squares the odds: 16, 4, 1, 1 over 22.
  check_probs(next_token_distribution(l, sampling_options(0.5f)), {16 / 22., 4 / 22., 1 / 22., 1 / 22.}, 1e-7);
  // Greedy: all the mass on the largest logit.
  check_probs(next_token_distribution(l, sampling_options(0)), {1, 0, 0, 0}, 0);
  // Top-k 2: 0.5 and 0.25 renormalised.
  check_probs(next_token_distribution(l, sampling_options(1, 2)), {2 / 3., 1 / 3., 0, 0}, 1e-7);
  // Top-p 0.75 reaches 0.75 exactly at the second token, which is kept; 0.76 needs a third, and of
  // the two tied 0.125s the lower id.
  check_probs(next_token_distribution(l, sampling_options(1, 0, 0.75f)), {2 / 3., 1 / 3., 0, 0}, 1e-7);
  check_probs(next_token_distribution(l, sampling_options(1, 0, 0.76f)), {0.5 / 0.875, 0.25 / 0.875, 0.125 / 0.875, 0}, 1e-7);
  // Top-p small keeps the most likely token alone.
  check_probs(next_token_distribution(l, sampling_options(1, 0, 0.1f)), {1, 0, 0, 0}, 0);
  // Min-p 0.5: threshold 0.25, so 0.5 and 0.25 stay.
  check_probs(next_token_distribution(l, sampling_options(1, 0, 1, 0.5f)), {2 / 3., 1 / 3., 0, 0}, 1e-7);
  // Min-p 0.25 keeps the ties at the threshold (>=).
  check_probs(next_token_distribution(l, sampling_options(1, 0, 1, 0.25f)), {0.5, 0.25, 0.125, 0.125}, 1e-7);
}

TEST_CASE("next_token_distribution: the strategies chain in the order temperature, top-k, top-p, min-p") {
  const std::vector<float> l = {std::log(4.0f), std::log(2.0f), 0.0f, 0.0f};
  // Top-k 3 gives 4/7, 2/7, 1/7, 0; then top-p 0.8 needs the second token (6/7 >= 0.8): 2/3, 1/3.
  check_probs(next_token_distribution(l, sampling_options(1, 3, 0.8f)), {2 / 3., 1 / 3., 0, 0}, 1e-7);
  // Top-k 3 then min-p 0.3 (threshold 0.3 * 4/7): keeps 4/7 and 2/7 (>= 0.171), drops 1/7.
  check_probs(next_token_distribution(l, sampling_options(1, 3, 1, 0.3f)), {2 / 3., 1 / 3., 0, 0}, 1e-7);
  // Temperature first: at T 2 the odds are 2 : sqrt 2 : 1 : 1, so top-p 0.5 keeps two tokens.
  const double a = 2, b = std::sqrt(2.0), s = a + b + 2;
  REQUIRE(a / s < 0.5);
  check_probs(next_token_distribution(l, sampling_options(2, 0, 0.5f)), {a / (a + b), b / (a + b), 0, 0}, 1e-6);
}

TEST_CASE("next_token_distribution: matches the GPT lesson's samplers (tests/reference)") {
  const std::vector<uint8_t> bytes = read_file(testdata::reference_dir() + "/sampling/cases.json");
  const json::Value root = json::parse(std::string(bytes.begin(), bytes.end()));
  const json::Value* cases = root.find("cases");
  REQUIRE(cases);
  REQUIRE(cases->array.size() >= 30);
  int with_draws = 0;
  for (const json::Value& c : cases->array) {
    INFO("case " << c.find("name")->string);
    std::vector<float> logits;
    for (const json::Value& x : c.find("logits")->array) logits.push_back(float(x.number));
    const SamplingOptions o = sampling_options(float(c.find("temperature")->number), int(c.find("top_k")->number),
                                   float(c.find("top_p")->number), float(c.find("min_p")->number));
    std::vector<double> want;
    for (const json::Value& x : c.find("probs")->array) want.push_back(x.number);
    const std::vector<float> got = next_token_distribution(logits, o);
    check_probs(got, want, 2e-6);
    // The same u values (our Rng's, ported to the script) pick the same tokens.
    if (const json::Value* draws = c.find("draws")) {
      ++with_draws;
      Rng rng(uint64_t(c.find("seed")->integer));
      for (size_t i = 0; i < draws->array.size(); ++i) {
        INFO("draw " << i);
        CHECK(sample_token(got.data(), int(got.size()), rng) == draws->array[i].integer);
      }
    }
  }
  CHECK(with_draws >= 10);
}

TEST_CASE("sample_token: the inverse CDF never draws an excluded token, and follows the distribution") {
  const std::vector<float> p = {0.0f, 0.7f, 0.0f, 0.3f};
  Rng rng(5);
  int counts[4] = {0, 0, 0, 0};
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++counts[sample_token(p.data(), 4, rng)];
  CHECK(counts[0] == 0);
  CHECK(counts[2] == 0);
  CHECK(std::abs(counts[1] / double(n) - 0.7) < 0.02);
  // Same seed, same draws.
  Rng a(9), b(9);
  for (int i = 0; i < 50; ++i) CHECK(sample_token(p.data(), 4, a) == sample_token(p.data(), 4, b));
}

TEST_CASE("next_token_distribution: bad options and logits are input errors naming the value") {
  const std::vector<float> l = {0.0f, 1.0f};
  check_error([&] { next_token_distribution(l, sampling_options(-1)); }, ErrorKind::Input, "", "temperature (-1)");
  check_error([&] { next_token_distribution(l, sampling_options(1, 3)); }, ErrorKind::Input, "", "top_k (3)");
  check_error([&] { next_token_distribution(l, sampling_options(1, 0, 0)); }, ErrorKind::Input, "", "top_p (0)");
  check_error([&] { next_token_distribution(l, sampling_options(1, 0, 1, 1.5f)); }, ErrorKind::Input, "", "min_p (1.5)");
  check_error([&] { next_token_distribution({0.0f, NAN}, sampling_options(1)); }, ErrorKind::Input, "", "logit 1");
  check_error([&] { next_token_distribution(std::vector<float>{}, sampling_options(1)); }, ErrorKind::Input, "", "empty");
  const std::vector<float> zeros = {0.0f, 0.0f};
  Rng rng(1);
  check_error([&] { sample_token(zeros.data(), 2, rng); }, ErrorKind::Input, "", "no token");
}
