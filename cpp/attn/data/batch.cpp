#include "attn/data/batch.h"

#include "attn/nn/loss.h"

namespace attn {

const char* batch_kind_name(BatchKind kind) { return kBatchKindNames[static_cast<int>(kind)]; }

const char* batch_kind_produced(BatchKind kind) {
  static constexpr const char* produced[] = {"token-id batches",
                                             "float batches (images, audio frames)",
                                             "source/target pair batches"};
  return produced[static_cast<int>(kind)];
}

const char* batch_kind_taken(BatchKind kind) {
  static constexpr const char* taken[] = {"token ids", "float inputs", "source/target pairs"};
  return taken[static_cast<int>(kind)];
}

Batch ids_batch(const int32_t* ids, int B, int T) {
  Batch b;
  b.inputs = Eigen::Map<const IntMat>(ids, B, T);
  b.targets.setConstant(B, T, kIgnoreIndex);
  return b;
}

void check_batch(const Batch& b) {
  const Eigen::Index B = b.targets.rows(), T = b.targets.cols();
  const char* kind = batch_kind_name(b.kind);
  require(B >= 1 && T >= 1, "a ", kind, " batch needs targets of at least one row and column, got (",
          B, ",", T, ")");
  const bool ids = b.kind != BatchKind::Floats, floats = b.kind == BatchKind::Floats,
             pair = b.kind == BatchKind::Pair;
  if (ids)
    require(b.inputs.rows() == B && b.inputs.cols() == T, "a ", kind, " batch's inputs are (",
            b.inputs.rows(), ",", b.inputs.cols(), "), its targets (", B, ",", T, ")");
  else
    require(b.inputs.size() == 0, "a floats batch carries no token ids, got inputs (",
            b.inputs.rows(), ",", b.inputs.cols(), ")");
  if (floats)
    require(b.floats.rows() == B * T && b.floats.cols() >= 1, "a floats batch's floats are (",
            b.floats.rows(), ",", b.floats.cols(), "), expected (", B * T, ",F) with F >= 1");
  else
    require(b.floats.size() == 0, "a ", kind, " batch carries no floats, got (", b.floats.rows(),
            ",", b.floats.cols(), ")");
  if (pair)
    require(b.source.rows() == B && b.source.cols() >= 1, "a pair batch's source is (",
            b.source.rows(), ",", b.source.cols(), "), expected (", B, ",S) with S >= 1");
  else
    require(b.source.size() == 0, "a ", kind, " batch carries no source, got (", b.source.rows(),
            ",", b.source.cols(), ")");
}

}  // namespace attn
