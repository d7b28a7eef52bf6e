// Deterministic random numbers, identical on every platform (native and wasm).
// std:: distributions are never used: libstdc++ and libc++ disagree on them.
#pragma once

#include <cstdint>

namespace attn {

// splitmix64 stream (Steele, Lea, Flood 2014) with our own uniform and normal samplers.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : state_(seed) {}

  // Next raw 64-bit value.
  uint64_t next_u64() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform float in [0, 1), 24 random bits, exact.
  float uniform() { return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f); }
  // Uniform double in (0, 1], 53 random bits; never 0, so log() is finite.
  double uniform_open_double() {
    return (static_cast<double>(next_u64() >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  }
  // Uniform integer in [0, n); n >= 1. Lemire's multiply-shift, bias below 2^-32 for n < 2^32.
  uint32_t below(uint32_t n) {
    return static_cast<uint32_t>(((next_u64() >> 32) * static_cast<uint64_t>(n)) >> 32);
  }
  // Standard normal by Box-Muller in double, rounded to float at the end.
  float normal();

  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

}  // namespace attn
