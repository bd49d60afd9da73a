// Deterministic inputs of exactly P tokens (DESIGN.md 4.2 step 3).
//
// The input is the model's own tokenizer applied to a fixed built-in prose text (kPromptText),
// repeated as needed and cut to P tokens; the beginning-of-sequence token is included and counted
// when the tokenizer adds one. Text-only requests (end-to-end) need the text itself: the shortest
// character prefix of the repeated text whose tokenization is exactly P tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pipette/status.h"

namespace pipette {

// The fixed prose text (plain ASCII English, about 2.6 KB). Changing it changes every prompt hash,
// so it is versioned with the methodology (pipette-method/1).
extern const std::string_view kPromptText;

// Tokenizes text with the model's tokenizer, adding special tokens (BOS) as the model does.
using Tokenizer = std::function<Result<std::vector<int32_t>>(const std::string& text)>;

// kPromptText repeated until it has at least `min_chars` characters (paragraphs joined by "\n\n").
std::string RepeatedPromptText(size_t min_chars);

struct TokenPrompt {
  std::vector<int32_t> tokens;  // exactly P ids
  std::string sha256;           // Sha256OfTokens(tokens)
  std::string text_sha256;      // SHA-256 of the repeated text that was tokenized
};

// Exactly `n_tokens` tokens. Errors: tokenizer failure; a tokenizer that yields no tokens.
Result<TokenPrompt> BuildTokenPrompt(const Tokenizer& tokenize, int n_tokens);

struct TextPrompt {
  std::string text;             // tokenizes to exactly P tokens
  std::vector<int32_t> tokens;
  std::string sha256;           // of the tokens
  std::string text_sha256;      // of `text`
};

// The shortest prefix of the repeated text that tokenizes to exactly `n_tokens` tokens (binary
// search on the prefix length, then a local scan where merges skip a count). Errors: no prefix
// gives exactly that count (message names the nearest counts).
Result<TextPrompt> BuildTextPrompt(const Tokenizer& tokenize, int n_tokens);

}  // namespace pipette
