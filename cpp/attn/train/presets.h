// The named presets: a config that sets up one experiment, declared once here. `attn train
// --preset NAME` starts from one (any flag given overrides it), the JS API's presets() lists them
// and the page's picker reads that list (the page adds only which view and panel a preset opens,
// and its own sentence and lesson group).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attn/train/config.h"

namespace attn {

struct Preset {
  const char* name;   // the CLI's --preset and the page's id, e.g. "capstone"
  const char* title;  // one line, the page's link text
  // The keys it sets (snake_case name, value as value_text writes it), every other key at its
  // default: its link sets exactly these.
  std::vector<std::pair<const char*, const char*>> keys;
  // Its config: the defaults with keys set through the schema's rows.
  TrainerConfig config() const;
};

// Every preset, in the page's order.
const std::vector<Preset>& presets();

// The preset named name; any other name is an Error of kind Input naming it and the presets.
const Preset& find_preset(std::string_view name);

// The table as JSON, what the JS API's presets() returns: an array of {"name", "title", "config"
// (the keys it sets in the JS API's spelling, {"task":"shift"})}.
std::string presets_json();

}  // namespace attn
