// The benchmarks' accounting: the products a training step runs are the ones step_products lists
// (shape, layout, count: the model's report, nn/report.h), and their flops are train_step_flops.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>
#include <tuple>

#include "attn/kernels/kernels.h"
#include "attn/train/bench.h"

namespace {

using Shape = std::tuple<std::string, int, int, int>;

// What the kernels record into a log (set_product_log, set_op_log) over one training step of c,
// after a first step (which sizes everything).
template <class Record>
std::vector<Record> one_step_log(const attn::TrainerConfig& c,
                                 void (*set_log)(std::vector<Record>*)) {
  attn::Trainer t(c);
  t.step(1);
  std::vector<Record> log;
  set_log(&log);
  t.step(1);
  set_log(nullptr);
  return log;
}

// The products one training step of c runs, as the kernels recorded them.
std::map<Shape, int> recorded(const attn::TrainerConfig& c) {
  const auto log = one_step_log(c, attn::set_product_log);
  std::map<Shape, int> out;
  for (const auto& r : log) ++out[{r.layout, r.m, r.n, r.k}];
  return out;
}

}  // namespace

TEST_CASE("bench: step_products lists every product of a step", "[bench]") {
  attn::TrainerConfig demo;
  attn::TrainerConfig text = attn::text_preset_config();  // the GPT preset, smaller
  text.task.seq_len = 64;
  text.training.batch_size = 2;
  attn::TrainerConfig grouped = text;  // shapes that collide: D = F, grouped K/V heads, swiglu
  grouped.model.ffn = attn::FfnKind::SwiGLU;
  grouped.model.ffn_mult = 1;
  grouped.model.kv_heads = 2;
  attn::TrainerConfig diff = grouped;  // differential heads: two score maps each, 5 blocks of qkv
  diff.model.differential = true;
  diff.model.norm_position = attn::NormPosition::Post;
  attn::TrainerConfig learned = text;  // learned positions, a masked LM, relu
  learned.model.positions = attn::PositionKind::Learned;
  learned.model.objective = attn::Objective::Mlm;
  learned.model.ffn = attn::FfnKind::ReLU;
  learned.task.name = "copy";
  for (const attn::TrainerConfig& c : {demo, text, grouped, diff, learned}) {
    CAPTURE(c.task, c.model.ffn, c.model.kv_heads, c.model.differential);
    const attn::Trainer t(c);
    const std::vector<attn::StepProduct> listed = attn::step_products(t.config());
    std::map<Shape, int> want;
    double flops = 0.0;
    for (const auto& p : listed) {
      want[{p.layout, p.m, p.n, p.k}] += p.calls;
      flops += p.flops();
    }
    CHECK(recorded(c) == want);
    CHECK(flops == Approx(attn::train_step_flops(t.config())).epsilon(1e-12));
  }
}

TEST_CASE("bench: the product profile times every listed product", "[bench]") {
  attn::TrainerConfig c;
  const auto rows = attn::profile_step_products(c, 3);
  const attn::Trainer t(c);
  const auto listed = attn::step_products(t.config());
  REQUIRE(rows.size() == listed.size());
  // Each row is the listed product in the listed order.
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    CAPTURE(r.product.name);
    CHECK(r.product.name == listed[i].name);
    CHECK(std::make_tuple(r.product.layout, r.product.m, r.product.n, r.product.k,
                          r.product.calls) ==
          std::make_tuple(listed[i].layout, listed[i].m, listed[i].n, listed[i].k,
                          listed[i].calls));
  }
  CHECK_THROWS_WITH(attn::profile_step_products(c, 0), Catch::Contains("profile steps (0)"));
  CHECK_THROWS_WITH(attn::product_probe("tt", 2, 2, 2, 1), Catch::Contains("layout (tt)"));
  CHECK(attn::product_probe("tn", 3, 5, 7, 2) == attn::product_probe("tn", 3, 5, 7, 2));
}

TEST_CASE("bench: the op profile names the step's non-product ops, the products and the rest",
          "[bench]") {
  attn::TrainerConfig c = attn::text_preset_config();  // the GPT preset, smaller
  c.training.batch_size = 2;
  c.task.seq_len = 16;
  const auto rows = attn::profile_step_ops(c, 3);
  // The ops one step records, each once, in the order the step first runs them.
  const auto log = one_step_log(c, attn::set_op_log);
  std::vector<std::string> ran;
  for (const auto& r : log)
    if (std::find(ran.begin(), ran.end(), r.name) == ran.end()) ran.push_back(r.name);
  std::vector<std::string> named;
  for (const auto& r : rows) named.push_back(r.name);
  ran.push_back("products");
  ran.push_back("rest");
  CHECK(named == ran);
  for (const char* op : {"embedding", "embedding backward", "norm forward", "norm backward", "gelu",
                         "gelu backward", "cross-entropy", "adam", "bias gradient", "copies"}) {
    CAPTURE(op);
    CHECK(std::count(named.begin(), named.end(), op) == 1);
  }
  CHECK_THROWS_WITH(attn::profile_step_ops(c, 0), Catch::Contains("profile steps (0)"));
}

TEST_CASE("bench: timing the ops leaves the training run bit for bit the same", "[bench]") {
  attn::TrainerConfig c = attn::text_preset_config();
  c.training.batch_size = 2;
  c.task.seq_len = 16;
  attn::Trainer plain(c), timed(c);
  plain.step(2);
  std::vector<attn::OpRecord> log;
  attn::set_op_log(&log);
  timed.step(2);
  attn::set_op_log(nullptr);
  CHECK(!log.empty());
  const std::size_t recorded = log.size();
  const float timed_loss = timed.step(1);  // the log is off: nothing more is recorded
  CHECK(log.size() == recorded);
  CHECK(plain.step(1) == timed_loss);
  CHECK(plain.loss_history() == timed.loss_history());
}
