#include "attn/tasks.h"

namespace attn {

Task parse_task(const std::string& name) {
  if (name == "repeat") return Task::Repeat;
  throw std::invalid_argument(str_cat("unknown task '", name, "' (expected repeat)"));
}

const char* task_name(Task task) {
  switch (task) {
    case Task::Repeat:
      return "repeat";
  }
  return "?";
}

void make_batch(Task task, int V, int B, int T, Rng& rng, Batch& batch) {
  require(V >= 1 && B >= 1 && T >= 1, "make_batch needs V, B, T >= 1, got ", V, ", ", B, ", ", T);
  batch.inputs.resize(B, T);
  batch.targets.resize(B, T);
  switch (task) {
    case Task::Repeat:
      for (int b = 0; b < B; ++b) {
        const int32_t id = static_cast<int32_t>(rng.below(static_cast<uint32_t>(V)));
        batch.inputs.row(b).setConstant(id);
        batch.targets.row(b).setConstant(id);
      }
      break;
  }
}

}  // namespace attn
