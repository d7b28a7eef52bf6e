// The text task's data: a corpus of UTF-8 text whose tokens are its characters.
// The vocabulary is the corpus's distinct code points, sorted, so the same text always gives the
// same ids; the first 90% of the characters train, the last 10% validate; a batch is B random
// windows of T+1 characters (inputs w[:-1], targets w[1:]). No file I/O: callers pass the bytes.
// Every bad text is an Error of kind Input whose one-sentence message names the problem.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "attn/base/names.h"
#include "attn/base/rng.h"
#include "attn/data/tasks.h"

namespace attn {

// Largest corpus accepted, in bytes of UTF-8.
constexpr size_t kMaxCorpusBytes = 2u * 1024 * 1024;
// Largest vocabulary: tokens are characters, and at most this many distinct ones.
constexpr int kMaxTextVocab = 256;

// Strict UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF) to code points.
// Invalid: "the text is not valid UTF-8 (byte N)", N the 0-based offset of the bad sequence.
std::u32string decode_utf8(std::string_view utf8);
// Code points (each a Unicode scalar value) to UTF-8.
std::string encode_utf8(std::u32string_view text);

// A corpus's bytes checked and decoded: empty, larger than kMaxCorpusBytes, holding a NUL or
// another C0 control character but tab, newline and carriage return (a binary file), or invalid
// UTF-8 are each an Error of kind Input naming the problem. A leading UTF-8 byte order mark is
// dropped.
std::u32string decode_text(std::string_view utf8);

// "'é' (U+00E9)" for messages; a control or other invisible character is "U+000A" alone.
std::string describe_char(char32_t c);

struct TextCorpus {
  std::u32string vocab;        // distinct code points, ascending; id = index
  std::vector<int32_t> train;  // the first 90% of the characters, as ids
  std::vector<int32_t> val;    // the last 10%

  int vocab_size() const { return static_cast<int>(vocab.size()); }
  // Entropy of the training split's character frequencies: the loss of a model that only counts
  // characters (no context), in nats and in bits.
  double unigram_entropy_nats() const;
  double unigram_entropy_bits() const;
};

// The corpus of the text utf8 for windows of seq_len + 1 characters: decode_text's checks, then
// more than kMaxTextVocab distinct characters, or a split shorter than seq_len + 1 characters
// (the text needs at least 10 * seq_len + 1), are Errors of kind Input naming the count.
// seq_len outside [1, 4096]: an Error of kind Config, key seq_len.
TextCorpus make_corpus(const std::string& utf8, int seq_len);

// Throws the Error of kind Input make_corpus would unless both splits of corpus hold at least
// seq_len + 1 characters.
void check_corpus_fits(const TextCorpus& corpus, int seq_len);

// Ids of the characters of utf8 (strict UTF-8; an empty text gives no ids). A character outside
// vocab is an Error of kind Input: "the character 'é' (U+00E9) is not in the model's vocabulary".
std::vector<int32_t> encode(const std::u32string& vocab, std::string_view utf8);
// The UTF-8 text of ids; an id outside [0, vocab size) is an Error of kind Input naming it.
std::string decode(const std::u32string& vocab, const int32_t* ids, size_t n);
std::string decode(const std::u32string& vocab, const std::vector<int32_t>& ids);

// A vocabulary as UTF-8 text (its characters in order) and back. vocab_from_utf8 checks what a
// vocabulary must be (decode_text's checks, at most kMaxTextVocab characters, strictly
// ascending, so distinct): an Error of kind Input naming the first problem.
std::string vocab_to_utf8(const std::u32string& vocab);
std::u32string vocab_from_utf8(std::string_view utf8);

// B windows of T+1 consecutive ids of split, each starting at rng.below(size - T): inputs are
// w[:-1], targets w[1:]. Reuses batch's storage when (B,T) is unchanged. A split shorter than
// T+1, or B or T < 1: an Error of kind Input.
void make_text_batch(const std::vector<int32_t>& split, int B, int T, Rng& rng, Batch& batch);

// The text task's sample sequence: the first T characters of the validation split.
std::vector<int32_t> text_sample(const TextCorpus& corpus, int T);

// The project's own default corpus: simple English sentences (some about attention, heads and
// tokens) from a small grammar, drawn from a fixed seed, so every call returns the same ~50 KB of
// ASCII (letters, space, a few punctuation marks and newlines).
const std::string& default_corpus();

// The built-in texts: "sentences" (default_corpus()) and "shakespeare", the 999 characters of
// Coriolanus (46 distinct) the course's capstone trains on; the config key builtin_text picks one.
enum class BuiltinText { Sentences, Shakespeare };
inline constexpr const char* kBuiltinTextNames[] = {"sentences", "shakespeare"};
inline constexpr EnumNames kBuiltinTexts = {"built-in text", ErrorKind::Config, "builtin_text",
                                            "BuiltinTextName", kBuiltinTextNames,
                                            int(std::size(kBuiltinTextNames))};
const std::string& builtin_text(BuiltinText which);

}  // namespace attn
