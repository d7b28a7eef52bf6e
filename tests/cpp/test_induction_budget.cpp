// The induction preset's convergence budget, measured on real training: two
// layers with the residual stream learn the induction task within the budget, one layer does not;
// the phase change is found, and the trained heads show the circuit (a previous-token head in
// layer 1, a prefix-matching head in layer 2, composing above the random baseline).
// Native only (tests/cpp/tests.cmake): several thousand steps take minutes under node.
#include <catch2/catch.hpp>

#include <algorithm>

#include "attn/interp/readouts.h"
#include "attn/train/trainer.h"

namespace {

// Measured with the preset's emb_init_std 0.5 on seeds 0-7 (cpp/README.md, "Induction heads"): the
// phase change at 442-572 steps, training accuracy >= 0.9 first seen by step 650. The budget covers
// the slowest seed more than twice. (With the curriculum's 0.02 the same seeds need 1,200 to 4,000.)
constexpr int kBudget = 1500;
constexpr uint64_t kTestSeeds[] = {0, 2};

// The preset of cpp/README.md, "Induction heads" ("watch an induction head form").
attn::TrainerConfig induction_preset(uint64_t seed, int layers) {
  attn::TrainerConfig c;
  c.vocab_size = 32;
  c.d_model = 32;
  c.n_heads = 2;
  c.seq_len = 32;
  c.batch_size = 32;
  c.lr = 5e-3f;
  c.seed = seed;
  c.task = "induction";
  c.n_layers = layers;
  c.residual = true;
  c.emb_init_std = 0.5f;
  return c;
}

}  // namespace

TEST_CASE("induction: 2 layers with residual reach 0.9 within the budget, 1 layer stays below 0.3",
          "[induction][budget]") {
  for (uint64_t seed : kTestSeeds) {
    CAPTURE(seed);
    attn::Trainer two(induction_preset(seed, 2));
    // Checked every 250 steps; stops once solved (the budget is an upper bound).
    float acc = 0.0f;
    int steps = 0;
    while (steps < kBudget && acc < 0.9f) {
      two.step(250);
      steps += 250;
      acc = evaluate(two.model(), two.data(), 8).accuracy;
    }
    CAPTURE(steps, acc);
    CHECK(acc >= 0.9f);
    // The phase change was found, before the end of the budget.
    const int64_t phase = two.phase_change_step();
    CAPTURE(phase);
    CHECK(phase > 0);
    CHECK(phase <= steps);
    // The circuit: some layer-1 head attends to the previous token, some layer-2 head to the
    // position after the earlier occurrence, and that pair composes well above random heads.
    const attn::HeadScores s = head_scores(two.model(), two.data());
    const int H = 2;
    const int prev = int(std::max_element(s.previous_token.begin(), s.previous_token.begin() + H) -
                         s.previous_token.begin());
    const int ind = int(std::max_element(s.prefix_matching.begin() + H, s.prefix_matching.end()) -
                        s.prefix_matching.begin()) - H;
    CAPTURE(s.previous_token, s.prefix_matching, s.composition, s.composition_baseline);
    CHECK(s.previous_token[size_t(prev)] > 0.5f);
    CHECK(s.prefix_matching[size_t(H + ind)] > 0.5f);
    CHECK(s.composition[size_t(prev * H + ind)] > 1.5f * s.composition_baseline);
    // Knocking out the previous-token head breaks the circuit (the Ablation panel's
    // claim): the induction head's prefix-matching score falls below half and the accuracy well
    // down. Where the other layer-1 head carries some of the previous-token signal too (seed 2:
    // previous-token scores 0.67 and 0.52), the copy half survives (accuracy 0.60, from 0.99);
    // without both layer-1 heads it is gone.
    attn::Trainer::Ablation off;
    off.heads_off.assign(size_t(2 * H), 0);
    off.heads_off[size_t(prev)] = 1;
    two.set_ablation(off);
    const attn::HeadScores knocked = head_scores(two.model(), two.data());
    const float knocked_acc = evaluate(two.model(), two.data(), 8).accuracy;
    off.heads_off[size_t(1 - prev)] = 1;
    two.set_ablation(off);
    const float layer1_off_acc = evaluate(two.model(), two.data(), 8).accuracy;
    CAPTURE(knocked.prefix_matching, knocked_acc, layer1_off_acc);
    CHECK(knocked.prefix_matching[size_t(H + ind)] < 0.5f * s.prefix_matching[size_t(H + ind)]);
    CHECK(knocked_acc < 0.7f);
    CHECK(layer1_off_acc < 0.3f);
  }
  attn::Trainer one(induction_preset(kTestSeeds[0], 1));
  one.step(kBudget);
  const float acc = evaluate(one.model(), one.data(), 8).accuracy;
  CAPTURE(acc);
  CHECK(acc < 0.3f);
}
