// Training tasks: batches of (inputs, targets) drawn from our deterministic Rng.
#pragma once

#include <string>

#include "attn/rng.h"
#include "attn/tensor.h"

namespace attn {

enum class Task { Repeat };

// "repeat" -> Task::Repeat; anything else throws std::invalid_argument naming the value.
Task parse_task(const std::string& name);
const char* task_name(Task task);

struct Batch {
  IntMat inputs;   // (B,T)
  IntMat targets;  // (B,T), kIgnoreIndex where a position is not predictable
};

// Fills batch for the task, reusing its storage when (B,T) is unchanged.
// repeat: one random id per row repeated T+1 times; inputs = seq[:, :-1], targets = seq[:, 1:].
void make_batch(Task task, int vocab_size, int B, int T, Rng& rng, Batch& batch);

}  // namespace attn
