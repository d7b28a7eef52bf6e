// The attn subcommands. Each takes the arguments after its name, prints to stdout, and returns
// the exit code. Errors are thrown (UsageError, std::invalid_argument, std::runtime_error);
// main turns them into one line on stderr and exit code 2.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn {
class TinyAttentionLM;
struct SamplingOptions;
struct TextCorpus;
struct TrainerConfig;
}  // namespace attn
#include "attn/model/model.h"

namespace attn::cli {

// Largest tensor a command writes, in floats (256 MB), so hostile inputs cannot make us allocate
// without bound (attn forward, attend and inspect check their output shapes against it).
constexpr int64_t kMaxOutputElements = 64LL * 1024 * 1024;

int cmd_demo(const std::vector<std::string>& args);     // cmd_demo.cpp
int cmd_demo_self_attention(const std::vector<std::string>& args);  // cmd_demo_self_attention.cpp
int cmd_train(const std::vector<std::string>& args);    // cmd_train.cpp
int cmd_forward(const std::vector<std::string>& args);  // cmd_io.cpp
int cmd_attend(const std::vector<std::string>& args);   // cmd_io.cpp
int cmd_bench(const std::vector<std::string>& args);    // cmd_bench.cpp
int cmd_selftest(const std::vector<std::string>& args); // cmd_selftest.cpp
int cmd_eval(const std::vector<std::string>& args);     // cmd_eval.cpp
int cmd_inspect(const std::vector<std::string>& args);  // cmd_inspect.cpp
int cmd_sample(const std::vector<std::string>& args);   // cmd_sample.cpp
int cmd_fill(const std::vector<std::string>& args);     // cmd_fill.cpp
int cmd_schema(const std::vector<std::string>& args);   // cmd_schema.cpp
int cmd_scaling(const std::vector<std::string>& args);  // cmd_scaling.cpp

// attn bench --config speculative and --config tiled (cmd_bench_decode.cpp): JSON members
// "speculative" and "tiled", printed without a trailing newline.
void print_speculative_bench(int blocks, double block_seconds, int target_steps);
void print_tiled_bench(int blocks);

// The vocabulary a text model's weights file (bytes, read from path) carries; a file without
// one is an Error of kind Format saying the model was not trained on text (cmd_sample.cpp).
std::u32string text_vocab(const std::string& path, const std::vector<uint8_t>& bytes);

class Args;
// The text task's corpus: --text FILE, or nullptr (the default corpus) without it; --text with
// another task is a UsageError. A bad text is an Error of kind Input naming the file
// (cmd_train.cpp).
std::shared_ptr<const TextCorpus> corpus_from(const Args& args, const TrainerConfig& config);
// attn sample --draft D (cmd_sample_speculative.cpp): the continuation of prompt (ids) by
// speculative decoding with the draft --draft names, printed as cmd_sample prints it, then one
// line of figures.
int sample_speculative(const Args& args, TinyAttentionLM& target, const std::u32string& vocab,
                       const std::string& prompt, const std::vector<int32_t>& ids, int n_tokens,
                       const SamplingOptions& options, uint64_t seed, int window);
// One split of the corpus --text FILE names (the default corpus without the flag) as ids of
// vocab, the corpus made as make_corpus makes it for windows of seq_len + 1: the validation
// split (its last 10%) or the training split (the first 90%). A character vocab lacks, and any
// bad text, is an Error whose message starts with the file's path or "the default corpus".
std::vector<int32_t> text_split_ids(const Args& args, const std::u32string& vocab, int seq_len,
                                    bool validation);
// "FILE" for --text FILE, "the default corpus" without it.
std::string text_source(const Args& args);
// The model of the weights file at path (its bytes in *bytes when given); a file the loader
// refuses is an Error of kind Format whose message starts with the path (cmd_sample.cpp).
std::unique_ptr<TinyAttentionLM> load_model_file(const std::string& path,
                                                 std::vector<uint8_t>* bytes = nullptr);

// attn selftest's default --reference: the committed PyTorch case of this checkout
// (default_reference.cpp).
const char* default_reference();

}  // namespace attn::cli
