// Batch: what one training step reads, and what it carries. A task produces one kind of batch
// (task_batch_kind, tasks.h) and a model family takes one or more kinds (model/family.h); the
// Trainer checks the pair before it builds anything.
#pragma once

#include <iterator>

#include "attn/base/names.h"
#include "attn/base/tensor.h"

namespace attn {

// ids:    token ids (B,T) in, the targets (B,T) out: every task of today, for the lm family.
// floats: F floats per position (an image's patches, an audio clip's frames), (B*T,F) in, a
//         target id per position (B,T) out (kIgnoreIndex where none, e.g. all but one per row
//         for a whole-image label).
// pair:   a source sequence of ids (B,S) and the target side's inputs (B,T) in, the targets (B,T)
//         out: translation-like tasks for an encoder-decoder.
enum class BatchKind { Ids, Floats, Pair };
inline constexpr const char* kBatchKindNames[] = {"ids", "floats", "pair"};
inline constexpr EnumNames kBatchKinds = {"batch kind", ErrorKind::Input, "", "BatchKind",
                                          kBatchKindNames, int(std::size(kBatchKindNames))};
const char* batch_kind_name(BatchKind kind);
// What a task of this kind produces, as an error says it: "token-id batches", "float batches
// (images, audio frames)", "source/target pair batches".
const char* batch_kind_produced(BatchKind kind);
// What a family taking this kind takes: "token ids", "float inputs", "source/target pairs".
const char* batch_kind_taken(BatchKind kind);

// One step's data. kind says which inputs are set; targets are set for every kind. Storage is
// reused when the shapes repeat, so a step allocates nothing after its first.
struct Batch {
  BatchKind kind = BatchKind::Ids;
  IntMat inputs;   // ids, pair: (B,T) token ids (pair: the target side, as the decoder reads it)
  Mat floats;      // floats: (B*T,F), one row of F floats per position
  IntMat source;   // pair: (B,S) the source's token ids
  IntMat targets;  // (B,T), kIgnoreIndex where a position is not predictable
  int rows() const { return int(targets.rows()); }       // B
  int positions() const { return int(targets.cols()); }  // T
};

// A batch of ids (B,T) row-major with every target ignored: what a read-out feeds a model.
Batch ids_batch(const int32_t* ids, int B, int T);

// Throws an Error of kind Input naming the first part of b whose shape disagrees with its kind:
// inputs (ids, pair) or floats (floats) missing or not (B,T) / (B*T,F) with F >= 1, a source
// (pair) with no rows of B or no columns, or inputs of another kind left set.
void check_batch(const Batch& b);

}  // namespace attn
