// The lesson's inputs: the token embeddings and the weights that `attn demo self-attention` and
// the page's lesson view (through the worker) run the NumPy lesson on, made from the core's Rng,
// so the terminal and the page show the same numbers for the same sentence and seed. Only inputs
// are made here; every stage computed from them is nn/attention.h's (self_attention_stages,
// multi_head_self_attention, add_sinusoidal_positions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/base/tensor.h"

namespace attn {

// Bounds of lesson_inputs' arguments (the CLI and the page ask for less).
constexpr int kLessonMaxWords = 64, kLessonMaxWidth = 64, kLessonMaxHeads = 8;

struct LessonInputs {
  // (T,D) the embedding of each word: D draws of N(0, 1) from the word's own stream,
  // Rng(seed ^ fnv1a64(word)), so equal words share a row and a word keeps its row whatever
  // the other words are.
  Mat E;
  // (H) head h's projections: those of the lesson's SelfAttention(d_model, dk, dv, seed + h),
  // Wq, Wk (D,dk) ~ N(0, 2/(D+dk)) and Wv (D,dv) ~ N(0, 2/(D+dv)). Head 0 is the single head.
  std::vector<Mat> Wq, Wk, Wv;
  // (H*dv, D) the output projection, no bias: N(0, 2/(H*dv+D)) from Rng(seed ^ kLessonWoStream).
  Mat Wo;
};
constexpr uint64_t kLessonWoStream = 0x0F0F0F0FULL;

// words (T, compared as given: callers lower-case them first) in [1, kLessonMaxWords]; d_model,
// dk, dv in [1, kLessonMaxWidth]; heads in [1, kLessonMaxHeads]; else an Error of kind Input.
LessonInputs lesson_inputs(const std::vector<std::string>& words, int d_model, int dk, int dv,
                           int heads, uint64_t seed);

// FNV-1a, 64 bits, of the bytes of s: a word's stream.
uint64_t fnv1a64(const std::string& s);

}  // namespace attn
