#include "attn/teach/lesson.h"

#include <cmath>

#include "attn/base/error.h"
#include "attn/base/rng.h"
#include "attn/nn/attention.h"

namespace attn {

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (const char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001B3ULL;
  }
  return h;
}

LessonInputs lesson_inputs(const std::vector<std::string>& words, int d_model, int dk, int dv,
                           int heads, uint64_t seed) {
  const int T = static_cast<int>(words.size());
  require(T >= 1 && T <= kLessonMaxWords, "the lesson takes 1 to ", kLessonMaxWords,
          " words, got ", T);
  require(d_model >= 1 && d_model <= kLessonMaxWidth, "d_model (", d_model, ") must be in [1, ",
          kLessonMaxWidth, "]");
  require(dk >= 1 && dk <= kLessonMaxWidth, "dk (", dk, ") must be in [1, ", kLessonMaxWidth, "]");
  require(dv >= 1 && dv <= kLessonMaxWidth, "dv (", dv, ") must be in [1, ", kLessonMaxWidth, "]");
  require(heads >= 1 && heads <= kLessonMaxHeads, "heads (", heads, ") must be in [1, ",
          kLessonMaxHeads, "]");
  LessonInputs in;
  in.E.resize(T, d_model);
  for (int t = 0; t < T; ++t) {
    Rng rng(seed ^ fnv1a64(words[size_t(t)]));
    for (int j = 0; j < d_model; ++j) in.E(t, j) = rng.normal();
  }
  for (int h = 0; h < heads; ++h) {
    const SelfAttention head(d_model, dk, dv, seed + uint64_t(h));
    in.Wq.push_back(head.Wq);
    in.Wk.push_back(head.Wk);
    in.Wv.push_back(head.Wv);
  }
  in.Wo.resize(Eigen::Index(heads) * dv, d_model);
  Rng wo(seed ^ kLessonWoStream);
  const float wo_std = static_cast<float>(std::sqrt(2.0 / (double(heads) * dv + d_model)));
  for (Eigen::Index i = 0; i < in.Wo.size(); ++i) in.Wo.data()[i] = wo.normal() * wo_std;
  return in;
}

}  // namespace attn
