// The one file compiled with the checkout's absolute path (ATTN_REFERENCE_DIR, tests.cmake), so
// that every other file of the suite compiles the same in any clone and hits the compiler cache.
#include "reference_dir.h"

namespace testdata {

std::string reference_dir() { return ATTN_REFERENCE_DIR; }

}  // namespace testdata
