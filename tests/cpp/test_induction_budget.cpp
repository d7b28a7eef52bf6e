// The induction preset's convergence budget, measured on real training: two
// layers with the residual stream learn the induction task within the budget, one layer does not;
// the phase change is found, and the trained heads show the circuit (a previous-token head in
// layer 1, a prefix-matching head in layer 2, composing above the random baseline).
// Native only (tests/cpp/tests.cmake): several thousand steps take minutes under node.
#include <catch2/catch.hpp>

#include <algorithm>

#include "attn/interp/readouts.h"
#include "attn/train/trainer.h"
#include "task_budgets.h"

namespace {

// The preset and its budget are the induction row of tests/task_budgets.json (cpp/attn/README.md,
// "Induction heads"): trained on more seeds here, each checked for the circuit it forms.
constexpr uint64_t kTestSeeds[] = {0, 2};

}  // namespace

TEST_CASE("induction: 2 layers with residual reach the target within the budget, 1 layer stays below 0.3",
          "[induction][budget]") {
  const budgets::Table table = budgets::table();
  const budgets::TaskBudget& preset = table.row("induction");
  REQUIRE(preset.config.model.n_layers == 2);
  for (uint64_t seed : kTestSeeds) {
    CAPTURE(seed);
    budgets::TaskBudget b = preset;
    b.config.training.seed = seed;
    attn::Trainer two(b.config);
    // Stops once solved (the budget is an upper bound).
    const budgets::Run r = budgets::train_to_budget(two, b, table.eval_batches);
    const int steps = r.steps;
    CAPTURE(steps, r.after);
    CHECK(r.after >= b.target);
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
  attn::TrainerConfig one_layer = preset.config;
  one_layer.training.seed = kTestSeeds[0];
  one_layer.model.n_layers = 1;
  attn::Trainer one(one_layer);
  one.step(preset.steps);
  const float acc = evaluate(one.model(), one.data(), 8).accuracy;
  CAPTURE(acc);
  CHECK(acc < 0.3f);
}
