// The receptive field of a model, measured rather than drawn from a formula: how much the output
// at each position depends on the input at each other position. With L layers of a sliding
// window of W keys, output i depends on no input more than L (W - 1) positions away, and the
// measurement gives exactly 0 there (a masked key's weight is exactly 0, and so is every
// gradient through it).
#pragma once

#include <cstdint>

#include "attn/base/tensor.h"
#include "attn/model/family.h"
#include "attn/model/model.h"

namespace attn {

// attribution (T,T): row i, column j is || d(u . logits_i) / d x_j ||_2, x_j the input of the
// first layer at position j (token embedding plus any position row added to it) and u a fixed
// direction with N(0,1) entries (one Rng(seed) draw per vocabulary entry, the same for every i),
// in eval mode on one sequence ids (T). A random direction keeps every dependence a full
// Jacobian norm would see (it misses one only on a set of measure zero). One batched forward and
// backward: the sequence is repeated T times and copy i is differentiated at its position i.
// Overwrites the model's parameter gradients. ids outside [0, V) or T outside [1, C]: an Error
// of kind Input.
Mat receptive_field(Model& model, const int32_t* ids, int T, uint64_t seed = 0x5EED);

// The farthest distance |i - j| at which row i of an attribution (T,T) is nonzero, per row
// (T entries; 0 when only the position itself counts).
std::vector<int> receptive_reach(const Mat& attribution);

}  // namespace attn
