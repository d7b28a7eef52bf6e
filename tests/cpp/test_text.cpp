// The text task: UTF-8 decoding and its bad cases, the character vocabulary, the 90/10
// split, the training windows, the unigram entropy, the default corpus, a Trainer on text and
// the vocab in the weights file. No file I/O: the same file runs in wasm.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "attn/interp/readouts.h"
#include "attn/interp/length_eval.h"
#include "attn/base/json.h"
#include "attn/data/text.h"
#include "attn/io/weights.h"
#include "attn/train/trainer.h"
#include "expect_error.h"

using namespace attn;

namespace {

// n characters of a repeating pattern over letters.
std::string letters(size_t n, const std::string& pattern = "abcdefghij") {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += pattern[i % pattern.size()];
  return s;
}

}  // namespace

TEST_CASE("decode_utf8 reads 1-, 2-, 3- and 4-byte characters", "[text]") {
  // a, é (U+00E9), € (U+20AC), 😀 (U+1F600)
  const std::u32string got = decode_utf8("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  CHECK(got == std::u32string{U'a', U'\u00E9', U'\u20AC', U'\U0001F600'});
  CHECK(encode_utf8(got) == "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  CHECK(decode_utf8("").empty());
}

TEST_CASE("decode_utf8 names the byte of each malformed sequence", "[text]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ab\x80", "(byte 2, 0x80"},                // a lone continuation byte
      {"a\xC3", "(byte 1, 0xC3"},                 // truncated 2-byte character
      {"\xE2\x82", "(byte 0, 0xE2"},              // truncated 3-byte character
      {"\xC3\x28", "(byte 0, 0xC3"},              // a lead byte without its continuation
      {"\xC0\xAF", "(byte 0, 0xC0"},              // overlong '/'
      {"\xE0\x80\xAF", "(byte 0, 0xE0"},          // overlong, 3 bytes
      {"\xF0\x80\x80\xAF", "(byte 0, 0xF0"},      // overlong, 4 bytes
      {"x\xED\xA0\x80", "(byte 1, 0xED"},         // a UTF-16 surrogate (U+D800)
      {"\xF4\x90\x80\x80", "(byte 0, 0xF4"},      // past U+10FFFF
      {"\xFF", "(byte 0, 0xFF"},
  };
  for (const auto& c : cases) {
    // Not a structured binding: C++17 lambdas cannot capture those (clang, the wasm build).
    const auto& bytes = c.first;
    const auto& where = c.second;
    INFO("where " << where);
    check_error([&] { decode_utf8(bytes); }, ErrorKind::Input, "",
                "the text is not valid UTF-8 " + where);
  }
}

TEST_CASE("decode_text refuses empty, binary, oversized and invalid text", "[text]") {
  check_error([] { decode_text(""); }, ErrorKind::Input, "", "the text is empty");
  check_error([] { decode_text("\xEF\xBB\xBF"); }, ErrorKind::Input, "", "the text is empty");
  check_error([] { decode_text(std::string("ab\0cd", 5)); }, ErrorKind::Input, "",
              "looks like a binary file: it holds the control byte 0x00 at byte 2");
  check_error([] { decode_text("ab\x1B[0m"); }, ErrorKind::Input, "", "control byte 0x1B at byte 2");
  // Binary wins over invalid UTF-8 wherever the control byte is.
  check_error([] { decode_text(std::string("\xFF\xFE" "a\0", 4)); }, ErrorKind::Input, "",
              "binary file");
  check_error([] { decode_text("caf\xE9"); }, ErrorKind::Input, "", "not valid UTF-8 (byte 3");
  const std::string big(kMaxCorpusBytes + 1, 'a');
  check_error([&] { decode_text(big); }, ErrorKind::Input, "",
              "the text is 2097153 bytes, more than the 2097152-byte (2 MB) limit");
  CHECK(decode_text(std::string(kMaxCorpusBytes, 'a')).size() == kMaxCorpusBytes);
  // Tab, newline and carriage return are text; a byte order mark is dropped.
  CHECK(decode_text("\xEF\xBB\xBF" "a\tb\r\n") == U"a\tb\r\n");
}

TEST_CASE("the vocabulary is the sorted distinct characters, whatever their order", "[text]") {
  const std::string text = letters(300, "hello world\n") + "\xC3\xA9";  // ends with é
  const TextCorpus a = make_corpus(text, 8);
  CHECK(a.vocab == U"\n dehlorw\u00E9");
  const TextCorpus b = make_corpus(text, 8);
  CHECK(b.vocab == a.vocab);
  CHECK(b.train == a.train);
  CHECK(a.val.back() == 9);  // é, the last id
  CHECK(decode(a.vocab, a.train) + decode(a.vocab, a.val) == text);
}

TEST_CASE("a vocabulary holds at most 256 characters and the error names the count", "[text]") {
  const auto alphabet = [](int n) {
    std::u32string s;
    for (int i = 0; i < n; ++i) s += char32_t(0x100 + i);
    std::string text;
    for (int r = 0; r < 12; ++r) text += encode_utf8(s);  // long enough to split
    return text;
  };
  CHECK(make_corpus(alphabet(256), 16).vocab.size() == 256);
  check_error([&] { make_corpus(alphabet(257), 16); }, ErrorKind::Input, "",
              "the text has 257 distinct characters, more than the 256");
}

TEST_CASE("the split is 90/10 by characters and each part needs seq_len + 1", "[text]") {
  const TextCorpus c = make_corpus(letters(1000), 12);
  CHECK(c.train.size() == 900);
  CHECK(c.val.size() == 100);
  CHECK(decode(c.vocab, c.val) == letters(1000).substr(900));
  // Characters, not bytes: 200 two-byte characters split 180/20.
  std::string two_byte;
  for (int i = 0; i < 200; ++i) two_byte += "\xC3\xA9";
  const TextCorpus d = make_corpus(two_byte, 3);
  CHECK(d.train.size() == 180);
  CHECK(d.val.size() == 20);
  // T = 12 needs 10 * 12 + 1 = 121 characters (13 in the validation split).
  CHECK(make_corpus(letters(121), 12).val.size() == 13);
  check_error([] { make_corpus(letters(120), 12); }, ErrorKind::Input, "",
              "the text has 120 characters, too few for seq_len 12");
  check_error([] { make_corpus(letters(120), 12); }, ErrorKind::Input, "", "at least 121");
  check_error([] { make_corpus("", 12); }, ErrorKind::Input, "", "the text is empty");
  // One character is one character, not "1 characters".
  check_error([] { make_corpus("a", 1); }, ErrorKind::Input, "",
              "the text has 1 character, too few for seq_len 1");
  check_error([] { make_corpus(letters(100), 0); }, ErrorKind::Config, "seq_len", "(0)");
}

TEST_CASE("training windows come from the training split only", "[text]") {
  // Training characters are a..j, validation characters are all 'z'.
  const std::string text = letters(900) + std::string(100, 'z');
  const TextCorpus c = make_corpus(text, 10);
  const int32_t z = int32_t(c.vocab.find(U'z'));
  Rng rng(7);
  Batch batch;
  std::vector<int> starts_seen(c.train.size(), 0);
  for (int i = 0; i < 50; ++i) {
    make_text_batch(c.train, 8, 10, rng, batch);
    REQUIRE(batch.inputs.rows() == 8);
    REQUIRE(batch.inputs.cols() == 10);
    for (int b = 0; b < 8; ++b)
      for (int t = 0; t < 10; ++t) {
        CHECK(batch.inputs(b, t) != z);
        CHECK(batch.targets(b, t) != z);
        if (t + 1 < 10) CHECK(batch.targets(b, t) == batch.inputs(b, t + 1));  // shifted by one
        // a..j cycle: the target is the next letter.
        CHECK(batch.targets(b, t) == (batch.inputs(b, t) + 1) % 10);
      }
  }
  // Validation windows are all z.
  make_text_batch(c.val, 4, 10, rng, batch);
  CHECK((batch.inputs.array() == z).all());
  check_error([&] { make_text_batch(c.val, 4, 100, rng, batch); }, ErrorKind::Input, "",
              "the text split has 100 characters, fewer than a window of seq_len + 1 = 101");
}

TEST_CASE("the unigram entropy matches a hand-computed case", "[text]") {
  // Training split (first 90 of 100 characters): 45 'a', 30 'b', 15 'c'.
  const std::string text = std::string(45, 'a') + std::string(30, 'b') + std::string(15, 'c') +
                           std::string(10, 'a');
  const TextCorpus c = make_corpus(text, 3);
  REQUIRE(c.train.size() == 90);
  const double p[] = {0.5, 1.0 / 3.0, 1.0 / 6.0};
  double h = 0.0;
  for (double q : p) h -= q * std::log(q);  // 1.0114 nats
  CHECK(c.unigram_entropy_nats() == Approx(h).epsilon(1e-12));
  CHECK(c.unigram_entropy_bits() == Approx(h / std::log(2.0)).epsilon(1e-12));
  CHECK(c.unigram_entropy_bits() == Approx(1.459148).epsilon(1e-6));
  // One character: no uncertainty.
  CHECK(make_corpus(std::string(50, 'x'), 3).unigram_entropy_nats() == 0.0);
}

TEST_CASE("encode and decode go through the vocabulary", "[text]") {
  const std::u32string vocab = U" ab\u00E9";
  CHECK(encode(vocab, "ab \xC3\xA9") == std::vector<int32_t>{1, 2, 0, 3});
  CHECK(decode(vocab, {1, 2, 0, 3}) == "ab \xC3\xA9");
  CHECK(encode(vocab, "").empty());
  check_error([&] { encode(vocab, "abc"); }, ErrorKind::Input, "",
              "the character 'c' (U+0063) is not in the model's vocabulary");
  check_error([&] { encode(U"abc", "\xC3\xA9"); }, ErrorKind::Input, "",
              "the character '\xC3\xA9' (U+00E9) is not in the model's vocabulary");
  check_error([&] { encode(vocab, "a\n"); }, ErrorKind::Input, "",
              "the character U+000A is not in");
  check_error([&] { encode(vocab, "a\xFF"); }, ErrorKind::Input, "", "not valid UTF-8 (byte 1");
  check_error([&] { decode(vocab, {0, 4}); }, ErrorKind::Input, "", "id 4 at position 1");
  CHECK(vocab_from_utf8(vocab_to_utf8(vocab)) == vocab);
  check_error([] { vocab_from_utf8("ba"); }, ErrorKind::Input, "", "not sorted and distinct");
  check_error([] { vocab_from_utf8("aa"); }, ErrorKind::Input, "", "not sorted and distinct");
}

TEST_CASE("the default corpus is our own deterministic ASCII text of ~50 KB", "[text]") {
  const std::string& text = default_corpus();
  CHECK(text.size() >= 40 * 1024);
  CHECK(text.size() <= 60 * 1024);
  CHECK(&default_corpus() == &text);
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    const bool allowed = c == '\n' || (c >= 0x20 && c < 0x7F);
    REQUIRE(allowed);
  }
  const TextCorpus c = make_corpus(text, 64);
  CHECK(c.vocab.size() <= 60);
  // Some of it is about attention.
  CHECK(text.find("attends to") != std::string::npos);
  CHECK(text.find("The head looks back at the previous token.") != std::string::npos);
  // Its start, so any change to the generator shows here.
  CHECK(text.substr(0, 44) == "Does one old baker carry the young books? Tw");
  CHECK(c.unigram_entropy_bits() == Approx(4.3111).margin(1e-4));
}

// How far it learns is the text row of tests/task_budgets.json (test_tasks.cpp): below the
// unigram entropy by 0.3 nats.
TEST_CASE("a Trainer on text: the validation read-out, fixed windows, the training split", "[text]") {
  TrainerConfig cfg;
  cfg.task.name = "text";
  cfg.model.vocab_size = 3;  // ignored: the corpus decides
  cfg.model.d_model = 32;
  cfg.model.n_heads = 4;
  cfg.task.seq_len = 16;
  cfg.training.batch_size = 16;
  cfg.model.residual = true;
  cfg.model.positions = PositionKind::Learned;
  Trainer trainer(cfg);
  REQUIRE(trainer.corpus() != nullptr);
  const TextCorpus& c = *trainer.corpus();
  CHECK(trainer.config().model.vocab_size == c.vocab_size());
  CHECK(trainer.model().config.vocab_size == c.vocab_size());
  const attn::TextEvaluation before = evaluate_text(trainer.model(), trainer.data(), 4);
  CHECK(before.unigram_nats == Approx(c.unigram_entropy_nats()));
  CHECK(before.unigram_bits == Approx(c.unigram_entropy_bits()));
  CHECK(before.val_loss > before.unigram_nats);  // an untrained model is near log V
  trainer.step(20);
  const attn::TextEvaluation after = evaluate_text(trainer.model(), trainer.data(), 4);
  INFO("val loss " << after.val_loss << " nats, unigram " << after.unigram_nats);
  CHECK(after.val_loss < before.val_loss);
  CHECK(after.val_bits_per_char == Approx(after.val_loss / std::log(2.0)));
  // Fixed validation windows: the same number twice; training is not disturbed.
  CHECK(evaluate_text(trainer.model(), trainer.data(), 4).val_loss == after.val_loss);
  // Every training batch came from the training split (a window of it, shifted by one).
  const Batch& b = trainer.last_batch();
  for (int r = 0; r < b.inputs.rows(); ++r)
    for (int t = 0; t + 1 < b.inputs.cols(); ++t) CHECK(b.targets(r, t) == b.inputs(r, t + 1));
  // The sample is the start of the validation split.
  const std::vector<int32_t> sample = trainer.data().sample(5);
  CHECK(sample == std::vector<int32_t>(c.val.begin(), c.val.begin() + 16));
  // Readouts built for synthetic tasks still work.
  CHECK(head_scores(trainer.model(), trainer.data()).previous_token.size() == 4);
  CHECK(attention_stats(trainer.model(), trainer.data()).entropy.size() == 4);
  CHECK(std::isfinite(evaluate_at_length(trainer.model(), trainer.data(), 8, 1).loss));
}

TEST_CASE("a Trainer takes its own corpus and checks that it fits", "[text]") {
  TrainerConfig cfg;
  cfg.task.name = "text";
  cfg.task.seq_len = 8;
  auto corpus = std::make_shared<const TextCorpus>(make_corpus(letters(200, "xyz"), 8));
  Trainer trainer(cfg, corpus);
  CHECK(trainer.config().model.vocab_size == 3);
  CHECK(trainer.corpus() == corpus.get());
  cfg.task.seq_len = 30;  // the 20-character validation split cannot hold 31
  check_error([&] { Trainer t(cfg, corpus); }, ErrorKind::Input, "", "too few for seq_len 30");
  // Another task ignores a corpus; evaluate_text needs text.
  cfg.task.name = "repeat";
  Trainer repeat(cfg, corpus);
  CHECK(repeat.corpus() == nullptr);
  CHECK(repeat.config().model.vocab_size == 64);
  check_error([&] { evaluate_text(repeat.model(), repeat.data(), 1); }, ErrorKind::State, "", "needs the text task");
  // The synthetic generators refuse text, but its rule for targets is the next input.
  Rng rng(1);
  Batch batch;
  check_error([&] { make_batch(Task::Text, 8, 2, 4, rng, batch); }, ErrorKind::Input, "",
              "the text task draws its windows from a corpus");
  const int32_t x[] = {3, 1, 4, 1};
  int32_t y[4];
  task_targets(Task::Text, x, 4, y);
  CHECK(std::vector<int32_t>(y, y + 4) == std::vector<int32_t>{1, 4, 1, -100});
  CHECK(parse_task("text") == Task::Text);
  CHECK(std::string(task_name(Task::Text)) == "text");
}

namespace {

// The file of model with __metadata__ vocab replaced by value (erased when value is null).
std::vector<uint8_t> with_vocab_metadata(TinyAttentionLM& model, const std::u32string& vocab,
                                         const char* value) {
  const std::vector<uint8_t> bytes = save_model(model, vocab);
  const SafetensorsFile file = parse_safetensors(bytes.data(), bytes.size());
  std::map<std::string, std::string> metadata = file.metadata;
  if (value) metadata["vocab"] = value;
  else metadata.erase("vocab");
  std::vector<TensorOut> tensors;
  for (const TensorView& t : file.tensors) tensors.push_back({t.name, t.dtype, t.shape, t.data});
  return write_safetensors(std::move(tensors), metadata);
}

}  // namespace

TEST_CASE("a text model's weights carry the vocabulary as a JSON string", "[text]") {
  const std::u32string vocab = U"\n !,.abc\u00E9";
  ModelConfig mc{int(vocab.size()), 8, 2, 6};
  TinyAttentionLM model(mc, 3);
  const std::vector<uint8_t> bytes = save_model(model, vocab);
  const SafetensorsFile file = parse_safetensors(bytes.data(), bytes.size());
  CHECK(file.metadata.at("vocab") == "\"\\n !,.abc\xC3\xA9\"");
  CHECK(read_vocab(file) == vocab);
  CHECK(read_vocab(bytes.data(), bytes.size()) == vocab);
  // The weights load as any model's; the vocab changes nothing else.
  const std::unique_ptr<TinyAttentionLM> loaded = load_model(bytes.data(), bytes.size());
  CHECK(loaded->config.vocab_size == int(vocab.size()));
  // A file without a vocab reads as none.
  const std::vector<uint8_t> plain = save_model(model);
  CHECK_FALSE(read_vocab(plain.data(), plain.size()).has_value());
  CHECK(with_vocab_metadata(model, vocab, nullptr) == plain);
  check_error([&] { save_model(model, U"abc"); }, ErrorKind::Input, "",
              "the vocabulary has 3 characters but the model has vocab_size 9");
}

TEST_CASE("a hostile vocab in the metadata is a format error", "[text]") {
  const std::u32string vocab = U"abcd";
  TinyAttentionLM model(ModelConfig{4, 8, 2, 6}, 3);
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"abcd", "__metadata__ vocab: invalid JSON at byte 0"},  // not JSON
      {"\"abcd", "__metadata__ vocab: invalid JSON"},          // unterminated
      {"[\"abcd\"]", "is a JSON array, not a string"},
      {"4", "is a JSON number, not a string"},
      {"\"abcd\" \"e\"", "invalid JSON"},                      // two values
      {"\"abc\"", "__metadata__ vocab has 3 characters but the model has vocab_size 4"},
      {"\"abcde\"", "has 5 characters but the model has vocab_size 4"},
      {"\"abca\"", "not sorted and distinct"},
      {"\"bacd\"", "not sorted and distinct"},
      {"\"ab\\u0000c\"", "binary file"},
      {"\"\"", "the text is empty"},
      {"\"\\ud800bcd\"", "invalid JSON"},                      // a lone surrogate
  };
  for (const auto& [value, text] : cases) {
    INFO("vocab metadata " << value);
    const std::vector<uint8_t> bytes = with_vocab_metadata(model, vocab, value);
    check_error([&] { read_vocab(bytes.data(), bytes.size()); }, ErrorKind::Format, "", text);
  }
}
