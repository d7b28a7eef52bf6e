// attn fill: fill the blanks of a text with a masked language model (attn train --task text
// --objective mlm --save): prints the filled text, and with --top K each blank's K most likely
// characters (fill_blanks, the same call as the JS API's trainer.fill).
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attn/base/json.h"
#include "attn/data/text.h"
#include "attn/io/weights.h"
#include "attn/model/fill.h"
#include "cli/args.h"
#include "cli/commands.h"

namespace attn::cli {

namespace {

const std::vector<Flag> kFillFlags = {
    {"weights", "PATH", "", "a masked language model's weights (attn train --task text "
                            "--objective mlm --save)", true},
    {"text", "TEXT", "", "the text, with each character to fill replaced by the blank", true},
    {"blank", "C", "_", "the blank: one character that is not in the model's vocabulary"},
    {"top", "K", "0", "also print each blank's K most likely characters with their "
                      "probabilities (0: none)"},
};

// How fill_blanks names its arguments here: --text, --blank, --top.
std::string flag_namer(std::string_view name) { return "--" + std::string(name); }

}  // namespace

int cmd_fill(const std::vector<std::string>& argv) {
  const Args args("fill",
                  "Fills every blank of --text with a masked language model's most likely "
                  "character and prints the filled text; with --top K also one line per blank: "
                  "its position and its K most likely characters with their probabilities.",
                  kFillFlags, argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  const std::u32string blank = decode_utf8(args.get("blank"));
  if (blank.size() != 1)
    throw UsageError(str_cat("--blank (", json::quote(args.get("blank")),
                             ") must be exactly one character"));
  const std::string path = args.get("weights");
  std::vector<uint8_t> bytes;
  const std::unique_ptr<TinyAttentionLM> model = load_model_file(path, &bytes);
  const std::u32string vocab = text_vocab(path, bytes);
  const int top = args.get_int("top", 0, model->config.real_vocab_size());
  const FillResult r =
      fill_blanks(*model, vocab, args.get("text"), blank[0], std::max(top, 1), &flag_namer);
  std::printf("%s\n", r.text.c_str());
  for (const FilledBlank& b : top > 0 ? r.blanks : std::vector<FilledBlank>{}) {
    std::printf("blank %d:", b.position);
    for (size_t k = 0; k < b.top.size(); ++k)
      std::printf("%s %s %.4f", k ? "," : "",
                  json::quote(encode_utf8(std::u32string(1, b.top[k].ch))).c_str(),
                  double(b.top[k].prob));
    std::printf("\n");
  }
  return 0;
}

}  // namespace attn::cli
