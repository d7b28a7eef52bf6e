// Filling blanks with a masked language model (objective mlm): every blank of a text becomes
// [MASK], and one forward pass, in eval mode, gives each blank's distribution over the model's
// characters. The CLI's `attn fill` and the JS API's trainer.fill() are this function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/model/model.h"

namespace attn {

// The blank character, unless the caller chooses another.
constexpr char32_t kDefaultBlank = U'_';

struct FillGuess {
  char32_t ch;  // a character of the vocabulary
  float prob;   // its probability at the blank
};

struct FilledBlank {
  int position;                // the blank's index among the text's characters
  std::vector<FillGuess> top;  // the `top` most likely characters, most likely first
};

struct FillResult {
  std::string text;                 // the text with each blank replaced by its most likely character
  std::vector<FilledBlank> blanks;  // in the text's order
};

// Fills every blank of text (UTF-8, one token per character) with model, a masked language
// model whose characters are vocab (one per real id; [MASK] is the id after them). The
// probabilities are the softmax over the real ids: [MASK] is no character, its logit is left
// out. Ties go to the lower id. Errors, each one sentence naming the argument as namer spells it
// (nullptr: text, blank, top): a causal model is an Error of kind Config on key objective (it
// cannot see the right side of a blank); an empty vocab (a model of another task than text) is
// one of kind State; of kind Input: a blank that is a character of the
// vocabulary, a text with no blank, a text that is all blanks, a text longer than the model's
// context or empty, a character outside the vocabulary (named), top outside [1, vocab size].
FillResult fill_blanks(TinyAttentionLM& model, const std::u32string& vocab, std::string_view text,
                       char32_t blank = kDefaultBlank, int top = 1, KeyNamer namer = nullptr);

}  // namespace attn
