// Where the committed PyTorch reference files are (tests/reference/data of this checkout).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/io/safetensors.h"
#include "attn/io/weights.h"

namespace testdata {

// The absolute path of tests/reference/data, without a trailing slash.
std::string reference_dir();

// A file under tests/reference/data, e.g. "block/cases.json".
inline std::string reference_path(const std::string& relative) {
  return reference_dir() + "/" + relative;
}

// A committed safetensors file: its bytes (which the views point into) and the parsed layout.
struct ReferenceFile {
  std::vector<uint8_t> bytes;
  attn::SafetensorsFile file;
  explicit ReferenceFile(const std::string& relative)
      : bytes(attn::read_file(reference_path(relative))) {
    file = attn::parse_safetensors(bytes.data(), bytes.size());
  }
};

}  // namespace testdata
