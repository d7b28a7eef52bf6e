#include "attn/model/fill.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attn/data/text.h"

namespace attn {

FillResult fill_blanks(TinyAttentionLM& model, const std::u32string& vocab, std::string_view text,
                       char32_t blank, int top, KeyNamer namer) {
  const ModelConfig& c = model.config;
  const std::string text_name = key_name("text", namer), blank_name = key_name("blank", namer);
  require_config(c.objective == Objective::Mlm, "objective",
                 "filling blanks needs a masked language model (objective mlm): a causal model "
                 "cannot see the right side of a blank");
  const int V = c.real_vocab_size();  // the real ids are [0, V); [MASK] is V
  require_state(!vocab.empty(), "filling blanks needs a model of characters (the text task): "
                "this one's tokens have no characters");
  require(vocab.size() == size_t(V), "the vocabulary has ", vocab.size(),
          " characters but the model has ", V, " ids besides [MASK]");
  require(top >= 1 && top <= V, key_name("top", namer), " (", top, ") must be in [1, ", V, "]");
  require(vocab.find(blank) == std::u32string::npos, blank_name, ": ", describe_char(blank),
          " is a character of the model's vocabulary, so it cannot mark a blank; choose another");
  const std::u32string chars = decode_utf8(text);
  require(!chars.empty(), text_name, " is empty: there is nothing to fill");
  require(chars.size() <= size_t(c.max_context_length), text_name, " has ", chars.size(),
          " characters, more than the model's context of ", c.max_context_length);
  std::vector<int32_t> ids(chars.size());
  std::vector<int> blanks;
  std::u32string filled = chars;
  for (size_t i = 0; i < chars.size(); ++i) {
    if (chars[i] == blank) {
      blanks.push_back(int(i));
      ids[i] = V;  // [MASK]
      continue;
    }
    const size_t id = vocab.find(chars[i]);
    require(id != std::u32string::npos, text_name, ": the character ", describe_char(chars[i]),
            " is not in the model's vocabulary");
    ids[i] = int32_t(id);
  }
  require(!blanks.empty(), text_name, " has no blank (", describe_char(blank),
          "): mark the characters to fill with it");
  require(blanks.size() < chars.size(), text_name, " is all blanks: the model needs some "
          "characters around a blank to fill it");

  const int T = int(chars.size());
  TinyAttentionLM::State s;
  model.forward(ids.data(), 1, T, s);  // eval mode
  FillResult out;
  std::vector<double> p(static_cast<size_t>(V));
  std::vector<int> order(static_cast<size_t>(V));
  for (const int t : blanks) {
    const float* row = s.logits.row(t).data();  // the V real ids, then [MASK]
    const double mx = *std::max_element(row, row + V);
    double sum = 0.0;
    for (int j = 0; j < V; ++j) sum += (p[size_t(j)] = std::exp(double(row[j]) - mx));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return p[size_t(a)] > p[size_t(b)]; });
    FilledBlank fb{t, {}};
    for (int k = 0; k < top; ++k)
      fb.top.push_back({vocab[size_t(order[size_t(k)])], float(p[size_t(order[size_t(k)])] / sum)});
    filled[size_t(t)] = fb.top.front().ch;
    out.blanks.push_back(std::move(fb));
  }
  out.text = encode_utf8(filled);
  return out;
}

}  // namespace attn
