// The one file of the CLI compiled with the checkout's absolute path (ATTN_DEFAULT_REFERENCE,
// CMakeLists.txt), so that every other file compiles the same in any clone and hits the cache.
#include "cli/commands.h"

namespace attn::cli {

const char* default_reference() { return ATTN_DEFAULT_REFERENCE; }

}  // namespace attn::cli
