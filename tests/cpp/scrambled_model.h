// Models for the decoding tests whose logits are spread out: the init's embeddings, N(0, 0.02),
// make every logit nearly equal, which would hide a wrong cache. scramble() draws the embeddings
// ~ U(-1, 1) and the norms' weights and biases around their init too; the Linear layers keep
// theirs, U(-1/sqrt(in), 1/sqrt(in)), so logits stay O(1).
#pragma once

#include <string>
#include <vector>

#include "attn/base/rng.h"
#include "attn/model/model.h"

inline void scramble(attn::TinyAttentionLM& model, uint64_t seed) {
  attn::Rng rng(seed);
  for (const attn::ParamRef& p : model.parameters()) {
    const bool emb = p.name.find("emb") != std::string::npos;
    const bool norm = p.name.find("norm.") != std::string::npos;
    if (!emb && !norm) continue;
    const float base = norm && p.name.find("weight") != std::string::npos ? 1.0f : 0.0f;
    for (int64_t i = 0; i < p.numel(); ++i)
      p.value[i] = base + (emb ? 2.0f : 0.5f) * (rng.uniform() - 0.5f);
  }
}

// n ids drawn uniformly from [0, V).
inline std::vector<int32_t> random_tokens(int n, int V, uint64_t seed) {
  attn::Rng rng(seed);
  std::vector<int32_t> t(size_t(n), 0);
  for (int32_t& id : t) id = int32_t(rng.below(uint32_t(V)));
  return t;
}
