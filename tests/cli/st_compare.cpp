// attn_st_compare ACTUAL EXPECTED [ATOL RTOL]: test helper for tests/cli/cli_tests.sh.
// attn_st_compare --list FILE: prints "name dtype (shape)" per tensor, sorted by name.
// Both safetensors files must hold the same tensor names with the same shapes and F32 data (or
// I32/I64 ids, which must be equal), and every value must satisfy |actual - expected| <= ATOL + RTOL * |expected| (defaults 1e-5, 1e-5).
// Prints the largest difference per tensor; exits 0 when all agree, 1 otherwise, 2 on bad files.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "attn/io/safetensors.h"
#include "attn/io/weights.h"

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--list") {
    try {
      const std::vector<uint8_t> bytes = attn::read_file(argv[2]);
      const attn::SafetensorsFile f = attn::parse_safetensors(bytes.data(), bytes.size());
      std::vector<std::string> lines;
      for (const attn::TensorView& t : f.tensors)
        lines.push_back(t.name + " " + t.dtype + " " + attn::shape_str(t.shape));
      std::sort(lines.begin(), lines.end());
      for (const std::string& l : lines) std::printf("%s\n", l.c_str());
      return 0;
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "attn_st_compare: %s\n", ex.what());
      return 2;
    }
  }
  if (argc != 3 && argc != 5) {
    std::fprintf(stderr, "usage: attn_st_compare ACTUAL EXPECTED [ATOL RTOL]\n");
    return 2;
  }
  const double atol = argc == 5 ? std::atof(argv[3]) : 1e-5;
  const double rtol = argc == 5 ? std::atof(argv[4]) : 1e-5;
  try {
    const std::vector<uint8_t> a_bytes = attn::read_file(argv[1]);
    const std::vector<uint8_t> e_bytes = attn::read_file(argv[2]);
    const attn::SafetensorsFile a = attn::parse_safetensors(a_bytes.data(), a_bytes.size());
    const attn::SafetensorsFile e = attn::parse_safetensors(e_bytes.data(), e_bytes.size());
    bool ok = a.tensors.size() == e.tensors.size();
    if (!ok)
      std::printf("tensor count differs: %zu vs %zu\n", a.tensors.size(), e.tensors.size());
    for (const attn::TensorView& et : e.tensors) {
      const attn::TensorView* at = a.find(et.name);
      if (!at || at->shape != et.shape) {
        std::printf("%s: %s\n", et.name.c_str(), at ? "shape differs" : "missing in actual");
        ok = false;
        continue;
      }
      if (et.dtype == "I32" || et.dtype == "I64") {  // token ids: equal, whatever the width
        const bool same = a.ids(et.name) == e.ids(et.name);
        std::printf("%s %s: %s\n", same ? "ok  " : "FAIL", et.name.c_str(),
                    same ? "equal" : "ids differ");
        ok = ok && same;
        continue;
      }
      const std::vector<float> av = a.f32(et.name), ev = e.f32(et.name);
      double max_diff = 0.0;
      size_t bad = 0;
      for (size_t i = 0; i < ev.size(); ++i) {
        const double d = std::fabs(double(av[i]) - double(ev[i]));
        max_diff = std::fmax(max_diff, d);
        if (!(d <= atol + rtol * std::fabs(double(ev[i])))) {
          if (bad < 3)
            std::printf("  %s[%zu]: %.9g vs %.9g\n", et.name.c_str(), i, av[i], ev[i]);
          ++bad;
        }
      }
      std::printf("%s %s: max |diff| %.3g%s\n", bad ? "FAIL" : "ok  ", et.name.c_str(), max_diff,
                  bad ? (" (" + std::to_string(bad) + " values out of tolerance)").c_str() : "");
      ok = ok && bad == 0;
    }
    return ok ? 0 : 1;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "attn_st_compare: %s\n", ex.what());
    return 2;
  }
}
