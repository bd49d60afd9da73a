// GPQA Diamond as the reference scorer reads letters (Liquid4All/pipette-scores d93e2e1, its
// rule chain per evals.md 3), faults included, for parity checks. Each rule is a hand-written
// matcher of the upstream regular expression named in its comment (linear, no backtracking).
#include <functional>

#include "pipette/scorers.h"
#include "scorers/text_scan.h"

namespace pipette::scorers {
namespace {

constexpr size_t kNpos = std::string_view::npos;

bool IsUpperChoice(char c) { return c >= 'A' && c <= 'D'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
// Python's \w on ASCII, and any non-ASCII byte (a letter of some script, as \w on str mostly is).
bool IsWordByte(char c) {
  return IsAlnum(c) || c == '_' || (static_cast<unsigned char>(c) & 0x80) != 0;
}

// The letter of the last match found by `match_at` (tried at every position), 0 if none.
char LastMatch(std::string_view t, const std::function<char(size_t)>& match_at) {
  char found = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (const char c = match_at(i); c != 0) found = c;
  }
  return found;
}

// [\*_]*answer[\*_]*\s*:[\s\*_]*([A-Za-z])(?![A-Za-z0-9]), any case.
char PrimaryAt(std::string_view t, std::string_view lower, size_t i) {
  if (lower.compare(i, 6, "answer") != 0) return 0;
  size_t k = i + 6;
  while (k < t.size() && (t[k] == '*' || t[k] == '_')) ++k;
  while (k < t.size() && IsSpace(t[k])) ++k;
  if (k >= t.size() || t[k] != ':') return 0;
  ++k;
  while (k < t.size() && (IsSpace(t[k]) || t[k] == '*' || t[k] == '_')) ++k;
  if (k >= t.size() || !IsLetter(t[k]) || (k + 1 < t.size() && IsAlnum(t[k + 1]))) return 0;
  return AsciiUpper(t[k]);
}

// \\boxed\{[^}]*?([A-D])[^}]*\}: the first upper-case A-D of a box's content up to its first "}".
char BoxedAt(std::string_view t, size_t i) {
  if (t.compare(i, 7, "\\boxed{") != 0) return 0;
  const size_t close = t.find('}', i + 7);
  if (close == kNpos) return 0;
  for (size_t k = i + 7; k < close; ++k) {
    if (IsUpperChoice(t[k])) return t[k];
  }
  return 0;
}

// answer is ([A-Za-z]) / answer is \(([A-Za-z]), any case.
char AnswerIsAt(std::string_view lower, std::string_view t, size_t i, bool paren) {
  if (lower.compare(i, 10, "answer is ") != 0) return 0;
  size_t k = i + 10;
  if (paren) {
    if (k >= t.size() || t[k] != '(') return 0;
    ++k;
  }
  return k < t.size() && IsLetter(t[k]) ? AsciiUpper(t[k]) : 0;
}

// "X or Y" between two choice letters (\b[A-D] or [A-D]\b): upstream gives no letter for such a
// hedge (inferred from its verdicts on the corpus: "It could be B or C" has none).
bool IsHedge(std::string_view t) {
  for (size_t p = t.find(" or "); p != kNpos; p = t.find(" or ", p + 1)) {
    if (p == 0 || p + 4 >= t.size()) continue;
    if (IsUpperChoice(t[p - 1]) && (p == 1 || !IsWordByte(t[p - 2])) && IsUpperChoice(t[p + 4]) &&
        (p + 5 >= t.size() || !IsWordByte(t[p + 5]))) {
      return true;
    }
  }
  return false;
}

struct Fallback {
  std::string_view name;
  std::function<char(std::string_view t, std::string_view lower, size_t i)> match_at;
};

const std::vector<Fallback>& Fallbacks() {
  static const std::vector<Fallback> kFallbacks = {
      {"boxed", [](auto t, auto, size_t i) { return BoxedAt(t, i); }},
      {"answer_is", [](auto t, auto lower, size_t i) { return AnswerIsAt(lower, t, i, false); }},
      {"answer_is_paren",
       [](auto t, auto lower, size_t i) { return AnswerIsAt(lower, t, i, true); }},
      // ([A-D])\)
      {"choice_format",
       [](auto t, auto, size_t i) -> char {
         return IsUpperChoice(t[i]) && i + 1 < t.size() && t[i + 1] == ')' ? t[i] : 0;
       }},
      // ([A-D]) is the correct answer
      {"correct_answer",
       [](auto t, auto, size_t i) -> char {
         return IsUpperChoice(t[i]) && t.compare(i + 1, 22, " is the correct answer") == 0 ? t[i]
                                                                                           : 0;
       }},
      // ([A-D])\s*$
      {"letter_end",
       [](auto t, auto, size_t i) -> char {
         return IsUpperChoice(t[i]) && Trim(t.substr(i + 1)).empty() ? t[i] : 0;
       }},
      // ([A-D])\.
      {"letter_period",
       [](auto t, auto, size_t i) -> char {
         return IsUpperChoice(t[i]) && i + 1 < t.size() && t[i + 1] == '.' ? t[i] : 0;
       }},
      // ([A-D])\W
      {"letter_nonword",
       [](auto t, auto, size_t i) -> char {
         return IsUpperChoice(t[i]) && i + 1 < t.size() && !IsWordByte(t[i + 1]) ? t[i] : 0;
       }},
  };
  return kFallbacks;
}

}  // namespace

Verdict ScoreGpqaUpstream(std::string_view completion, char gold_letter) {
  const std::string text = StripThinking(completion);
  const std::string lower = AsciiLowerCopy(text);
  const std::string_view t = text;
  Verdict v;
  v.rule_set = std::string(kGpqaUpstreamRuleSet);
  char letter = 0;
  if (t.size() == 1 && IsUpperChoice(AsciiUpper(t[0]))) {
    letter = AsciiUpper(t[0]);
    v.method = "single_letter";
  } else if ((letter = LastMatch(t, [&](size_t i) { return PrimaryAt(t, lower, i); })) != 0) {
    v.method = "primary";
  } else if (!IsHedge(t)) {
    for (const Fallback& f : Fallbacks()) {
      letter = LastMatch(t, [&](size_t i) { return f.match_at(t, lower, i); });
      if (letter != 0) {
        v.method = std::string(f.name);
        break;
      }
    }
  }
  if (letter == 0) {
    v.method = "none";
    return v;
  }
  v.extracted = std::string(1, letter);
  v.parsed = true;
  v.correct = letter == AsciiUpper(gold_letter);
  return v;
}

}  // namespace pipette::scorers
