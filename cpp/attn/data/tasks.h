// Training tasks: batches of (inputs, targets) drawn from our deterministic Rng. Each task
// builds a sequence z of length T+1 per row; inputs = z[:-1], targets = z[1:], and a target the
// task cannot determine from the past is kIgnoreIndex (left out of the loss and the accuracy).
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "attn/base/names.h"
#include "attn/base/rng.h"
#include "attn/base/tensor.h"
#include "attn/data/batch.h"
#include "attn/data/markov.h"

namespace attn {

// repeat:  one random id repeated: z = [a, a, ..., a]. Every target is predictable.
// shift:   random ids; the target at t is the previous input x[t-1] (t = 0 is ignored).
// copy:    z[0:h] random, then z[i] = z[i-h]: the second half repeats the first (h = (T+1)/2).
// reverse: z[0:h] random, then z[h:2h] = reversed(z[0:h]).
// sort:    z[0:h] distinct random ids, then z[h:2h] = sorted(z[0:h]) (needs V >= h).
// future:  random ids; the target at t is the next input x[t+1]. No causal model can beat
//          chance (1/V) on it: it exists to show what a broken mask leaks. The last target
//          (z[T], never an input) is ignored.
// induction: random ids in which one segment of L distinct ids (L in induction_lengths(T))
//          occurs twice, at random non-overlapping offsets; the other ids ("fillers") are
//          drawn from the ids not in the segment. Only the positions inside the second
//          occurrence whose next id is the segment's next id count: the first occurrence
//          determines them (find_repeat says where the segment is).
// text:    windows of a corpus of characters (text.h): the target at t is the next character
//          x[t+1]. Its rows come from the corpus (make_text_batch), never from make_batch or
//          task_sample, which throw an Error of kind Input for it; task_targets gives the next
//          input and ignores the last position, whose next character is not among the inputs.
// markov:  symbols of a random Markov chain (data/markov.h) of order k = markov_order over
//          markov_symbols ids, the first k from its stationary distribution: the target at t is the
//          next input x[t+1]; positions t < k - 1 (fewer than k symbols seen) and the last are
//          ignored, so the best possible loss is the chain's entropy rate. Its rows come from the
//          chain (make_markov_batch); make_batch and task_sample throw an Error of kind Input.
// lag:     random ids; the target at t is the input k = lag positions back, x[t-k]; t < k is
//          ignored (lag 1 is shift).
// For copy, reverse and sort only the targets inside the second half are predictable.
enum class Task { Repeat, Shift, Copy, Reverse, Sort, Future, Induction, Text, Markov, Lag };
inline constexpr const char* kTaskNames[] = {"repeat", "shift",     "copy", "reverse",
                                             "sort",   "future",    "induction", "text",
                                             "markov", "lag"};
inline constexpr EnumNames kTasks = {"task", ErrorKind::Config, "task", "TaskName", kTaskNames,
                                     int(std::size(kTaskNames))};

// A name of kTasks; anything else throws an Error of kind Config, key "task", naming the value
// and the choices.
Task parse_task(const std::string& name);
const char* task_name(Task task);
// Every task, in the enum's order.
std::vector<Task> all_tasks();

// The settings some tasks read (TaskConfig's markov_order, markov_symbols and lag; the
// defaults are its defaults).
struct TaskParams {
  int markov_order = 2;    // markov: k, the symbols the next one depends on
  int markov_symbols = 8;  // markov: S, the ids the chain draws (the model's vocabulary)
  int lag = 1;             // lag: k, how far back the target is
};

// Throws an Error of kind Config (key "task", or "seq_len" for T outside [1, 4096], or "lag" for
// a lag >= T) unless the task can build sequences of length T over V ids.
void check_task(Task task, int vocab_size, int T, const TaskParams& params = {});

// What the task's batches carry: token ids for every task of today (Batch, batch.h).
BatchKind task_batch_kind(Task task);

// Fills batch for the task, reusing its storage when (B,T) is unchanged. Not for text (above).
void make_batch(Task task, int vocab_size, int B, int T, Rng& rng, Batch& batch,
                const TaskParams& params = {});

// Fills batch with B rows of T symbols of chain (MarkovChain::draw) and the markov task's targets
// for the chain's order.
void make_markov_batch(const MarkovChain& chain, int B, int T, Rng& rng, Batch& batch);

// The targets the task's rule gives the inputs x (T): what make_batch writes for a row it drew,
// and for any other sequence the answer the rule asks for (kIgnoreIndex where it asks for none).
// Works for every T >= 1 (positions the rule cannot fill are ignored).
void task_targets(Task task, const int32_t* x, int T, int32_t* targets,
                  const TaskParams& params = {});

// The induction task's segment lengths for sequence length T: L in [min, max], where
// max = min(8, T / 2) (both occurrences fit) and min = max(2, min(4, max)).
struct SegmentLengths {
  int min, max;
};
SegmentLengths induction_lengths(int T);

// A segment that occurs twice in a sequence: x[second + i] == x[first + i] for i < length, with
// first + length <= second (no overlap).
struct Repeat {
  int first = -1, second = -1, length = 0;
  bool found() const { return length > 0; }
  bool operator==(const Repeat& o) const {
    return first == o.first && second == o.second && length == o.length;
  }
};

// The induction task's rule for finding its segment in any sequence x (T): among the repeats
// that are maximal (neither occurrence can be extended by one id on either side and stay
// equal), do not overlap, have length >= induction_lengths(T).min and hold distinct ids, the
// longest; ties go to the earliest second occurrence, then the earliest first. None found:
// length 0. The generator redraws its fillers until this rule finds exactly the segment it
// placed, so task_targets and make_batch agree. O(T^2).
Repeat find_repeat(const int32_t* x, int T);
// One sequence (T inputs) from the task's generator: row 0 of make_batch(task, V, B, T, Rng(seed))
// for any B. The page's default sample; seed n + 1 is its "new sample".
std::vector<int32_t> task_sample(Task task, int vocab_size, int T, uint64_t seed,
                                 const TaskParams& params = {});

}  // namespace attn
