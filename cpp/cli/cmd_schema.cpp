// attn schema: the config schema (attn/train/config.h) as JSON, what the JS API's configSchema()
// returns: one object per config key.
#include <cstdio>

#include "attn/train/config.h"
#include "cli/args.h"
#include "cli/commands.h"

namespace attn::cli {

int cmd_schema(const std::vector<std::string>& argv) {
  const Args args("schema",
                  "Prints the config schema as JSON: an array of one object per config key, with "
                  "its name, flag, JS name, type, default, bounds or choices, help, group and "
                  "whether a weights file keeps it (cpp/README.md, \"The config schema\").",
                  {}, argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  std::fputs(config_schema_json().c_str(), stdout);
  return 0;
}

}  // namespace attn::cli
