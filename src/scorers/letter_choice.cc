// GPQA Diamond: the answer-letter extraction ladder (pipette's, and upstream's for parity).
#include <array>
#include <optional>

#include "pipette/scorers.h"
#include "scorers/text_scan.h"

namespace pipette::scorers {
namespace {

constexpr size_t kNpos = std::string_view::npos;

struct Letter {
  char letter = 0;  // 'A'..'D' (or any upper-case letter in upstream mode)
  size_t pos = kNpos;
};

bool IsChoice(char upper) { return upper >= 'A' && upper <= 'D'; }
bool AlnumAt(std::string_view t, size_t i) { return i < t.size() && IsAlnum(t[i]); }
bool StandsAlone(std::string_view t, size_t i) {
  return !AlnumAt(t, i + 1) && (i == 0 || !IsAlnum(t[i - 1]));
}

size_t SkipChars(std::string_view t, size_t i, std::string_view chars) {
  while (i < t.size() && chars.find(t[i]) != kNpos) ++i;
  return i;
}

// The last `label` (lower case) followed by optional markdown, a colon, optional white space,
// markdown or "(", and a letter that is not followed by a letter or digit.
Letter LastLabelledLetter(std::string_view text, std::string_view lower, std::string_view label,
                          bool choices_only) {
  Letter found;
  for (size_t p = lower.find(label); p != kNpos; p = lower.find(label, p + 1)) {
    size_t i = SkipChars(lower, p + label.size(), "*_");
    if (i >= lower.size() || lower[i] != ':') continue;
    i = SkipChars(lower, i + 1, choices_only ? " \t*_(" : " \t\n*_");
    if (i >= lower.size() || AlnumAt(text, i + 1)) continue;
    const char upper = AsciiUpper(text[i]);
    if (upper < 'A' || upper > 'Z' || (choices_only && !IsChoice(upper))) continue;
    found = {upper, p};
  }
  return found;
}

// The content of the brace group opening at `open` ('{'), brace-balanced; nullopt if unclosed.
std::optional<std::string_view> BraceGroup(std::string_view t, size_t open) {
  int depth = 0;
  for (size_t i = open; i < t.size(); ++i) {
    if (t[i] == '{') ++depth;
    if (t[i] == '}' && --depth == 0) return t.substr(open + 1, i - open - 1);
  }
  return std::nullopt;
}

// The last \boxed{} whose content, without \text{}-like wrappers, braces, parentheses, `$` and
// spaces, is one letter A-D in either case.
Letter LastBoxedLetter(std::string_view text) {
  Letter found;
  for (size_t p = text.find("\\boxed"); p != kNpos; p = text.find("\\boxed", p + 1)) {
    const size_t open = SkipChars(text, p + 6, " ");
    if (open >= text.size() || text[open] != '{') continue;
    const auto content = BraceGroup(text, open);
    if (!content) continue;
    std::string bare;
    for (size_t i = 0; i < content->size(); ++i) {
      const char c = (*content)[i];
      if (c == '\\') {  // a command name: \text, \textbf, \mathrm ...
        while (i + 1 < content->size() && IsAlnum((*content)[i + 1])) ++i;
        continue;
      }
      if (std::string_view("{}()$ \t.*").find(c) != kNpos) continue;
      bare += c;
    }
    if (bare.size() == 1 && IsChoice(AsciiUpper(bare[0]))) found = {AsciiUpper(bare[0]), p};
  }
  return found;
}

// The last upper-case letter A-D standing alone after one of `phrases` (lower case), skipping
// the optional words `fillers` and the characters " (*:".
Letter LastLetterAfter(std::string_view text, std::string_view lower,
                       std::initializer_list<std::string_view> phrases,
                       std::initializer_list<std::string_view> fillers) {
  Letter found;
  for (std::string_view phrase : phrases) {
    for (size_t p = lower.find(phrase); p != kNpos; p = lower.find(phrase, p + 1)) {
      size_t i = SkipChars(lower, p + phrase.size(), " (*:");
      for (std::string_view filler : fillers) {
        if (lower.substr(i).starts_with(filler)) i = SkipChars(lower, i + filler.size(), " (*:");
      }
      if (i < text.size() && IsChoice(text[i]) && !AlnumAt(text, i + 1) &&
          (found.pos == kNpos || p > found.pos)) {
        found = {text[i], p};
      }
    }
  }
  return found;
}

// The last "X is the correct answer/choice/option" (X upper-case A-D standing alone).
Letter LastLetterBefore(std::string_view text, std::string_view lower) {
  Letter found;
  for (std::string_view phrase : {" is the correct answer", " is the correct choice",
                                  " is the correct option", " is correct"}) {
    for (size_t p = lower.find(phrase); p != kNpos; p = lower.find(phrase, p + 1)) {
      size_t i = p;
      while (i > 0 && std::string_view(")*").find(text[i - 1]) != kNpos) --i;
      if (i == 0) continue;
      const size_t at = i - 1;
      if (IsChoice(text[at]) && StandsAlone(text, at) && (found.pos == kNpos || at > found.pos)) {
        found = {text[at], at};
      }
    }
  }
  return found;
}

// The last "X)" with X an upper-case letter A-D standing alone.
Letter LastChoiceParen(std::string_view text) {
  Letter found;
  for (size_t p = text.find(')'); p != kNpos; p = text.find(')', p + 1)) {
    if (p == 0) continue;
    const size_t at = p - 1;
    if (IsChoice(text[at]) && (at == 0 || !IsAlnum(text[at - 1]))) found = {text[at], at};
  }
  return found;
}

Verdict Make(char letter, std::string_view method, char gold, std::string_view rule_set) {
  Verdict v;
  v.rule_set = std::string(rule_set);
  v.method = std::string(method);
  if (letter == 0) return v;
  v.extracted = std::string(1, letter);
  v.parsed = true;
  v.correct = letter == AsciiUpper(gold);
  return v;
}

Verdict ScorePipette(std::string_view text, char gold) {
  constexpr std::string_view kRules = kGpqaRuleSet;
  if (text.size() == 1 && IsChoice(AsciiUpper(text[0]))) {
    return Make(AsciiUpper(text[0]), "single_letter", gold, kRules);
  }
  const std::string lower = AsciiLowerCopy(text);
  Letter label = LastLabelledLetter(text, lower, "answer", true);
  const Letter choice = LastLabelledLetter(text, lower, "final choice", true);
  if (choice.pos != kNpos && (label.pos == kNpos || choice.pos > label.pos)) label = choice;
  if (label.pos != kNpos) return Make(label.letter, "answer_label", gold, kRules);
  if (const Letter boxed = LastBoxedLetter(text); boxed.pos != kNpos) {
    return Make(boxed.letter, "boxed", gold, kRules);
  }
  Letter phrase = LastLetterAfter(
      text, lower, {"answer is", "choice is", "option is", "go with", "i choose", "i pick"},
      {"always", "option", "choice"});
  const Letter before = LastLetterBefore(text, lower);
  if (before.pos != kNpos && (phrase.pos == kNpos || before.pos > phrase.pos)) phrase = before;
  if (phrase.pos != kNpos) return Make(phrase.letter, "answer_phrase", gold, kRules);
  if (const Letter paren = LastChoiceParen(text); paren.pos != kNpos) {
    return Make(paren.letter, "choice_paren", gold, kRules);
  }
  return Make(0, "none", gold, kRules);
}

}  // namespace

Verdict ScoreGpqa(std::string_view completion, char gold_letter) {
  return ScorePipette(StripThinking(completion), gold_letter);
}

}  // namespace pipette::scorers
