#include "harness/prompt.h"

#include "base/sha256.h"

namespace pipette {

std::string RepeatedPromptText(size_t min_chars) {
  std::string text(kPromptText);
  while (text.size() < min_chars) {
    text += "\n\n";
    text += kPromptText;
  }
  return text;
}

Result<TokenPrompt> BuildTokenPrompt(const Tokenizer& tokenize, int n_tokens) {
  if (n_tokens < 1) return MakeError("a prompt needs at least 1 token", "input");
  // Start from a generous guess (tokenizers give 2-8 characters a token on prose) and double.
  size_t chars = static_cast<size_t>(n_tokens) * 8;
  for (int attempt = 0; attempt < 32; ++attempt, chars *= 2) {
    const std::string text = RepeatedPromptText(chars);
    auto tokens = tokenize(text);
    if (!tokens) return tokens.error().Wrap("tokenizing the built-in prompt text");
    if (tokens->empty()) return MakeError("the tokenizer produced no tokens", "input");
    if (tokens->size() >= static_cast<size_t>(n_tokens)) {
      TokenPrompt p;
      p.tokens.assign(tokens->begin(), tokens->begin() + n_tokens);
      p.sha256 = Sha256OfTokens(p.tokens);
      p.text_sha256 = Sha256Hex(text);
      return p;
    }
  }
  return MakeError("could not build " + std::to_string(n_tokens) + " prompt tokens", "input");
}

Result<TextPrompt> BuildTextPrompt(const Tokenizer& tokenize, int n_tokens) {
  if (n_tokens < 1) return MakeError("a prompt needs at least 1 token", "input");
  // Find a text long enough, then binary-search the shortest prefix with >= n_tokens tokens.
  std::string text = RepeatedPromptText(static_cast<size_t>(n_tokens) * 8);
  auto count_of = [&](size_t len) -> Result<size_t> {
    auto t = tokenize(text.substr(0, len));
    if (!t) return t.error();
    return t->size();
  };
  for (;;) {
    auto c = count_of(text.size());
    if (!c) return c.error();
    if (*c >= static_cast<size_t>(n_tokens)) break;
    text = RepeatedPromptText(text.size() * 2);
  }
  size_t lo = 1, hi = text.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    auto c = count_of(mid);
    if (!c) return c.error();
    if (*c >= static_cast<size_t>(n_tokens)) hi = mid;
    else lo = mid + 1;
  }
  // Merges can make the count jump past n_tokens; scan nearby prefixes for an exact one.
  size_t nearest_below = 0, nearest_above = 0;
  for (size_t len = lo; len < std::min(text.size() + 1, lo + 64); ++len) {
    auto t = tokenize(text.substr(0, len));
    if (!t) return t.error();
    if (t->size() == static_cast<size_t>(n_tokens)) {
      TextPrompt p;
      p.text = text.substr(0, len);
      p.tokens = std::move(*t);
      p.sha256 = Sha256OfTokens(p.tokens);
      p.text_sha256 = Sha256Hex(p.text);
      return p;
    }
    if (t->size() > static_cast<size_t>(n_tokens)) nearest_above = t->size();
    else nearest_below = t->size();
  }
  return MakeError("no prefix of the built-in text tokenizes to exactly " +
                       std::to_string(n_tokens) + " tokens (nearest: " +
                       std::to_string(nearest_below) + " and " + std::to_string(nearest_above) +
                       ")",
                   "input");
}

}  // namespace pipette
