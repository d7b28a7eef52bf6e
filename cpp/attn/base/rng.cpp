#include "attn/base/rng.h"

#include <cmath>

namespace attn {

// One sample per call (the second Box-Muller value is discarded) so the stream position
// depends only on how many samples were drawn, never on cached state.
float Rng::normal() {
  const double u1 = uniform_open_double();
  const double u2 = uniform_open_double();
  const double r = std::sqrt(-2.0 * std::log(u1));
  return static_cast<float>(r * std::cos(6.283185307179586 * u2));
}

}  // namespace attn
