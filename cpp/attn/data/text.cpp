#include "attn/data/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "attn/base/tensor.h"

namespace attn {

namespace {

[[noreturn]] void bad_utf8(std::string_view s, size_t i) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(s[i])));
  throw Error(ErrorKind::Input, "",
              str_cat("the text is not valid UTF-8 (byte ", i, ", ", hex,
                      ", does not start a well-formed character)"));
}

// Sorted distinct code points of text.
std::u32string distinct(std::u32string text) {
  std::sort(text.begin(), text.end());
  text.erase(std::unique(text.begin(), text.end()), text.end());
  return text;
}

int32_t id_of(const std::u32string& vocab, char32_t c) {
  const auto it = std::lower_bound(vocab.begin(), vocab.end(), c);
  if (it == vocab.end() || *it != c)
    throw Error(ErrorKind::Input, "",
                str_cat("the character ", describe_char(c), " is not in the model's vocabulary"));
  return static_cast<int32_t>(it - vocab.begin());
}

}  // namespace

std::u32string decode_utf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out.push_back(b);
      ++i;
      continue;
    }
    size_t len;
    char32_t cp;
    if (b >= 0xC2 && b <= 0xDF) len = 2, cp = b & 0x1F;
    else if (b >= 0xE0 && b <= 0xEF) len = 3, cp = b & 0x0F;
    else if (b >= 0xF0 && b <= 0xF4) len = 4, cp = b & 0x07;
    else bad_utf8(s, i);  // a continuation byte, an overlong lead (C0, C1) or F5..FF
    if (n - i < len) bad_utf8(s, i);
    for (size_t k = 1; k < len; ++k) {
      const unsigned char c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) bad_utf8(s, i);
      cp = (cp << 6) | (c & 0x3F);
    }
    const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) bad_utf8(s, i);
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char32_t c : text) {
    require(c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF), "U+", static_cast<uint32_t>(c),
            " is not a Unicode scalar value");
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

std::u32string decode_text(std::string_view utf8) {
  require(!utf8.empty(), "the text is empty");
  require(utf8.size() <= kMaxCorpusBytes, "the text is ", utf8.size(), " bytes, more than the ",
          kMaxCorpusBytes, "-byte (2 MB) limit");
  if (utf8.substr(0, 3) == "\xEF\xBB\xBF") utf8.remove_prefix(3);
  // Control bytes are ASCII, so this byte scan is exact whatever the encoding; it comes first so
  // that a binary file is called binary rather than invalid UTF-8.
  for (size_t i = 0; i < utf8.size(); ++i) {
    const unsigned char b = static_cast<unsigned char>(utf8[i]);
    if (b < 0x20 && b != '\t' && b != '\n' && b != '\r') {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(b));
      throw Error(ErrorKind::Input, "",
                  str_cat("the text looks like a binary file: it holds the control byte ", hex,
                          " at byte ", i));
    }
  }
  std::u32string text = decode_utf8(utf8);
  require(!text.empty(), "the text is empty");  // only a byte order mark
  return text;
}

std::string describe_char(char32_t c) {
  char code[16];
  std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
  const bool invisible = c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0) ||
                         (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF;
  if (invisible) return code;
  return str_cat("'", encode_utf8(std::u32string(1, c)), "' (", code, ")");
}

double TextCorpus::unigram_entropy_nats() const {
  std::vector<int64_t> counts(vocab.size(), 0);
  for (const int32_t id : train) ++counts[size_t(id)];
  const double n = static_cast<double>(train.size());
  double h = 0.0;
  for (const int64_t c : counts)
    if (c > 0) h -= (double(c) / n) * std::log(double(c) / n);
  return h;
}

double TextCorpus::unigram_entropy_bits() const { return unigram_entropy_nats() / std::log(2.0); }

void check_corpus_fits(const TextCorpus& corpus, int T) {
  require_config(T >= 1 && T <= 4096, "seq_len", "sequence length (", T,
                 ") must be in [1, 4096]");
  const size_t need = size_t(T) + 1;
  const size_t chars = corpus.train.size() + corpus.val.size();
  require(corpus.train.size() >= need && corpus.val.size() >= need, "the text has ", chars,
          chars == 1 ? " character" : " characters", ", too few for seq_len ", T,
          ": its 90% training and 10% validation splits must each hold a window of ", need,
          " characters, so it needs at least ", 10 * size_t(T) + 1);
}

TextCorpus make_corpus(const std::string& utf8, int seq_len) {
  require_config(seq_len >= 1 && seq_len <= 4096, "seq_len", "sequence length (", seq_len,
                 ") must be in [1, 4096]");
  const std::u32string text = decode_text(utf8);
  TextCorpus c;
  c.vocab = distinct(text);
  require(c.vocab.size() <= size_t(kMaxTextVocab), "the text has ", c.vocab.size(),
          " distinct characters, more than the ", kMaxTextVocab,
          " a character vocabulary may hold");
  const size_t n_train = text.size() * 9 / 10;
  c.train.reserve(n_train);
  c.val.reserve(text.size() - n_train);
  for (size_t i = 0; i < text.size(); ++i)
    (i < n_train ? c.train : c.val).push_back(id_of(c.vocab, text[i]));
  check_corpus_fits(c, seq_len);
  return c;
}

std::vector<int32_t> encode(const std::u32string& vocab, std::string_view utf8) {
  const std::u32string text = decode_utf8(utf8);
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (const char32_t c : text) ids.push_back(id_of(vocab, c));
  return ids;
}

std::string decode(const std::u32string& vocab, const int32_t* ids, size_t n) {
  std::u32string text;
  text.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    require(ids[i] >= 0 && size_t(ids[i]) < vocab.size(), "id ", ids[i], " at position ", i,
            " is outside the vocabulary [0, ", vocab.size(), ")");
    text.push_back(vocab[size_t(ids[i])]);
  }
  return encode_utf8(text);
}

std::string decode(const std::u32string& vocab, const std::vector<int32_t>& ids) {
  return decode(vocab, ids.data(), ids.size());
}

std::string vocab_to_utf8(const std::u32string& vocab) { return encode_utf8(vocab); }

std::u32string vocab_from_utf8(std::string_view utf8) {
  const std::u32string v = decode_text(utf8);
  require(v.size() <= size_t(kMaxTextVocab), "the vocabulary has ", v.size(),
          " characters, more than ", kMaxTextVocab);
  for (size_t i = 1; i < v.size(); ++i)
    require(v[i - 1] < v[i], "the vocabulary is not sorted and distinct: ",
            describe_char(v[i]), " at index ", i, " follows ", describe_char(v[i - 1]));
  return v;
}

void make_text_batch(const std::vector<int32_t>& split, int B, int T, Rng& rng, Batch& batch) {
  require(B >= 1 && T >= 1, "make_text_batch needs B, T >= 1, got ", B, ", ", T);
  require(split.size() >= size_t(T) + 1, "the text split has ", split.size(),
          " characters, fewer than a window of seq_len + 1 = ", T + 1);
  batch.inputs.resize(B, T);
  batch.targets.resize(B, T);
  const uint32_t starts = static_cast<uint32_t>(split.size() - size_t(T));
  for (int b = 0; b < B; ++b) {
    const int32_t* w = split.data() + rng.below(starts);
    std::copy(w, w + T, &batch.inputs(b, 0));
    std::copy(w + 1, w + T + 1, &batch.targets(b, 0));
  }
}

std::vector<int32_t> text_sample(const TextCorpus& corpus, int T) {
  require(T >= 1 && size_t(T) <= corpus.val.size(), "the text sample needs T in [1, ",
          corpus.val.size(), "], got ", T);
  return std::vector<int32_t>(corpus.val.begin(), corpus.val.begin() + T);
}

// ---- The default corpus: a small grammar of our own. ----

namespace {

struct Noun {
  const char* one;
  const char* many;
};
struct Verb {
  const char* base;  // "see": they see, does it see
  const char* s;     // "sees": it sees
  const char* past;  // "saw"
};

constexpr Noun kNouns[] = {
    {"cat", "cats"},         {"dog", "dogs"},         {"bird", "birds"},
    {"child", "children"},   {"teacher", "teachers"}, {"farmer", "farmers"},
    {"fox", "foxes"},        {"robot", "robots"},     {"baker", "bakers"},
    {"girl", "girls"},       {"boy", "boys"},         {"friend", "friends"},
    {"model", "models"},     {"head", "heads"},       {"token", "tokens"},
};
constexpr Noun kThings[] = {
    {"ball", "balls"},   {"book", "books"},   {"apple", "apples"}, {"letter", "letters"},
    {"song", "songs"},   {"stone", "stones"}, {"cake", "cakes"},   {"map", "maps"},
    {"word", "words"},   {"story", "stories"}, {"box", "boxes"},   {"key", "keys"},
};
constexpr Verb kTransitive[] = {
    {"see", "sees", "saw"},         {"find", "finds", "found"},
    {"like", "likes", "liked"},     {"read", "reads", "read"},
    {"carry", "carries", "carried"}, {"want", "wants", "wanted"},
    {"hold", "holds", "held"},      {"make", "makes", "made"},
    {"bring", "brings", "brought"}, {"keep", "keeps", "kept"},
};
constexpr Verb kIntransitive[] = {
    {"sleep", "sleeps", "slept"}, {"run", "runs", "ran"},       {"sing", "sings", "sang"},
    {"wait", "waits", "waited"},  {"smile", "smiles", "smiled"}, {"walk", "walks", "walked"},
    {"rest", "rests", "rested"},  {"play", "plays", "played"},
};
constexpr const char* kAdjectives[] = {"small", "big",   "quiet", "happy", "old",   "young",
                                       "clever", "red",  "green", "slow",  "quick", "kind"};
constexpr const char* kPlaces[] = {"in the garden", "near the river", "on the hill",
                                   "at home",       "under the tree", "by the window",
                                   "in the kitchen", "at school"};
constexpr const char* kTimes[] = {"every morning", "at night", "today", "after lunch",
                                  "in the evening", "once again"};
constexpr const char* kAttention[] = {
    "the head looks back at the previous token",
    "each token attends to the tokens before it",
    "the query meets every key and the values are mixed",
    "the model learns to predict the next character",
    "a small model reads the text one character at a time",
    "the weights of each row add up to one",
    "the mask hides the future from every token",
    "an induction head copies what came after the last match",
    "two layers of attention can find a repeated word",
    "the loss falls as the model learns the words",
};

template <typename T, size_t N>
const T& pick(Rng& rng, const T (&items)[N]) {
  return items[rng.below(uint32_t(N))];
}

// "the quick fox", "a cat", "two old dogs": a noun phrase and whether it is plural.
std::string noun_phrase(Rng& rng, const Noun* nouns, size_t n_nouns, bool& plural) {
  const Noun& noun = nouns[rng.below(uint32_t(n_nouns))];
  const uint32_t det = rng.below(6);
  plural = det >= 4;
  std::string out = det == 0 || det == 1 ? "the " : det == 2 ? "a " : det == 3 ? "one " :
                    det == 4 ? "two " : "the ";
  if (rng.below(2) == 0) out += str_cat(pick(rng, kAdjectives), " ");
  out += plural ? noun.many : noun.one;
  if (det == 2 && std::string("aeiou").find(out[2]) != std::string::npos) out.insert(1, "n");
  return out;
}

std::string sentence(Rng& rng) {
  bool plural = false, object_plural = false;
  const std::string subject = noun_phrase(rng, kNouns, std::size(kNouns), plural);
  const std::string object = noun_phrase(rng, kThings, std::size(kThings), object_plural);
  const Verb& vt = pick(rng, kTransitive);
  const Verb& vi = pick(rng, kIntransitive);
  std::string s;
  char end = '.';
  switch (rng.below(8)) {
    case 0: s = str_cat(subject, " ", plural ? vt.base : vt.s, " ", object); break;
    case 1: s = str_cat(subject, " ", vt.past, " ", object, " ", pick(rng, kPlaces)); break;
    case 2: s = str_cat(subject, " ", plural ? vi.base : vi.s, " ", pick(rng, kPlaces)); break;
    case 3: s = str_cat(pick(rng, kTimes), ", ", subject, " ", vi.past); break;
    case 4:
      s = str_cat(subject, " ", plural ? "are" : "is", " ", pick(rng, kAdjectives));
      break;
    case 5:
      s = str_cat(plural ? "do " : "does ", subject, " ", vt.base, " ", object);
      end = '?';
      break;
    case 6: s = str_cat(subject, " ", vt.past, " ", object, " and ", vi.past); break;
    default: s = pick(rng, kAttention); break;
  }
  s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s + end;
}

std::string make_default_corpus() {
  Rng rng(0x7E27C0D5ULL);
  std::string out;
  while (out.size() < 48 * 1024) {
    const uint32_t n = 3 + rng.below(4);  // sentences per line
    for (uint32_t i = 0; i < n; ++i) out += (i ? " " : "") + sentence(rng);
    out += '\n';
  }
  return out;
}

}  // namespace

const std::string& default_corpus() {
  static const std::string corpus = make_default_corpus();
  return corpus;
}

// The course's capstone excerpt (phases/07-transformers-deep-dive/14-build-a-transformer-capstone,
// TINY_SHAKESPEARE): the opening of Coriolanus, public domain; 999 characters, 46 distinct.
const char* const kShakespeare = R"(First Citizen:
Before we proceed any further, hear me speak.

All:
Speak, speak.

First Citizen:
You are all resolved rather to die than to famish?

All:
Resolved. resolved.

First Citizen:
First, you know Caius Marcius is chief enemy to the people.

All:
We know't, we know't.

First Citizen:
Let us kill him, and we'll have corn at our own price.
Is't a verdict?

All:
No more talking on't; let it be done: away, away!

Second Citizen:
One word, good citizens.

First Citizen:
We are accounted poor citizens, the patricians good.
What authority surfeits on would relieve us: if they
would yield us but the superfluity, while it were
wholesome, we might guess they relieved us humanely;
but they think we are too dear: the leanness that
afflicts us, the object of our misery, is as an
inventory to particularise their abundance; our
sufferance is a gain to them Let us revenge this with
our pikes, ere we become rakes: for the gods know I
speak this in hunger for bread, not in thirst for revenge.
)";

const std::string& builtin_text(BuiltinText which) {
  static const std::string shakespeare = kShakespeare;
  return which == BuiltinText::Shakespeare ? shakespeare : default_corpus();
}

}  // namespace attn
