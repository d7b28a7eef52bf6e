#include "cli/inputs.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "attn/base/json.h"
#include "attn/io/weights.h"
#include "attn/nn/loss.h"
#include "cli/commands.h"

namespace attn::cli {

namespace {

constexpr size_t kMaxInlineIds = 4096;

}  // namespace

void load_input(const std::string& path, InputFile& in) {
  in.bytes = read_file(path);
  try {
    in.file = parse_safetensors(in.bytes.data(), in.bytes.size());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(str_cat(path, ": ", e.what()));
  }
}

void check_names(const SafetensorsFile& file, const std::string& what,
                 const std::vector<std::string>& allowed) {
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  for (const TensorView& t : file.tensors) {
    bool ok = false;
    for (const std::string& a : allowed) ok = ok || a == t.name;
    require(ok, what, ": unexpected tensor ", json::printable(t.name), " (expected ", list, ")");
  }
}

void require_2d(const TensorView& t, const std::string& what) {
  require(t.shape.size() == 2 && t.shape[0] >= 1 && t.shape[1] >= 1, what, ": tensor ",
          json::printable(t.name), " must be 2-D with non-zero dimensions, got shape ",
          shape_str(t.shape));
}

std::vector<int32_t> parse_ids(const std::string& flag, const std::string& text) {
  std::vector<int32_t> out;
  size_t pos = 0;
  while (true) {
    const size_t comma = text.find(',', pos);
    const std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno == ERANGE || v < INT32_MIN || v > INT32_MAX)
      throw UsageError("--" + flag + ": '" + item + "' is not a token id (comma-separated "
                       "integers, e.g. 7,1,2)");
    out.push_back(static_cast<int32_t>(v));
    if (out.size() > kMaxInlineIds)
      throw UsageError(str_cat("--", flag, " has more than ", kMaxInlineIds, " ids"));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::vector<Flag> model_input_flags(const std::string& file_help) {
  return {
      {"weights", "PATH", "", "model weights (safetensors, as written by attn train --save)",
       true},
      {"input", "PATH", "", file_help},
      {"ids", "LIST", "", "or the ids of one sequence: comma-separated, e.g. 7,1,2,3,9,1,2"},
  };
}

IdsInput read_ids(const Args& args, bool targets_ok) {
  if (args.has("input") == args.has("ids"))
    throw UsageError("give --input PATH (a safetensors file with ids) or --ids LIST, one of them");
  IdsInput in;
  if (args.has("ids")) {
    in.what = "--ids";
    in.ids = parse_ids("ids", args.get("ids"));
    in.B = 1, in.T = int(in.ids.size());
    return in;
  }
  const std::string path = args.get("input");
  in.what = "--input " + path;
  InputFile f;
  load_input(path, f);
  std::vector<std::string> names = {"ids"};
  if (targets_ok) names.push_back("targets");
  check_names(f.file, in.what, names);
  const TensorView& ids = f.file.get("ids", in.what);
  require_2d(ids, in.what);
  require(ids.shape[0] * ids.shape[1] <= kMaxOutputElements, in.what, ": ids shape ",
          shape_str(ids.shape), " holds more than ", kMaxOutputElements, " ids");
  in.B = int(ids.shape[0]), in.T = int(ids.shape[1]);
  in.ids = f.file.ids("ids", in.what);
  if (const TensorView* t = f.file.find("targets")) {
    require(t->shape == ids.shape, in.what, ": targets has shape ", shape_str(t->shape),
            " but ids has ", shape_str(ids.shape));
    in.targets = f.file.ids("targets", in.what);
  }
  return in;
}

}  // namespace attn::cli
