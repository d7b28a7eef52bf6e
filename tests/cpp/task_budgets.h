// Every task's convergence budget (tests/task_budgets.json, the one table the C++ and JS API
// tests and cpp/cli/README.md's tasks table share) and the one driver that trains a task to it.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attn/base/json.h"
#include "attn/interp/readouts.h"
#include "attn/io/weights.h"
#include "attn/train/trainer.h"
#include "reference_dir.h"

namespace budgets {

struct TaskBudget {
  std::string task;
  attn::TrainerConfig config;  // the DemoConfig with the row's keys (and task) set
  std::string mask;            // the mask to train under ("" keeps the causal one)
  std::string metric;          // "accuracy" or "unigram_margin"
  double target;
  int every, steps;
};

struct Table {
  int eval_batches;
  std::vector<TaskBudget> rows;  // in file order
  const TaskBudget& row(const std::string& task) const {
    for (const TaskBudget& b : rows)
      if (b.task == task) return b;
    FAIL("tests/task_budgets.json has no row for task " << task);
    return rows.front();  // unreachable: FAIL throws
  }
};

// A config key of the table's rows set on c; a key the table uses and this does not know fails.
inline void set_key(attn::TrainerConfig& c, const std::string& key, const attn::json::Value& v) {
  if (key == "vocab_size") c.model.vocab_size = int(v.integer);
  else if (key == "d_model") c.model.d_model = int(v.integer);
  else if (key == "n_heads") c.model.n_heads = int(v.integer);
  else if (key == "seq_len") c.task.seq_len = int(v.integer);
  else if (key == "batch_size") c.training.batch_size = int(v.integer);
  else if (key == "lr") c.training.lr = float(v.number);
  else if (key == "seed") c.training.seed = uint64_t(v.integer);
  else if (key == "n_layers") c.model.n_layers = int(v.integer);
  else if (key == "residual") c.model.residual = v.boolean;
  else if (key == "emb_init_std") c.model.emb_init_std = float(v.number);
  else if (key == "lag") c.task.lag = int(v.integer);
  else if (key == "markov_order") c.task.markov_order = int(v.integer);
  else if (key == "markov_symbols") c.task.markov_symbols = int(v.integer);
  else if (key == "positions") c.model.positions = attn::parse_position_kind(v.string);
  else FAIL("tests/task_budgets.json: config key " << key << " is not handled by task_budgets.h");
}

inline Table table() {
  const std::vector<uint8_t> bytes =
      attn::read_file(testdata::reference_dir() + "/../../task_budgets.json");
  const attn::json::Value doc = attn::json::parse(std::string(bytes.begin(), bytes.end()));
  Table t;
  t.eval_batches = int(doc.find("eval_batches")->integer);
  for (const auto& [task, row] : doc.find("tasks")->object) {
    TaskBudget b;
    b.task = task;
    b.config.task.name = task;
    for (const auto& [key, value] : row.find("config")->object) set_key(b.config, key, value);
    if (const attn::json::Value* m = row.find("mask")) b.mask = m->string;
    b.metric = row.find("metric")->string;
    b.target = row.find("target")->number;
    b.every = int(row.find("every")->integer);
    b.steps = int(row.find("steps")->integer);
    t.rows.push_back(b);
  }
  return t;
}

// The row's metric on the trainer's model now, over n fixed evaluation batches.
inline double metric(attn::Trainer& t, const TaskBudget& b, int n) {
  if (b.metric == "accuracy") return attn::evaluate(t.model(), t.data(), n).accuracy;
  if (b.metric == "unigram_margin") {
    const attn::TextEvaluation e = attn::evaluate_text(t.model(), t.data(), n);
    return e.unigram_nats - e.val_loss;
  }
  FAIL("tests/task_budgets.json: unknown metric " << b.metric);
  return 0;
}

struct Run {
  double before, after;
  int steps;  // the first step count (a multiple of every) whose metric reached the target
};

// Trains t (built from b.config, b.mask set) every b.every steps until the metric reaches
// b.target or b.steps are done.
inline Run train_to_budget(attn::Trainer& t, const TaskBudget& b, int eval_batches) {
  if (!b.mask.empty()) {
    attn::Trainer::Ablation a;
    a.mask = attn::parse_mask_mode(b.mask);
    t.set_ablation(a);
  }
  Run r{metric(t, b, eval_batches), 0, 0};
  r.after = r.before;
  while (r.steps < b.steps && r.after < b.target) {
    t.step(b.every);
    r.steps += b.every;
    r.after = metric(t, b, eval_batches);
  }
  return r;
}

}  // namespace budgets
