// Python helpers shared by the IFBench checkers, and Doc's cached NLP results.
#include <unicode/uchar.h>

#include "scorers/ifbench/checkers.h"

namespace pipette::scorers::ifbench {

const std::vector<Text>& Doc::Sentences() {
  if (!sentences_) sentences_ = SentTokenize(nlp_->punkt, text_);
  return *sentences_;
}

bool ForEachWord(const std::vector<Text>& sentences, const std::function<bool(Text&)>& fn) {
  for (const Text& sentence : sentences) {
    for (Text& w : TreebankTokenize(sentence)) {
      if (!fn(w)) return false;
    }
  }
  return true;
}

std::vector<Text> FirstWords(const std::vector<Text>& sentences, size_t n) {
  std::vector<Text> words;
  for (size_t i = 0; i < sentences.size() && words.size() < n; ++i) {
    for (Text& w : TreebankTokenize(sentences[i])) words.push_back(std::move(w));
  }
  return words;
}

namespace {

// string.punctuation as a table over ASCII.
struct AsciiPunctTable {
  bool is[128] = {};
  constexpr AsciiPunctTable() {
    for (char32_t c : kPunctuation) is[c] = true;
  }
};
constexpr AsciiPunctTable kAsciiPunct;

}  // namespace

bool IsPunct(char32_t c, Profile profile) {
  if (c < 0x80) return kAsciiPunct.is[c];
  return profile == Profile::kFixed && u_ispunct(static_cast<UChar32>(c));
}

Text DeletePunct(TextView s, Profile profile) {
  Text out;
  out.reserve(s.size());
  for (char32_t c : s) {
    if (!IsPunct(c, profile)) out.push_back(c);
  }
  return out;
}

TextView LStripPunctSpace(TextView s, Profile profile) {
  size_t i = 0;
  while (i < s.size() && (s[i] == U' ' || IsPunct(s[i], profile))) ++i;
  return s.substr(i);
}

TextView RStripPunctSpace(TextView s, Profile profile) {
  size_t n = s.size();
  while (n > 0 && (s[n - 1] == U' ' || IsPunct(s[n - 1], profile))) --n;
  return s.substr(0, n);
}

TextView StripPunctSpace(TextView s, Profile profile) {
  return RStripPunctSpace(LStripPunctSpace(s, profile), profile);
}

namespace {

bool WordAt(TextView s, size_t i) { return i < s.size() && IsWord(s[i]); }

// re's \b at position p.
bool Boundary(TextView s, size_t p) { return (p > 0 && IsWord(s[p - 1])) != WordAt(s, p); }

}  // namespace

TextView FirstToken(TextView s) {
  for (TextView w : Tokens(s)) return w;
  return TextView();
}

TextView LastToken(TextView s) {
  size_t end = s.size();
  while (end > 0 && IsSpace(s[end - 1])) --end;
  size_t start = end;
  while (start > 0 && !IsSpace(s[start - 1])) --start;
  return s.substr(start, end - start);
}

size_t CountSplit(TextView s) {
  size_t n = 0;
  bool in = false;
  for (char32_t c : s) {
    const bool word = !IsSpace(c);
    if (word && !in) ++n;
    in = word;
  }
  return n;
}

size_t CountWordRuns(TextView s) {
  size_t n = 0;
  bool in = false;
  for (char32_t c : s) {
    const bool w = IsWord(c);
    if (w && !in) ++n;
    in = w;
  }
  return n;
}

bool IgnoreCaseEqual(char32_t a, char32_t b) {
  if (a == b) return true;
  if (a < 0x80 && b < 0x80) {
    const auto lo = [](char32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; };
    return lo(a) == lo(b);
  }
  const UChar32 x = static_cast<UChar32>(a), y = static_cast<UChar32>(b);
  if (u_tolower(x) == u_tolower(y)) return true;
  // sre's case-insensitive equivalences beyond simple lower case (s and long s, mu and micro
  // sign, the Greek symbol variants...): characters whose upper cases fold together.
  return u_tolower(u_toupper(x)) == u_tolower(u_toupper(y));
}

bool SearchWordIgnoreCase(TextView s, TextView word) {
  if (word.empty() || word.size() > s.size()) return false;
  for (size_t i = 0; i + word.size() <= s.size(); ++i) {
    if (!IgnoreCaseEqual(s[i], word[0]) || !Boundary(s, i)) continue;
    size_t k = 1;
    while (k < word.size() && IgnoreCaseEqual(s[i + k], word[k])) ++k;
    if (k == word.size() && Boundary(s, i + k)) return true;
  }
  return false;
}

TextView PySlice(TextView s, long long start, long long stop) {
  const long long n = static_cast<long long>(s.size());
  const auto clamp = [n](long long i) {
    if (i < 0) i += n;
    if (i < 0) return 0LL;
    return i > n ? n : i;
  };
  const long long a = clamp(start), b = clamp(stop);
  if (b <= a) return TextView();
  return s.substr(static_cast<size_t>(a), static_cast<size_t>(b - a));
}

std::optional<size_t> PyIndex(size_t size, long long i) {
  const long long n = static_cast<long long>(size);
  if (i < 0) i += n;
  if (i < 0 || i >= n) return std::nullopt;
  return static_cast<size_t>(i);
}

size_t PyCount(TextView s, TextView part) {
  if (part.empty()) return s.size() + 1;
  return Count(s, part);
}

std::vector<TextView> SplitLines(TextView s) { return SplitChar(s, U'\n'); }

std::vector<TextView> SplitChar(TextView s, char32_t sep) {
  std::vector<TextView> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    if (at == TextView::npos) break;
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
  out.push_back(s.substr(start));
  return out;
}

Text JoinViews(TextView sep, const std::vector<TextView>& parts) {
  Text out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

Text NfkdAscii(TextView s) {
  Text out;
  for (char32_t c : Nfkd(s)) {
    if (c < 0x80) out.push_back(c);
  }
  return out;
}

}  // namespace pipette::scorers::ifbench
