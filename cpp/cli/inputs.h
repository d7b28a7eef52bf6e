// What the attn commands read besides weights: a safetensors input file, checked (its tensor
// names, 2-D shapes), and the token ids to run a model on, given the same way to every command
// that takes them: --input FILE (tensor ids, (B,T), I64 or I32) or --ids LIST (one sequence,
// comma-separated, e.g. 7,1,2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/io/safetensors.h"
#include "cli/args.h"

namespace attn::cli {

// A safetensors file read from path; errors name the path.
struct InputFile {
  std::vector<uint8_t> bytes;
  SafetensorsFile file;
};
void load_input(const std::string& path, InputFile& in);

// Refuses tensors other than the allowed ones, naming the first stranger (what: the file).
void check_names(const SafetensorsFile& file, const std::string& what,
                 const std::vector<std::string>& allowed);

// A 2-D tensor with non-zero dimensions, else an error naming it.
void require_2d(const TensorView& t, const std::string& what);

// "7,1,2" -> {7, 1, 2}; throws UsageError naming the flag. Range checks are the core's.
std::vector<int32_t> parse_ids(const std::string& flag, const std::string& text);

// The flags of a command that runs saved weights on token ids: --weights PATH, then --input PATH
// and --ids LIST (read_ids); file_help says what the input file holds.
std::vector<Flag> model_input_flags(const std::string& file_help);

// Token ids (B,T) row-major, and their targets when the file has them.
struct IdsInput {
  int B = 0, T = 0;
  std::vector<int32_t> ids;
  std::vector<int32_t> targets;  // (B,T), kIgnoreIndex for none; empty without targets
  std::string what;              // the source in messages: "--input <path>" or "--ids"
};

// Reads --input FILE (tensor ids (B,T); with targets_ok also targets (B,T)) or --ids LIST
// (B = 1). Exactly one of the two: else a UsageError naming both flags. Errors name the flag.
IdsInput read_ids(const Args& args, bool targets_ok);

}  // namespace attn::cli
