// The markov task's chain (data/markov.h): entropy rates of chains computed by hand, the
// stationary distribution, draws against the rate; the markov and lag tasks' batches and their
// config errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attn/data/markov.h"
#include "attn/data/task_data.h"
#include "attn/data/tasks.h"
#include "attn/nn/loss.h"
#include "attn/train/trainer.h"
#include "expect_error.h"

using namespace attn;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

double h2(double p) { return -p * std::log2(p) - (1 - p) * std::log2(1 - p); }

}  // namespace

TEST_CASE("markov: the entropy rate of a two-state chain, by hand") {
  // P(0 -> 1) = 0.5, P(1 -> 0) = 0.25. Stationary: pi0 * 0.5 = pi1 * 0.25, so pi = (1/3, 2/3).
  // H = 1/3 h(0.5) + 2/3 h(0.25) = 1/3 * 1 + 2/3 * 0.811278 = 0.874185 bits.
  const MarkovChain c(1, 2, {0.5, 0.5, 0.25, 0.75});
  CHECK(c.states() == 2);
  CHECK_THAT(c.stationary()[0], WithinAbs(1.0 / 3, 1e-12));
  CHECK_THAT(c.stationary()[1], WithinAbs(2.0 / 3, 1e-12));
  CHECK_THAT(c.entropy_rate_bits(), WithinAbs(0.874185, 1e-6));
  CHECK_THAT(c.entropy_rate_bits(), WithinAbs(1.0 / 3 + 2.0 / 3 * h2(0.25), 1e-12));
}

TEST_CASE("markov: an order-2 chain, by hand, and one that is order 1 in disguise") {
  // 2 symbols, the next is a xor b with probability 0.9 (state (a, b), numbered 2a + b). Every
  // state (b, x) is entered from (0, b) and (1, b) with probabilities summing to 0.9 + 0.1 = 1:
  // doubly stochastic, so pi is uniform and H = h(0.9) = 0.468996 bits.
  std::vector<double> xr;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int x = 0; x < 2; ++x) xr.push_back(x == (a ^ b) ? 0.9 : 0.1);
  const MarkovChain c(2, 2, xr);
  for (double p : c.stationary()) CHECK_THAT(p, WithinAbs(0.25, 1e-12));
  CHECK_THAT(c.entropy_rate_bits(), WithinAbs(0.468996, 1e-6));
  // P(x | a b) = Q(x | b): the same source as the order-1 chain Q, so the same rate.
  const std::vector<double> q = {0.2, 0.7, 0.1, 0.5, 0.25, 0.25, 0.6, 0.3, 0.1};  // 3 symbols
  std::vector<double> lifted;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      for (int x = 0; x < 3; ++x) lifted.push_back(q[size_t(b * 3 + x)]);
  CHECK_THAT(MarkovChain(2, 3, lifted).entropy_rate_bits(),
             WithinAbs(MarkovChain(1, 3, q).entropy_rate_bits(), 1e-10));
  // A periodic chain (0 -> 1 -> 0): the lazy iteration still finds pi = (1/2, 1/2); rate 0.
  const MarkovChain flip(1, 2, {0, 1, 1, 0});
  CHECK_THAT(flip.stationary()[0], WithinAbs(0.5, 1e-12));
  CHECK(flip.entropy_rate_bits() == 0);
}

TEST_CASE("markov: a random chain's stationary distribution is fixed, and draws score its rate") {
  const MarkovChain c = MarkovChain::random(2, 8, 7);
  REQUIRE(c.states() == 64);
  double sum = 0;
  std::vector<double> moved(64, 0.0);
  for (int s = 0; s < 64; ++s) {
    sum += c.stationary()[size_t(s)];
    for (int x = 0; x < 8; ++x) moved[size_t((s % 8) * 8 + x)] += c.stationary()[size_t(s)] * c.next(s, x);
  }
  CHECK_THAT(sum, WithinAbs(1.0, 1e-12));
  for (int s = 0; s < 64; ++s) CHECK_THAT(moved[size_t(s)], WithinAbs(c.stationary()[size_t(s)], 1e-10));
  CHECK(c.entropy_rate_bits() > 0.5);
  CHECK(c.entropy_rate_bits() < 3.0);  // log2 8
  // The mean surprisal of drawn symbols, from the k-th on, is the rate (200 rows of 500).
  Rng rng(3);
  std::vector<int32_t> z(500);
  double bits = 0;
  int n = 0;
  for (int r = 0; r < 200; ++r) {
    c.draw(rng, 500, z.data());
    for (int t = 2; t < 500; ++t, ++n) bits -= std::log2(c.next(z[size_t(t - 2)] * 8 + z[size_t(t - 1)], z[size_t(t)]));
  }
  CHECK_THAT(bits / n, WithinRel(c.entropy_rate_bits(), 0.02));
  // The same seed, the same chain; another, another.
  CHECK(MarkovChain::random(2, 8, 7).entropy_rate_bits() == c.entropy_rate_bits());
  CHECK(MarkovChain::random(2, 8, 8).entropy_rate_bits() != c.entropy_rate_bits());
  CHECK(MarkovChain::random(3, 32, 1).states() == 32768);
}

TEST_CASE("markov: bad chains are refused with one sentence") {
  check_error([] { MarkovChain(1, 2, {0.5, 0.5, 0.5}); }, ErrorKind::Input, "", "needs 4");
  check_error([] { MarkovChain(1, 2, {0.5, 0.6, 0.5, 0.5}); }, ErrorKind::Input, "", "state 0 sum to 1.1");
  check_error([] { MarkovChain(1, 2, {-0.5, 1.5, 0.5, 0.5}); }, ErrorKind::Input, "", "-0.5");
  check_error([] { MarkovChain::random(4, 8, 1); }, ErrorKind::Config, "markov_order", "markov_order (4)");
  check_error([] { MarkovChain::random(2, 33, 1); }, ErrorKind::Config, "markov_symbols", "markov_symbols (33)");
}

TEST_CASE("markov task: rows of the chain, the next symbol from the k-th on, the vocabulary is the chain's") {
  TrainerConfig c;
  c.task.name = "markov";
  c.task.markov_order = 3;
  c.task.markov_symbols = 5;
  c.task.seq_len = 10;
  Trainer t(c);
  CHECK(t.config().model.vocab_size == 5);
  REQUIRE(t.data().chain);
  CHECK(t.data().chain->order() == 3);
  CHECK(t.data().chain->entropy_rate_bits() ==
        markov_chain_for(c.task.params(), c.training.seed)->entropy_rate_bits());
  t.step(1);
  const Batch& b = t.last_batch();
  for (int r = 0; r < b.rows(); ++r)
    for (int i = 0; i < 10; ++i) {
      CHECK(b.inputs(r, i) >= 0);
      CHECK(b.inputs(r, i) < 5);
      // Positions 0 and 1 have seen fewer than 3 symbols; the last has no next input.
      if (i < 2 || i == 9) CHECK(b.targets(r, i) == kIgnoreIndex);
      else CHECK(b.targets(r, i) == b.inputs(r, i + 1));
    }
  // The sample is the chain's, and the same for a seed.
  CHECK(t.data().sample(4) == t.data().sample(4));
  CHECK(t.data().sample(4) != t.data().sample(5));
  // make_batch has no chain.
  Rng rng(1);
  Batch batch;
  CHECK_THROWS_AS(make_batch(Task::Markov, 8, 2, 6, rng, batch), Error);
  // Out of range: an Error of kind Config on the key, one sentence.
  TrainerConfig bad = c;
  bad.task.markov_order = 0;
  check_error([&] { Trainer x(bad); }, ErrorKind::Config, "markov_order", "markov_order (0)");
  bad = c;
  bad.task.markov_symbols = 1;
  check_error([&] { Trainer x(bad); }, ErrorKind::Config, "markov_symbols", "markov_symbols (1)");
  bad = c;
  bad.task.seq_len = 3;  // order 3 scores no position before T = 4
  check_error([&] { Trainer x(bad); }, ErrorKind::Config, "task", "seq_len >= 4");
}

TEST_CASE("lag task: the target at t is the input k back, t < k ignored; lag >= seq_len refused") {
  TaskParams p;
  p.lag = 3;
  Rng rng(5);
  Batch batch;
  make_batch(Task::Lag, 20, 4, 8, rng, batch, p);
  for (int r = 0; r < 4; ++r)
    for (int t = 0; t < 8; ++t)
      CHECK(batch.targets(r, t) == (t < 3 ? kIgnoreIndex : batch.inputs(r, t - 3)));
  // By hand: x = 4 7 1 9 2, lag 2 -> targets -, -, 4, 7, 1.
  const int32_t x[] = {4, 7, 1, 9, 2};
  int32_t y[5];
  p.lag = 2;
  task_targets(Task::Lag, x, 5, y, p);
  CHECK(std::vector<int32_t>(y, y + 5) == std::vector<int32_t>{kIgnoreIndex, kIgnoreIndex, 4, 7, 1});
  // Lag 1 is shift.
  p.lag = 1;
  int32_t s[5];
  task_targets(Task::Lag, x, 5, y, p);
  task_targets(Task::Shift, x, 5, s);
  CHECK(std::vector<int32_t>(y, y + 5) == std::vector<int32_t>(s, s + 5));
  TrainerConfig c;
  c.task.name = "lag";
  c.task.lag = 12;  // seq_len 12
  check_error([&] { Trainer t(c); }, ErrorKind::Config, "lag", "lag (12) must be < seq_len (12)");
  c.task.lag = 0;
  check_error([&] { Trainer t(c); }, ErrorKind::Config, "lag", "lag (0)");
  c.task.lag = 11;
  Trainer ok(c);
  ok.step(1);
  CHECK(ok.last_batch().targets(0, 10) == kIgnoreIndex);
  CHECK(ok.last_batch().targets(0, 11) == ok.last_batch().inputs(0, 0));
}
