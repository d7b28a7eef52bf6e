// Where the committed PyTorch reference files are (tests/reference/data of this checkout).
#pragma once

#include <string>

namespace testdata {

// The absolute path of tests/reference/data, without a trailing slash.
std::string reference_dir();

}  // namespace testdata
