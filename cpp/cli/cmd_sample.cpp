// attn sample: text from a model trained with attn train --task text --save: the
// prompt, then --tokens characters drawn with the GPT lesson's strategies (generate(), the same
// loop as the page's Generate panel).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/base/error.h"
#include "attn/data/text.h"
#include "attn/io/weights.h"
#include "attn/model/decoder.h"
#include "cli/args.h"
#include "cli/commands.h"

namespace attn::cli {

namespace {

const std::vector<Flag> kSampleFlags = {
    {"weights", "PATH", "", "a text model's weights (attn train --task text --save)", true},
    {"prompt", "TEXT", "", "the text to continue: characters of the model's vocabulary, at most "
                           "10000", true},
    {"tokens", "N", "200", "characters to generate"},
    {"temperature", "T", "1", "divides the logits before the softmax, in [0, 100]; 0 is greedy"},
    {"top-k", "K", "0", "keep the K most likely characters (0: all)"},
    {"top-p", "P", "1", "keep the most likely characters up to cumulative probability P, in (0, 1]"},
    {"min-p", "M", "0", "keep the characters of probability >= M * the largest, in [0, 1]"},
    {"seed", "S", "0", "seed of the draws (the same seed gives the same text)"},
    {"window", "W", "0", "the most characters attended over; past it the context slides "
                         "(0: the model's max_seq_len)"},
    {"draft", "D", "", "speculative decoding: a draft model's weights (the same vocabulary), or "
                       "bigram for a table counted from the training split of --text; prints "
                       "one more line, the figures"},
    {"draft-tokens", "N", "4", "with --draft: tokens the draft proposes per target pass, in [1, 16]"},
    {"text", "FILE", "", "with --draft bigram: the corpus whose training split (its first 90%) "
                         "the bigram counts (default: the built-in corpus)"},
};

}  // namespace

std::u32string text_vocab(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::optional<std::u32string> vocab;
  try {
    vocab = read_vocab(bytes.data(), bytes.size());
  } catch (const Error& e) {
    throw Error(e.kind(), e.key(), str_cat(path, ": ", e.what()));
  }
  if (!vocab)
    throw Error(ErrorKind::Format, "vocab",
                str_cat(path, ": the model was not trained on text (its __metadata__ has no "
                              "\"vocab\"); train one with attn train --task text --save"));
  return *vocab;
}

std::string text_source(const Args& args) {
  return args.has("text") ? args.get("text") : "the default corpus";
}

std::vector<int32_t> text_split_ids(const Args& args, const std::u32string& vocab, int seq_len,
                                    bool validation) {
  std::string text;
  if (args.has("text")) {
    const std::vector<uint8_t> bytes = read_file(args.get("text"));
    text.assign(bytes.begin(), bytes.end());
  }
  try {
    const TextCorpus corpus = make_corpus(args.has("text") ? text : default_corpus(), seq_len);
    return encode(vocab, decode(corpus.vocab, validation ? corpus.val : corpus.train));
  } catch (const Error& e) {
    throw Error(e.kind(), e.key(), str_cat(text_source(args), ": ", e.what()));
  }
}

std::unique_ptr<TinyAttentionLM> load_model_file(const std::string& path,
                                                 std::vector<uint8_t>* bytes_out) {
  const std::vector<uint8_t> bytes = read_file(path);
  std::unique_ptr<TinyAttentionLM> model;
  try {
    model = load_model(bytes.data(), bytes.size());
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Format) throw;
    throw Error(ErrorKind::Format, e.key(), str_cat(path, ": ", e.what()));
  }
  if (bytes_out) *bytes_out = bytes;
  return model;
}

int cmd_sample(const std::vector<std::string>& argv) {
  const Args args("sample",
                  "Continues a prompt with a text model: prints the prompt, then --tokens "
                  "generated characters, then a newline. Temperature, top-k, top-p and min-p "
                  "apply in that order; the same flags and seed give the same text.",
                  kSampleFlags, argv);
  if (args.help()) {
    std::fputs(args.usage().c_str(), stdout);
    return 0;
  }
  const int n_tokens = args.get_int("tokens", 0, kMaxGenerateTokens);
  SamplingOptions options;
  options.temperature = args.get_float("temperature", 0, 100);
  options.top_p = args.get_float("top-p", 0, 1);
  if (!(options.top_p > 0.0f))
    throw UsageError(str_cat("--top-p (", args.get("top-p"), ") must be in (0, 1]"));
  options.min_p = args.get_float("min-p", 0, 1);
  const uint64_t seed = args.get_u64("seed");

  const std::string path = args.get("weights");
  std::vector<uint8_t> bytes;
  const std::unique_ptr<TinyAttentionLM> model = load_model_file(path, &bytes);
  const std::u32string vocab = text_vocab(path, bytes);
  options.top_k = args.get_int("top-k", 0, model->config.vocab_size);
  const int window = args.get_int("window", 0, model->config.max_context_length);

  // The prompt: valid UTF-8, then 1 to kMaxPromptTokens characters, then each in the vocab.
  const std::string prompt = args.get("prompt");
  const std::vector<int32_t> ids = [&] {
    try {
      const size_t n = decode_utf8(prompt).size();
      require(n > 0, "it is empty: give at least one character");
      require(n <= size_t(kMaxPromptTokens), "it has ", n, " characters, more than the ",
              kMaxPromptTokens, " allowed");
      return encode(vocab, prompt);
    } catch (const Error& e) {
      throw Error(e.kind(), "prompt", str_cat("--prompt: ", e.what()));
    }
  }();
  if (args.has("draft"))
    return sample_speculative(args, *model, vocab, prompt, ids, n_tokens, options, seed, window);
  if (args.has("draft-tokens") || args.has("text"))
    throw UsageError(str_cat("--", args.has("text") ? "text" : "draft-tokens", " needs --draft"));
  const std::vector<int32_t> out = generate(*model, ids, n_tokens, options, seed, window);
  const std::string text = prompt + decode(vocab, out) + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace attn::cli
