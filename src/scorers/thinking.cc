// Thinking-tag stripping (evals.md 3, shared preprocessing) and the text helpers.
#include <algorithm>
#include <array>

#include "pipette/scorers.h"
#include "scorers/text_scan.h"

namespace pipette::scorers {

std::string AsciiLowerCopy(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

std::string_view Trim(std::string_view text) {
  size_t b = 0;
  size_t e = text.size();
  while (b < e && IsSpace(text[b])) ++b;
  while (e > b && IsSpace(text[e - 1])) --e;
  return text.substr(b, e - b);
}

size_t FindNoCase(std::string_view text, std::string_view needle, size_t from) {
  if (needle.empty()) return from <= text.size() ? from : std::string_view::npos;
  const char first = needle[0];
  for (size_t i = from; i + needle.size() <= text.size(); ++i) {
    if (AsciiLower(text[i]) != first) continue;
    size_t k = 1;
    while (k < needle.size() && AsciiLower(text[i + k]) == needle[k]) ++k;
    if (k == needle.size()) return i;
  }
  return std::string_view::npos;
}

namespace {

struct TagPair {
  std::string_view open;
  std::string_view close;
};
constexpr std::array<TagPair, 2> kThinkTags = {
    TagPair{"<think>", "</think>"},
    TagPair{"[think]", "[/think]"},
};

// Removes complete blocks (each opening tag with the nearest closing tag after it), then
// everything up to the last orphan closing tag, then everything from an orphan opening tag on.
void StripTagPair(std::string& text, const TagPair& tags) {
  size_t pos = 0;
  while (true) {
    const size_t open = FindNoCase(text, tags.open, pos);
    if (open == std::string::npos) break;
    const size_t close = FindNoCase(text, tags.close, open + tags.open.size());
    if (close == std::string::npos) break;
    text.erase(open, close + tags.close.size() - open);
    pos = open;
  }
  size_t last_close = std::string::npos;
  for (size_t p = FindNoCase(text, tags.close); p != std::string::npos;
       p = FindNoCase(text, tags.close, p + 1)) {
    last_close = p;
  }
  if (last_close != std::string::npos) text.erase(0, last_close + tags.close.size());
  const size_t orphan_open = FindNoCase(text, tags.open);
  if (orphan_open != std::string::npos) text.erase(orphan_open);
}

// GPT-OSS: "...analysis...assistantfinal..." or "<|start|>assistant<|channel|>final<|message|>":
// keeps what follows the last "assistant" that is followed by "final" within a few bytes.
void KeepGptOssFinal(std::string& text) {
  constexpr size_t kMaxGap = 24;
  size_t keep_from = std::string::npos;
  for (size_t p = FindNoCase(text, "assistant"); p != std::string::npos;
       p = FindNoCase(text, "assistant", p + 1)) {
    const size_t after = p + 9;
    const size_t f =
        FindNoCase(std::string_view(text).substr(0, std::min(text.size(), after + kMaxGap + 5)),
                   "final", after);
    if (f != std::string::npos) keep_from = f + 5;
  }
  if (keep_from == std::string::npos) return;
  text.erase(0, keep_from);
  if (text.starts_with("<|message|>")) text.erase(0, 11);
}

}  // namespace

std::string StripThinking(std::string_view completion) {
  std::string text(completion);
  for (const TagPair& tags : kThinkTags) StripTagPair(text, tags);
  KeepGptOssFinal(text);
  while (true) {
    const std::string_view trimmed = Trim(text);
    if (trimmed.ends_with("<|end|>")) {
      text = std::string(trimmed.substr(0, trimmed.size() - 7));
    } else if (trimmed.ends_with("<|return|>")) {
      text = std::string(trimmed.substr(0, trimmed.size() - 10));
    } else {
      return std::string(trimmed);
    }
  }
}

}  // namespace pipette::scorers
