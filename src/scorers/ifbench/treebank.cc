// NLTKWordTokenizer.tokenize (nltk/tokenize/destructive.py, nltk 3.9.2): Treebank word
// splitting, as nltk.word_tokenize applies it to each sentence.
//
// Upstream is an ordered list of re.sub calls. Each is rebuilt below as one left-to-right pass
// that finds the matches re.sub finds (leftmost, non-overlapping, on the text as it was before
// that substitution) and writes the same replacement. The rule each pass stands for is quoted
// above it. Whitespace, \w, \d and \b are CPython's (pystr.h). nltk 3.9.2 has the whitespace
// collapse before the clitic rules (nltk PR #3224); the dash rule added after 3.9.2 is absent.
#include <string_view>
#include <vector>

#include "src/scorers/ifbench/nlp.h"
#include "src/scorers/ifbench/pystr.h"

namespace pipette::scorers::ifbench {
namespace {

bool InSet(char32_t c, TextView set) { return set.find(c) != TextView::npos; }

// \b: a \w character on exactly one side of position i.
bool IsBoundary(TextView s, size_t i) {
  const bool before = i > 0 && IsWord(s[i - 1]);
  const bool after = i < s.size() && IsWord(s[i]);
  return before != after;
}

// A character that `re` with IGNORECASE takes for ASCII letter `lower`: sre compares simple
// lower-case forms (U+0130 lowers to "i") and adds its equivalence pairs (i/U+0131, s/U+017F).
bool SameIgnoringCase(char32_t c, char32_t lower) {
  if (lower < U'a' || lower > U'z') return c == lower;
  if (c == lower || c == lower - 32) return true;
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

// re.sub(r"[...]", r" \g<0> ", s) for a one-character class.
template <typename Pred>
Text PadChars(TextView s, Pred in_class) {
  Text out;
  out.reserve(s.size() + 16);
  for (char32_t c : s) {
    if (in_class(c)) {
      out.push_back(U' ');
      out.push_back(c);
      out.push_back(U' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// ---- STARTING_QUOTES ---------------------------------------------------------------------

// ([«“‘„]|[`]+) -> " \1 ": an opening curly quote, or a whole run of backticks.
Text PadOpeningQuotes(TextView s) {
  Text out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    if (InSet(s[i], U"«“‘„")) {
      out.append(U" ").push_back(s[i]);
      out.push_back(U' ');
      ++i;
    } else if (s[i] == U'`') {
      size_t j = i;
      while (j < s.size() && s[j] == U'`') ++j;
      out.push_back(U' ');
      out.append(s.substr(i, j - i));
      out.push_back(U' ');
      i = j;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// ^\" -> ``: a double quote that opens the text.
Text OpeningDoubleQuote(TextView s) {
  if (s.empty() || s[0] != U'"') return Text(s);
  Text out(U"``");
  out.append(s.substr(1));
  return out;
}

// ([ \(\[{<])(\"|\'{2}) -> "\1 `` ": a double quote, or two apostrophes, after a space or an
// opening bracket.
Text QuoteAfterOpener(TextView s) {
  Text out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    if (InSet(s[i], U" ([{<") && i + 1 < s.size()) {
      size_t quote = 0;
      if (s[i + 1] == U'"') {
        quote = 1;
      } else if (s.substr(i + 1, 2) == U"''") {
        quote = 2;
      }
      if (quote > 0) {
        out.push_back(s[i]);
        out.append(U" `` ");
        i += 1 + quote;
        continue;
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

// (?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b -> "\1 \2": an apostrophe before a one-letter word that
// is not a clitic. ("re", "ve" and "ll" could only be excluded where the letter is followed by
// another word character, which the \b already rules out.)
Text SplitQuotedLetter(TextView s) {
  Text out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    if (s[i] == U'\'' && i + 1 < s.size() && IsWord(s[i + 1]) && IsBoundary(s, i + 2)) {
      const char32_t c = s[i + 1];
      bool clitic = false;
      for (char32_t letter : TextView(U"mtsdn")) clitic = clitic || SameIgnoringCase(c, letter);
      if (!clitic) {
        out.append(U"' ").push_back(c);
        i += 2;
        continue;
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

// ---- PUNCTUATION -------------------------------------------------------------------------

// ([^\.])(\.)([<closing>]*)\s*$ with replacement "\1 \2 \3 " (space_after_period) or
// "\1 \2\3 ". Only the last period can match, since no other period may follow it; `$` also
// holds before a final "\n", which \s* swallows anyway. The greedy closing run is group 3 and
// the whitespace after it is dropped.
template <typename Pred>
Text SplitFinalPeriod(TextView s, Pred closing, bool space_after_period) {
  const size_t q = s.rfind(U'.');
  if (q == TextView::npos || q == 0 || s[q - 1] == U'.') return Text(s);
  size_t run_end = q + 1;
  while (run_end < s.size() && closing(s[run_end])) ++run_end;
  for (size_t k = run_end; k < s.size(); ++k) {
    if (!IsSpace(s[k])) return Text(s);
  }
  Text out(s.substr(0, q));
  out.append(space_after_period ? U" . " : U" .");
  out.append(s.substr(q + 1, run_end - q - 1));
  out.push_back(U' ');
  return out;
}

bool IsFinalPunctClosing(char32_t c) { return InSet(c, U"])}>\"'»”’ "); }
bool IsFinalPeriodClosing(char32_t c) { return InSet(c, U"])}>\"'"); }

// ([:,])([^\d]) -> " \1 \2": a comma or colon not followed by a digit (both characters are
// consumed, so ",," pads only the first).
Text PadCommaColon(TextView s) {
  Text out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    if ((s[i] == U',' || s[i] == U':') && i + 1 < s.size() && !IsDecimal(s[i + 1])) {
      out.push_back(U' ');
      out.push_back(s[i]);
      out.push_back(U' ');
      out.push_back(s[i + 1]);
      i += 2;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// ([:,])$ -> " \1 ": a comma or colon at the end, or before a final "\n".
Text PadFinalCommaColon(TextView s) {
  const size_t n = s.size();
  size_t at = TextView::npos;
  if (n >= 1 && (s[n - 1] == U',' || s[n - 1] == U':')) {
    at = n - 1;
  } else if (n >= 2 && s[n - 1] == U'\n' && (s[n - 2] == U',' || s[n - 2] == U':')) {
    at = n - 2;
  }
  if (at == TextView::npos) return Text(s);
  Text out(s.substr(0, at));
  out.push_back(U' ');
  out.push_back(s[at]);
  out.push_back(U' ');
  out.append(s.substr(at + 1));
  return out;
}

// \.{2,} -> " \g<0> ".
Text PadDotRuns(TextView s) {
  Text out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    while (j < s.size() && s[j] == U'.') ++j;
    if (j - i >= 2) {
      out.push_back(U' ');
      out.append(s.substr(i, j - i));
      out.push_back(U' ');
      i = j;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// ([^'])' -> "\1 ' ": an apostrophe that closes a word (followed by a space).
Text PadClosingApostrophe(TextView s) {
  Text out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    if (s[i] != U'\'' && s.substr(i + 1, 2) == U"' ") {
      out.push_back(s[i]);
      out.append(U" ' ");
      i += 3;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// ---- ENDING_QUOTES -----------------------------------------------------------------------

// \s+ -> " ".
Text CollapseWhitespace(TextView s) {
  Text out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (IsSpace(s[i])) {
      while (i < s.size() && IsSpace(s[i])) ++i;
      out.push_back(U' ');
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// ([^' ])('[sS]|'[mM]|'[dD]|') -> "\1 \2 ": 's 'm 'd, or a bare apostrophe, ending a word.
Text SplitShortClitics(TextView s) {
  Text out;
  out.reserve(s.size() + 16);
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    if (s[i] != U'\'' && s[i] != U' ' && i + 1 < n && s[i + 1] == U'\'') {
      size_t len = 0;  // of group 2
      if (i + 3 < n && InSet(s[i + 2], U"sSmMdD") && s[i + 3] == U' ') {
        len = 2;
      } else if (i + 2 < n && s[i + 2] == U' ') {
        len = 1;
      }
      if (len > 0) {
        out.push_back(s[i]);
        out.push_back(U' ');
        out.append(s.substr(i + 1, len));
        out.push_back(U' ');
        i += 2 + len;
        continue;
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

// ([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) -> "\1 \2 " (case-sensitive).
Text SplitLongClitics(TextView s) {
  static constexpr TextView kClitics[] = {U"'ll", U"'LL", U"'re", U"'RE",
                                          U"'ve", U"'VE", U"n't", U"N'T"};
  Text out;
  out.reserve(s.size() + 16);
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    if (s[i] != U'\'' && s[i] != U' ' && i + 4 < n && s[i + 4] == U' ') {
      const TextView next = s.substr(i + 1, 3);
      bool hit = false;
      for (TextView c : kClitics) hit = hit || next == c;
      if (hit) {
        out.push_back(s[i]);
        out.push_back(U' ');
        out.append(next);
        out.push_back(U' ');
        i += 5;
        continue;
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

// ---- CONTRACTIONS2 / CONTRACTIONS3 (MacIntyre), all case-insensitive ----------------------

struct Contraction {
  TextView first;   // group 1, lower case
  TextView second;  // group 2, lower case
  bool then_space;  // (?=\s) instead of \b after group 2
};

// (?i)\b(first)(second)\b -> " \1 \2 ", or (?=\s) at the end for "wanna".
Text SplitContraction(TextView s, const Contraction& c) {
  const size_t len1 = c.first.size(), len = len1 + c.second.size();
  Text out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    const size_t e = i + len;
    if (IsBoundary(s, i) && MatchesIgnoringCase(s, i, c.first) &&
        MatchesIgnoringCase(s, i + len1, c.second) &&
        (c.then_space ? e < s.size() && IsSpace(s[e]) : IsBoundary(s, e))) {
      out.push_back(U' ');
      out.append(s.substr(i, len1));
      out.push_back(U' ');
      out.append(s.substr(i + len1, len - len1));
      out.push_back(U' ');
      i = e;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// (?i) ('t)(word)\b -> " \1 \2 ": "'tis", "'twas" after a space.
Text SplitTisTwas(TextView s, TextView word) {
  Text out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    const size_t e = i + 3 + word.size();
    if (s[i] == U' ' && MatchesIgnoringCase(s, i + 1, U"'t") &&
        MatchesIgnoringCase(s, i + 3, word) && IsBoundary(s, e)) {
      out.push_back(U' ');
      out.append(s.substr(i + 1, 2));
      out.push_back(U' ');
      out.append(s.substr(i + 3, word.size()));
      out.push_back(U' ');
      i = e;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

constexpr Contraction kContractions2[] = {
    {U"can", U"not", false}, {U"d", U"'ye", false}, {U"gim", U"me", false},
    {U"gon", U"na", false},  {U"got", U"ta", false}, {U"lem", U"me", false},
    {U"more", U"'n", false}, {U"wan", U"na", true},
};

}  // namespace

std::vector<Text> TreebankTokenize(TextView text) {
  // STARTING_QUOTES
  Text s = PadOpeningQuotes(text);
  s = OpeningDoubleQuote(s);
  s = Replace(s, U"``", U" `` ");
  s = QuoteAfterOpener(s);
  s = SplitQuotedLetter(s);
  // PUNCTUATION
  s = SplitFinalPeriod(s, IsFinalPunctClosing, /*space_after_period=*/true);
  s = PadCommaColon(s);
  s = PadFinalCommaColon(s);
  s = PadDotRuns(s);
  s = PadChars(s, [](char32_t c) { return InSet(c, U";@#$%&"); });
  s = SplitFinalPeriod(s, IsFinalPeriodClosing, /*space_after_period=*/false);
  s = PadChars(s, [](char32_t c) { return c == U'?' || c == U'!'; });
  s = PadClosingApostrophe(s);
  s = PadChars(s, [](char32_t c) { return c == U'*'; });
  // PARENS_BRACKETS, DOUBLE_DASHES
  s = PadChars(s, [](char32_t c) { return InSet(c, U"][(){}<>"); });
  s = Replace(s, U"--", U" -- ");
  // ENDING_QUOTES, on the text with a space added at each end
  s = U" " + s + U" ";
  s = PadChars(s, [](char32_t c) { return InSet(c, U"»”’"); });
  s = Replace(s, U"''", U" '' ");
  s = Replace(s, U"\"", U" '' ");
  s = CollapseWhitespace(s);
  s = SplitShortClitics(s);
  s = SplitLongClitics(s);
  // CONTRACTIONS2, CONTRACTIONS3
  for (const Contraction& c : kContractions2) s = SplitContraction(s, c);
  s = SplitTisTwas(s, U"is");
  s = SplitTisTwas(s, U"was");
  return Split(s);
}

}  // namespace pipette::scorers::ifbench
