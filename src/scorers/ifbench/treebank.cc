// NLTKWordTokenizer.tokenize (nltk/tokenize/destructive.py, nltk 3.9.2): Treebank word
// splitting, as nltk.word_tokenize applies it to each sentence.
//
// Upstream is an ordered list of re.sub calls. Each is rebuilt below as one left-to-right pass
// that finds the matches re.sub finds (leftmost, non-overlapping, on the text as it was before
// that substitution) and writes the same replacement; the rule each pass stands for is quoted
// above it. Whitespace, \w, \d and \b are CPython's (pystr.h). nltk 3.9.2 collapses whitespace
// before the clitic rules (nltk PR #3224); the dash rule added after 3.9.2 (PR #3461) is absent.
#include <string_view>
#include <utility>
#include <vector>

#include "scorers/ifbench/nlp.h"
#include "scorers/ifbench/char_class.h"
#include "scorers/ifbench/pystr.h"

namespace pipette::scorers::ifbench {
namespace {

using char_class::Digit;
using char_class::Space;
using char_class::Word;

bool InSet(char32_t c, TextView set) { return set.find(c) != TextView::npos; }

// \b: a \w character on exactly one side of position i.
bool IsBoundary(TextView s, size_t i) {
  const bool before = i > 0 && Word(s[i - 1]);
  const bool after = i < s.size() && Word(s[i]);
  return before != after;
}

// A character that `re` with IGNORECASE takes for ASCII letter `lower`: sre compares simple
// lower-case forms (U+0130 lowers to "i", U+212A to "k") and adds its equivalence pairs
// (i/U+0131, s/U+017F).
bool SameIgnoringCase(char32_t c, char32_t lower) {
  if (lower < U'a' || lower > U'z') return c == lower;
  if (c == lower || c == lower - 32) return true;
  if (c < 0x80) return false;
  if (lower == U'i') return c == 0x130 || c == 0x131;
  if (lower == U's') return c == 0x17F;
  if (lower == U'k') return c == 0x212A;
  return false;
}

bool MatchesIgnoringCase(TextView s, size_t i, TextView lower) {
  if (i + lower.size() > s.size()) return false;
  for (size_t k = 0; k < lower.size(); ++k) {
    if (!SameIgnoringCase(s[i + k], lower[k])) return false;
  }
  return true;
}

// The text being rewritten, one re.sub at a time.
class Rewriter {
 public:
  explicit Rewriter(TextView text) : text_(text) {}

  const Text& text() const { return text_; }
  Text& mutable_text() { return text_; }

  // One re.sub pass. match(s, i) is the length of the match that starts at i (0 for none);
  // write(s, i, len, out) appends its replacement. Text between matches is copied in bulk, and
  // a pass that matches nothing copies nothing.
  template <typename Match, typename Write>
  void Sub(Match match, Write write) {
    const TextView s = text_;
    bool changed = false;
    size_t copied = 0;
    for (size_t i = 0; i < s.size();) {
      const size_t len = match(s, i);
      if (len == 0) {
        ++i;
        continue;
      }
      if (!changed) {
        scratch_.clear();
        scratch_.reserve(s.size() + s.size() / 4 + 16);
        changed = true;
      }
      scratch_.append(s.substr(copied, i - copied));
      write(s, i, len, scratch_);
      i += len;
      copied = i;
    }
    if (!changed) return;
    scratch_.append(s.substr(copied));
    std::swap(text_, scratch_);
  }

  // re.sub(r"[...]", r" \g<0> ", s) for a one-character class.
  template <typename Pred>
  void PadChars(Pred in_class) {
    Sub([&](TextView s, size_t i) -> size_t { return in_class(s[i]) ? 1 : 0; },
        [](TextView s, size_t i, size_t, Text& out) {
          out.push_back(U' ');
          out.push_back(s[i]);
          out.push_back(U' ');
        });
  }

  // re.sub(literal, replacement, s).
  void ReplaceLiteral(TextView from, TextView to) {
    Sub(
        [&](TextView s, size_t i) -> size_t {
          return s[i] == from[0] && s.substr(i, from.size()) == from ? from.size() : 0;
        },
        [&](TextView, size_t, size_t, Text& out) { out.append(to); });
  }

 private:
  Text text_;
  Text scratch_;
};

// Appends " " + s[i, i+len) + " ".
void WritePadded(TextView s, size_t i, size_t len, Text& out) {
  out.push_back(U' ');
  out.append(s.substr(i, len));
  out.push_back(U' ');
}

// ---- STARTING_QUOTES ---------------------------------------------------------------------

// ([«“‘„]|[`]+) -> " \1 ": an opening curly quote, or a whole run of backticks.
void PadOpeningQuotes(Rewriter& r) {
  r.Sub(
      [](TextView s, size_t i) -> size_t {
        if (s[i] == U'`') {
          size_t j = i;
          while (j < s.size() && s[j] == U'`') ++j;
          return j - i;
        }
        return s[i] >= 0x80 && InSet(s[i], U"«“‘„") ? 1 : 0;
      },
      WritePadded);
}

// ^\" -> ``: a double quote that opens the text.
void OpeningDoubleQuote(Rewriter& r) {
  Text& s = r.mutable_text();
  if (!s.empty() && s[0] == U'"') s.replace(0, 1, U"``");
}

bool IsOpener(char32_t c) { return c == U' ' || c == U'(' || c == U'[' || c == U'{' || c == U'<'; }

// ([ \(\[{<])(\"|\'{2}) -> "\1 `` ": a double quote, or two apostrophes, after a space or an
// opening bracket.
void QuoteAfterOpener(Rewriter& r) {
  r.Sub(
      [](TextView s, size_t i) -> size_t {
        if (!IsOpener(s[i]) || i + 1 >= s.size()) return 0;
        if (s[i + 1] == U'"') return 2;
        return s.substr(i + 1, 2) == U"''" ? 3 : 0;
      },
      [](TextView s, size_t i, size_t, Text& out) {
        out.push_back(s[i]);
        out.append(U" `` ");
      });
}

// (?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b -> "\1 \2": an apostrophe before a one-letter word that
// is not a clitic. ("re", "ve" and "ll" could only be excluded where the letter is followed by
// another word character, which the \b already rules out.)
void SplitQuotedLetter(Rewriter& r) {
  r.Sub(
      [](TextView s, size_t i) -> size_t {
        if (s[i] != U'\'' || i + 1 >= s.size() || !Word(s[i + 1]) || !IsBoundary(s, i + 2)) {
          return 0;
        }
        for (char32_t letter : TextView(U"mtsdn")) {
          if (SameIgnoringCase(s[i + 1], letter)) return 0;
        }
        return 2;
      },
      [](TextView s, size_t i, size_t, Text& out) {
        out.append(U"' ");
        out.push_back(s[i + 1]);
      });
}

// ---- PUNCTUATION -------------------------------------------------------------------------

// ([^\.])(\.)([<closing>]*)\s*$ with replacement "\1 \2 \3 " (space_after_period) or
// "\1 \2\3 ". Only the last period can match, since no other period may follow it; `$` also
// holds before a final "\n", which \s* swallows anyway. The greedy closing run is group 3 and
// the whitespace after it is dropped.
template <typename Pred>
void SplitFinalPeriod(Rewriter& r, Pred closing, bool space_after_period) {
  const TextView s = r.text();
  const size_t q = s.rfind(U'.');
  if (q == TextView::npos || q == 0 || s[q - 1] == U'.') return;
  size_t run_end = q + 1;
  while (run_end < s.size() && closing(s[run_end])) ++run_end;
  for (size_t k = run_end; k < s.size(); ++k) {
    if (!Space(s[k])) return;
  }
  Text out(s.substr(0, q));
  out.append(space_after_period ? U" . " : U" .");
  out.append(s.substr(q + 1, run_end - q - 1));
  out.push_back(U' ');
  r.mutable_text() = std::move(out);
}

bool IsFinalPunctClosing(char32_t c) { return InSet(c, U"])}>\"'»”’ "); }
bool IsFinalPeriodClosing(char32_t c) { return InSet(c, U"])}>\"'"); }

// ([:,])([^\d]) -> " \1 \2": a comma or colon not followed by a digit (both characters are
// consumed, so ",," pads only the first).
void PadCommaColon(Rewriter& r) {
  r.Sub(
      [](TextView s, size_t i) -> size_t {
        return (s[i] == U',' || s[i] == U':') && i + 1 < s.size() && !Digit(s[i + 1]) ? 2 : 0;
      },
      [](TextView s, size_t i, size_t, Text& out) {
        out.push_back(U' ');
        out.push_back(s[i]);
        out.push_back(U' ');
        out.push_back(s[i + 1]);
      });
}

// ([:,])$ -> " \1 ": a comma or colon at the end, or before a final "\n".
void PadFinalCommaColon(Rewriter& r) {
  Text& s = r.mutable_text();
  const size_t n = s.size();
  size_t at = TextView::npos;
  if (n >= 1 && (s[n - 1] == U',' || s[n - 1] == U':')) {
    at = n - 1;
  } else if (n >= 2 && s[n - 1] == U'\n' && (s[n - 2] == U',' || s[n - 2] == U':')) {
    at = n - 2;
  }
  if (at == TextView::npos) return;
  const char32_t mark = s[at];
  s.replace(at, 1, Text{U' ', mark, U' '});
}

// \.{2,} -> " \g<0> ".
void PadDotRuns(Rewriter& r) {
  r.Sub(
      [](TextView s, size_t i) -> size_t {
        size_t j = i;
        while (j < s.size() && s[j] == U'.') ++j;
        return j - i >= 2 ? j - i : 0;
      },
      WritePadded);
}

// ([^'])' -> "\1 ' ": an apostrophe that closes a word (followed by a space).
void PadClosingApostrophe(Rewriter& r) {
  r.Sub(
      [](TextView s, size_t i) -> size_t {
        return i + 2 < s.size() && s[i + 1] == U'\'' && s[i + 2] == U' ' && s[i] != U'\'' ? 3 : 0;
      },
      [](TextView s, size_t i, size_t, Text& out) {
        out.push_back(s[i]);
        out.append(U" ' ");
      });
}

// ---- ENDING_QUOTES -----------------------------------------------------------------------

// \s+ -> " ".
void CollapseWhitespace(Rewriter& r) {
  r.Sub(
      [](TextView s, size_t i) -> size_t {
        if (!Space(s[i])) return 0;
        size_t j = i + 1;
        while (j < s.size() && Space(s[j])) ++j;
        // A lone " " already is its replacement.
        return j - i == 1 && s[i] == U' ' ? 0 : j - i;
      },
      [](TextView, size_t, size_t, Text& out) { out.push_back(U' '); });
}

// ([^' ])('[sS]|'[mM]|'[dD]|') -> "\1 \2 ": 's 'm 'd, or a bare apostrophe, ending a word.
void SplitShortClitics(Rewriter& r) {
  r.Sub(
      [](TextView s, size_t i) -> size_t {
        const size_t n = s.size();
        if (i + 2 >= n || s[i + 1] != U'\'' || s[i] == U'\'' || s[i] == U' ') return 0;
        if (i + 3 < n && InSet(s[i + 2], U"sSmMdD") && s[i + 3] == U' ') return 4;
        return s[i + 2] == U' ' ? 3 : 0;
      },
      [](TextView s, size_t i, size_t len, Text& out) {
        out.push_back(s[i]);
        out.push_back(U' ');
        out.append(s.substr(i + 1, len - 1));  // group 2 and the space after it
      });
}

// ([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) -> "\1 \2 " (case-sensitive).
void SplitLongClitics(Rewriter& r) {
  static constexpr TextView kClitics[] = {U"'ll", U"'LL", U"'re", U"'RE",
                                          U"'ve", U"'VE", U"n't", U"N'T"};
  r.Sub(
      [](TextView s, size_t i) -> size_t {
        if (i + 4 >= s.size() || s[i + 4] != U' ' || s[i] == U'\'' || s[i] == U' ') return 0;
        const TextView next = s.substr(i + 1, 3);
        for (TextView c : kClitics) {
          if (next == c) return 5;
        }
        return 0;
      },
      [](TextView s, size_t i, size_t, Text& out) {
        out.push_back(s[i]);
        out.push_back(U' ');
        out.append(s.substr(i + 1, 4));  // group 2 and the space after it
      });
}

// ---- CONTRACTIONS2 / CONTRACTIONS3 (MacIntyre), all case-insensitive ----------------------

struct Contraction {
  TextView first;   // group 1, lower case
  TextView second;  // group 2, lower case
  bool then_space;  // (?=\s) instead of \b after group 2
};

constexpr Contraction kContractions2[] = {
    {U"can", U"not", false}, {U"d", U"'ye", false},  {U"gim", U"me", false},
    {U"gon", U"na", false},  {U"got", U"ta", false}, {U"lem", U"me", false},
    {U"more", U"'n", false}, {U"wan", U"na", true},
};

// (?i)\b(first)(second)\b -> " \1 \2 ", or (?=\s) at the end for "wanna".
void SplitContraction(Rewriter& r, const Contraction& c) {
  const size_t len1 = c.first.size(), len = len1 + c.second.size();
  r.Sub(
      [&](TextView s, size_t i) -> size_t {
        // First letters are ASCII without other case forms: reject most positions at once.
        if ((s[i] | 0x20) != c.first[0] || !MatchesIgnoringCase(s, i, c.first) ||
            !MatchesIgnoringCase(s, i + len1, c.second) || !IsBoundary(s, i)) {
          return 0;
        }
        const size_t e = i + len;
        const bool end_ok = c.then_space ? e < s.size() && Space(s[e]) : IsBoundary(s, e);
        return end_ok ? len : 0;
      },
      [&](TextView s, size_t i, size_t, Text& out) {
        out.push_back(U' ');
        out.append(s.substr(i, len1));
        out.push_back(U' ');
        out.append(s.substr(i + len1, len - len1));
        out.push_back(U' ');
      });
}

// (?i) ('t)(word)\b -> " \1 \2 ": "'tis", "'twas" after a space.
void SplitTisTwas(Rewriter& r, TextView word) {
  const size_t len = 3 + word.size();
  r.Sub(
      [&](TextView s, size_t i) -> size_t {
        return s[i] == U' ' && MatchesIgnoringCase(s, i + 1, U"'t") &&
                       MatchesIgnoringCase(s, i + 3, word) && IsBoundary(s, i + len)
                   ? len
                   : 0;
      },
      [&](TextView s, size_t i, size_t, Text& out) {
        out.push_back(U' ');
        out.append(s.substr(i + 1, 2));
        out.push_back(U' ');
        out.append(s.substr(i + 3, word.size()));
        out.push_back(U' ');
      });
}

}  // namespace

std::vector<Text> TreebankTokenize(TextView text) {
  Rewriter r(text);
  // STARTING_QUOTES
  PadOpeningQuotes(r);
  OpeningDoubleQuote(r);
  r.ReplaceLiteral(U"``", U" `` ");
  QuoteAfterOpener(r);
  SplitQuotedLetter(r);
  // PUNCTUATION
  SplitFinalPeriod(r, IsFinalPunctClosing, /*space_after_period=*/true);
  PadCommaColon(r);
  PadFinalCommaColon(r);
  PadDotRuns(r);
  r.PadChars([](char32_t c) {
    return c == U';' || c == U'@' || c == U'#' || c == U'$' || c == U'%' || c == U'&';
  });
  SplitFinalPeriod(r, IsFinalPeriodClosing, /*space_after_period=*/false);
  r.PadChars([](char32_t c) { return c == U'?' || c == U'!'; });
  PadClosingApostrophe(r);
  r.PadChars([](char32_t c) { return c == U'*'; });
  // PARENS_BRACKETS, DOUBLE_DASHES
  r.PadChars([](char32_t c) {
    return c == U'[' || c == U']' || c == U'(' || c == U')' || c == U'{' || c == U'}' ||
           c == U'<' || c == U'>';
  });
  r.ReplaceLiteral(U"--", U" -- ");
  // ENDING_QUOTES, on the text with a space added at each end
  r.mutable_text().insert(r.mutable_text().begin(), U' ');
  r.mutable_text().push_back(U' ');
  r.PadChars([](char32_t c) { return c >= 0x80 && InSet(c, U"»”’"); });
  r.ReplaceLiteral(U"''", U" '' ");
  r.ReplaceLiteral(U"\"", U" '' ");
  CollapseWhitespace(r);
  SplitShortClitics(r);
  SplitLongClitics(r);
  // CONTRACTIONS2, CONTRACTIONS3
  for (const Contraction& c : kContractions2) SplitContraction(r, c);
  SplitTisTwas(r, U"is");
  SplitTisTwas(r, U"was");
  return Split(r.text());
}

}  // namespace pipette::scorers::ifbench
