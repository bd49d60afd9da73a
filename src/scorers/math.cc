// MATH-500: brace-balanced box extraction, an explicit final-answer statement when unboxed,
// normalization and string / numeric / symbolic (GiNaC) equivalence (rule set kMathRuleSet).
//
// Every rewriting step below is one pass over the text (or a bounded number of passes), so the
// cost stays linear in the completion's length whatever it holds.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "pipette/scorers.h"
#include "scorers/math_expr.h"
#include "scorers/math_symbolic.h"
#include "scorers/text_scan.h"

namespace pipette::scorers {
namespace {

constexpr size_t kNpos = std::string_view::npos;
constexpr int kMaxDepth = 256;  // deeper nesting is not an answer pipette tries to read

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// ---- Extraction -------------------------------------------------------------------------------

// The content of the brace group opening at `open`, balanced; nullopt when unclosed or nested
// deeper than kMaxDepth.
std::optional<std::string_view> Group(std::string_view t, size_t open) {
  int depth = 0;
  for (size_t i = open; i < t.size(); ++i) {
    if (t[i] == '{' && ++depth > kMaxDepth) return std::nullopt;
    if (t[i] == '}' && --depth == 0) return t.substr(open + 1, i - open - 1);
  }
  return std::nullopt;
}

// The content of the last \boxed{}, \fbox{} or \framebox{} (white space allowed before "{").
std::optional<std::string_view> LastBox(std::string_view text) {
  std::optional<std::string_view> last;
  size_t last_pos = 0;
  for (std::string_view cmd : {"\\boxed", "\\fbox", "\\framebox"}) {
    for (size_t p = text.find(cmd); p != kNpos; p = text.find(cmd, p + 1)) {
      size_t i = p + cmd.size();
      while (i < text.size() && text[i] == ' ') ++i;
      if (i >= text.size() || text[i] != '{') continue;
      if (auto g = Group(text, i); g && (!last || p > last_pos)) {
        last = g;
        last_pos = p;
      }
    }
  }
  return last;
}

// Whether `lower` holds `word` at `p`, not followed by a letter.
bool WordAt(std::string_view lower, size_t p, std::string_view word) {
  return lower.substr(p).starts_with(word) &&
         (p + word.size() == lower.size() || !IsLetter(lower[p + word.size()]));
}

// Whether the cue word at `p` is a heading ("**Final Answer**", "## Answer"): before it on its
// line only markdown and "final". Looks back at most 24 characters, so the check is bounded.
bool OpensHeading(std::string_view lower, size_t p) {
  size_t k = p;
  for (int seen = 0; k > 0 && lower[k - 1] != '\n'; --k) {
    if (++seen > 24) return false;
  }
  std::string before(lower.substr(k, p - k));
  if (size_t f = before.find("final"); f != kNpos) before.erase(f, 5);
  return before.find_first_not_of("*_#> ") == kNpos;
}

// After "the answer to/for ...": the position of the " is" that follows within 64 characters of
// the same line ("The answer to part (b) is 5"), else `i`.
size_t SkipQualifier(std::string_view lower, size_t i) {
  if (!WordAt(lower, i, "to") && !WordAt(lower, i, "for")) return i;
  const std::string_view span = lower.substr(i, 64);
  const size_t is = span.find(" is ");
  if (is == kNpos || span.substr(0, is).find_first_of("\n.:") != kNpos) return i;
  return i + is + 1;
}

// Where the answer introduced by a cue word ending at `i` starts: after ":" or "=", after "is",
// "are", "was", "would be", "should be" or "will be" (markdown and spaces may come between, or
// "to/for <a few words>"), or on the next line after a heading; npos when the word introduces
// nothing ("check the answer.").
size_t CueEnd(std::string_view lower, size_t i, bool heading) {
  if (i < lower.size() && lower[i] == 's') ++i;  // "answers are", "solutions are"
  while (i < lower.size() && (lower[i] == '*' || lower[i] == '_' || lower[i] == ' ')) ++i;
  i = SkipQualifier(lower, i);
  if (i < lower.size() && (lower[i] == ':' || lower[i] == '=')) return i + 1;
  for (std::string_view verb : {"is", "are", "was", "would be", "should be", "will be"}) {
    if (WordAt(lower, i, verb)) return i + verb.size();
  }
  if (heading && i < lower.size() && lower[i] == '\n') return i + 1;
  return kNpos;
}

// The answer start of the last cue among `words` (each standing alone as a word), or npos.
size_t LastCue(std::string_view lower, std::initializer_list<std::string_view> words,
               bool headings) {
  size_t last = kNpos;
  for (std::string_view word : words) {
    for (size_t p = lower.find(word); p != kNpos; p = lower.find(word, p + 1)) {
      if (p > 0 && IsLetter(lower[p - 1])) continue;
      const size_t end = CueEnd(lower, p + word.size(), headings && OpensHeading(lower, p));
      if (end != kNpos && (last == kNpos || end > last)) last = end;
    }
  }
  return last;
}

// The end of the sentence starting at `from`: a line break, or '.', '!' or '?' before white
// space, markdown or the end of the text, outside math ($...$ and \(...\) end at a line break,
// $$...$$ and \[...\] may span lines). A run of dots ("0.333...") stays in the sentence.
size_t SentenceEnd(std::string_view t, size_t from) {
  bool inline_math = false;
  bool display_math = false;
  for (size_t i = from; i < t.size(); ++i) {
    const char c = t[i];
    const char next = i + 1 < t.size() ? t[i + 1] : '\0';
    if (c == '\\') {
      if (next == '(') inline_math = true;
      if (next == ')') inline_math = false;
      if (next == '[') display_math = true;
      if (next == ']') display_math = false;
      ++i;  // an escaped character (\$, \{) is text
    } else if (c == '$' && next == '$') {
      display_math = !display_math;
      ++i;
    } else if (c == '$') {
      inline_math = !inline_math;
    } else if (display_math) {
      continue;
    } else if (c == '\n') {
      return i;
    } else if (!inline_math && (c == '.' || c == '!' || c == '?')) {
      size_t k = i;
      while (c == '.' && k + 1 < t.size() && t[k + 1] == '.') ++k;
      const char after = k + 1 < t.size() ? t[k + 1] : ' ';
      if (IsSpace(after) || after == '*' || after == '_') return k > i ? k + 1 : i;
      i = k;
    }
  }
  return t.size();
}

// `answer` without a trailing clause (", which I checked", " because ...").
std::string_view CutClause(std::string_view answer) {
  const std::string lower = AsciiLowerCopy(answer);
  size_t cut = answer.size();
  for (std::string_view clause :
       {", which", ", since", ", because", ", as ", " because ", " since ", " which "}) {
    cut = std::min(cut, lower.find(clause));
  }
  return answer.substr(0, cut);
}

// The answer stated from `from` on: the rest of its sentence without a trailing clause, markdown
// or math delimiters. `ends_text` tells whether only punctuation follows the sentence.
std::optional<std::string> AnswerAt(std::string_view text, size_t from, bool* ends_text) {
  while (from < text.size() &&
         (IsSpace(text[from]) || text[from] == '*' || text[from] == '_' || text[from] == ':')) {
    ++from;
  }
  const size_t end = SentenceEnd(text, from);
  *ends_text = text.substr(end).find_first_not_of(" \t\r\n.!*_$") == kNpos;
  std::string_view a = Trim(CutClause(text.substr(from, end - from)));
  while (!a.empty() && std::string_view("*_: ").find(a.front()) != kNpos) a.remove_prefix(1);
  while (!a.empty() && std::string_view("*_ ,;:").find(a.back()) != kNpos) a.remove_suffix(1);
  if (a.size() >= 2 && a.back() == '.' && a[a.size() - 2] != '.') a.remove_suffix(1);
  for (std::string_view open : {"\\(", "\\["}) {
    if (a.starts_with(open)) a.remove_prefix(2);
  }
  for (std::string_view close : {"\\)", "\\]"}) {
    if (a.ends_with(close)) a.remove_suffix(2);
  }
  a = Trim(a);
  if (a.empty()) return std::nullopt;
  return std::string(a);
}

// The answer of an explicit final statement. The last "answer is/are/was/would be", "answer:",
// "answer =" or "Final Answer" heading (markdown allowed around the words) counts wherever it
// stands; a later "the result/solution/value is X" counts only when its sentence ends the text.
// The answer is the rest of that sentence; never the last number of the text.
std::optional<std::string> FinalStatement(std::string_view text) {
  const std::string lower = AsciiLowerCopy(text);
  const size_t strong = LastCue(lower, {"answer"}, true);
  const size_t weak = LastCue(lower, {"result", "solution", "value"}, false);
  bool ends_text = false;
  if (weak != kNpos && (strong == kNpos || weak > strong)) {
    auto answer = AnswerAt(text, weak, &ends_text);
    if (answer && ends_text) return answer;
  }
  if (strong == kNpos) return std::nullopt;
  return AnswerAt(text, strong, &ends_text);
}

// ---- Notation rewriting -------------------------------------------------------------------------

// `s` with every `from` replaced by `to`, in one pass.
void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  size_t p = s.find(from);
  if (from.empty() || p == kNpos) return;
  std::string out;
  out.reserve(s.size());
  size_t start = 0;
  for (; p != kNpos; p = s.find(from, start)) {
    out.append(s, start, p - start);
    out.append(to);
    start = p + from.size();
  }
  out.append(s, start);
  s = std::move(out);
}

// One Unicode character (UTF-8) and the LaTeX it stands for.
struct Glyph {
  std::string_view utf8;
  std::string_view latex;
};

// Characters written for LaTeX notation. Radicals, superscript and subscript digits, vulgar
// fractions and combining overlines need their neighbours and are read apart.
constexpr Glyph kGlyphs[] = {
    {"\xcf\x80", "\\pi "},         // π
    {"\xe2\x88\x92", "-"},         // − minus sign
    {"\xc3\x97", "\\times "},      // ×
    {"\xc3\xb7", "/"},             // ÷
    {"\xc2\xb7", "\\cdot "},       // · middle dot
    {"\xe2\x8b\x85", "\\cdot "},   // ⋅ dot operator
    {"\xe2\x88\x99", "\\cdot "},   // ∙ bullet operator
    {"\xe2\x88\x97", "*"},         // ∗ asterisk operator
    {"\xe2\x89\xa4", "\\le "},     // ≤
    {"\xe2\xa9\xbd", "\\le "},     // ⩽
    {"\xe2\x89\xa5", "\\ge "},     // ≥
    {"\xe2\xa9\xbe", "\\ge "},     // ⩾
    {"\xe2\x89\xa0", "\\ne "},     // ≠
    {"\xc2\xb1", "\\pm "},         // ±
    {"\xe2\x88\x93", "\\mp "},     // ∓
    {"\xe2\x88\x9e", "\\infty "},  // ∞
    {"\xe2\x88\xaa", "\\cup "},    // ∪
    {"\xe2\x88\xa9", "\\cap "},    // ∩
    {"\xe2\x88\x88", "\\in "},     // ∈
    {"\xc2\xb0", "^\\circ "},      // ° degree sign
    {"\xc2\xba", "^\\circ "},      // º (an ordinal sign typed for degrees)
    {"\xe2\x80\xa6", "\\ldots "},  // … ellipsis
    {"\xe2\x81\x84", "/"},         // ⁄ fraction slash
    {"\xe2\x88\x95", "/"},         // ∕ division slash
    {"\xc2\xa0", " "},             // no-break space
    {"\xe2\x80\xaf", " "},         // narrow no-break space
    {"\xe2\x80\x82", " "},         // en space
    {"\xe2\x80\x83", " "},         // em space
    {"\xe2\x80\x89", " "},         // thin space
    {"\xe2\x80\x8a", " "},         // hair space
    {"\xe2\x80\x8b", ""},          // zero-width space
    {"\xe2\x81\xa0", ""},          // word joiner
    {"\xef\xbb\xbf", ""},          // byte-order mark
};

// √ ∛ ∜, whose radicand follows (see Radicand).
constexpr Glyph kRadicals[] = {
    {"\xe2\x88\x9a", "\\sqrt"}, {"\xe2\x88\x9b", "\\sqrt[3]"}, {"\xe2\x88\x9c", "\\sqrt[4]"}};

struct VulgarFraction {
  std::string_view utf8;
  std::string_view latex;
};

constexpr VulgarFraction kVulgarFractions[] = {
    {"\xc2\xbd", "\\frac{1}{2}"},     {"\xc2\xbc", "\\frac{1}{4}"},
    {"\xc2\xbe", "\\frac{3}{4}"},     {"\xe2\x85\x90", "\\frac{1}{7}"},
    {"\xe2\x85\x91", "\\frac{1}{9}"}, {"\xe2\x85\x92", "\\frac{1}{10}"},
    {"\xe2\x85\x93", "\\frac{1}{3}"}, {"\xe2\x85\x94", "\\frac{2}{3}"},
    {"\xe2\x85\x95", "\\frac{1}{5}"}, {"\xe2\x85\x96", "\\frac{2}{5}"},
    {"\xe2\x85\x97", "\\frac{3}{5}"}, {"\xe2\x85\x98", "\\frac{4}{5}"},
    {"\xe2\x85\x99", "\\frac{1}{6}"}, {"\xe2\x85\x9a", "\\frac{5}{6}"},
    {"\xe2\x85\x9b", "\\frac{1}{8}"}, {"\xe2\x85\x9c", "\\frac{3}{8}"},
    {"\xe2\x85\x9d", "\\frac{5}{8}"}, {"\xe2\x85\x9e", "\\frac{7}{8}"},
};

// The character a superscript (or subscript) character at the start of `s` stands for, and the
// length of its UTF-8 form; {'\0', 0} when there is none.
std::pair<char, size_t> ScriptChar(std::string_view s, bool subscript) {
  if (s.size() < 2) return {'\0', 0};
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  if (!subscript && b(0) == 0xc2 && (b(1) == 0xb2 || b(1) == 0xb3)) {
    return {b(1) == 0xb2 ? '2' : '3', 2};  // ² ³
  }
  if (!subscript && b(0) == 0xc2 && b(1) == 0xb9) return {'1', 2};  // ¹
  if (s.size() < 3 || b(0) != 0xe2) return {'\0', 0};
  if (subscript) {
    if (b(1) == 0x82 && b(2) >= 0x80 && b(2) <= 0x89) return {char('0' + b(2) - 0x80), 3};
    return {'\0', 0};
  }
  if (b(1) != 0x81) return {'\0', 0};
  if (b(2) == 0xb0) return {'0', 3};
  if (b(2) >= 0xb4 && b(2) <= 0xb9) return {char('0' + b(2) - 0xb0), 3};
  if (b(2) == 0xba) return {'+', 3};
  if (b(2) == 0xbb) return {'-', 3};
  if (b(2) == 0xbf) return {'n', 3};
  return {'\0', 0};
}

// After a radical sign: the radicand in braces when it is digits or one letter ("√12" ->
// "\sqrt{12}": TeX's \sqrt12 would take the 1 alone); "√(...)" and "√{...}" stay as written.
// Returns the position after what was read.
size_t Radicand(std::string_view s, size_t i, std::string& out) {
  while (i < s.size() && s[i] == ' ') ++i;
  size_t k = i;
  while (k < s.size() && (IsDigit(s[k]) || s[k] == '.')) ++k;
  if (k == i && k < s.size() && IsLetter(s[k])) ++k;
  if (k == i) return i;
  out += '{';
  out.append(s.substr(i, k - i));
  out += '}';
  return k;
}

// Whether `s` starts with the (short) UTF-8 sequence `utf8`; compared byte by byte, as most
// candidates differ in their first two bytes.
bool StartsWithChar(std::string_view s, std::string_view utf8) {
  if (s.size() < utf8.size()) return false;
  for (size_t k = 0; k < utf8.size(); ++k) {
    if (s[k] != utf8[k]) return false;
  }
  return true;
}

// Reads one non-ASCII notation character at `i` into `out`; returns the length read, 0 when it
// is none of them.
size_t UnicodeNotation(std::string_view s, size_t i, std::string& out) {
  if (static_cast<unsigned char>(s[i]) < 0xc0) return 0;  // not the first byte of a character
  const std::string_view rest = s.substr(i);
  for (const Glyph& g : kGlyphs) {
    if (StartsWithChar(rest, g.utf8)) {
      out.append(g.latex);
      return g.utf8.size();
    }
  }
  for (const VulgarFraction& f : kVulgarFractions) {
    if (StartsWithChar(rest, f.utf8)) {
      out.append(f.latex);  // "2½" reads "2\frac{1}{2}", the mixed-number form
      return f.utf8.size();
    }
  }
  for (const Glyph& radical : kRadicals) {
    if (StartsWithChar(rest, radical.utf8)) {
      out.append(radical.latex);
      return Radicand(s, i + radical.utf8.size(), out) - i;
    }
  }
  for (bool sub : {false, true}) {  // "x²" -> "x^{2}", "52₈" -> "52_{8}"
    size_t k = i;
    std::string script;
    while (true) {
      const auto [c, n] = ScriptChar(s.substr(k), sub);
      if (n == 0) break;
      script += c;
      k += n;
    }
    if (!script.empty()) {
      out.append(sub ? "_{" : "^{").append(script).append("}");
      return k - i;
    }
  }
  return 0;
}

// Digits each followed by a combining overline or macron ("0.3̅") as "\overline{3}"; returns the
// length read at `i`, 0 when there is no such digit.
size_t OverlinedDigits(std::string_view s, size_t i, std::string& out) {
  size_t k = i;
  std::string digits;
  while (k + 2 < s.size() && IsDigit(s[k]) && static_cast<unsigned char>(s[k + 1]) == 0xcc &&
         (static_cast<unsigned char>(s[k + 2]) == 0x85 ||
          static_cast<unsigned char>(s[k + 2]) == 0x84)) {
    digits += s[k];
    k += 3;
  }
  if (digits.empty()) return 0;
  out.append("\\overline{").append(digits).append("}");
  return k - i;
}

// Math written with Unicode characters, as LaTeX: √ ² π × ÷ · − ≤ ≥ ½ ₈ and the like.
std::string UnicodeToLatex(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = static_cast<unsigned char>(s[i]) >= 0x80 ? UnicodeNotation(s, i, out)
                                                              : OverlinedDigits(s, i, out);
    if (n > 0) {
      i += n;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// Whether `s` at `k` holds exactly three digits (a thousands group).
bool ThreeDigitsAt(std::string_view s, size_t k) {
  return k + 3 <= s.size() && IsDigit(s[k]) && IsDigit(s[k + 1]) && IsDigit(s[k + 2]) &&
         (k + 3 == s.size() || !IsDigit(s[k + 3]));
}

// Drops TeX's thousands separators "{,}" and ",\!" between a digit and a group of three digits:
// "1{,}000{,}000", "10,\!000". ("1{,}5", a decimal comma, is left alone.)
std::string DropTexDigitGrouping(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && IsDigit(s[i - 1])) {
      const std::string_view rest = s.substr(i);
      const size_t n = rest.starts_with("{,}") ? 3 : rest.starts_with(",\\!") ? 3 : 0;
      if (n > 0 && ThreeDigitsAt(s, i + n)) {
        i += n - 1;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// Whether `t` is one number with thousands separators: "-3,600", "1,000,000.5".
bool IsGroupedNumber(std::string_view t) {
  size_t i = t.starts_with('-') ? 1 : 0;
  const size_t lead = i;
  while (i < t.size() && IsDigit(t[i])) ++i;
  if (i == lead || i - lead > 3 || i >= t.size() || t[i] != ',') return false;
  while (i < t.size() && t[i] == ',' && ThreeDigitsAt(t, i + 1)) i += 4;
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && IsDigit(t[i])) ++i;
  }
  return i == t.size();
}

// "\frac{3,600}{7}" -> "\frac{3600}{7}": a brace group (a TeX argument, not a set "\{...\}")
// holding one number with thousands separators cannot be a list. Each scan stops at the first
// character that is not part of a number, so the pass is linear.
std::string DropGroupingInArguments(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    out += s[i];
    if (s[i] != '{' || (i > 0 && s[i - 1] == '\\')) continue;
    size_t k = i + 1;
    while (k < s.size() && (IsDigit(s[k]) || s[k] == ',' || s[k] == '.' || s[k] == '-')) ++k;
    if (k < s.size() && s[k] == '}' && IsGroupedNumber(s.substr(i + 1, k - i - 1))) {
      for (char c : s.substr(i + 1, k - i - 1)) {
        if (c != ',') out += c;
      }
      i = k - 1;
    }
  }
  return out;
}

// "3,600\pi" -> "3600\pi": when every comma of an answer without brackets separates thousands
// (digits before it in a group of one to three, not after a decimal point; three digits after
// it), the answer is one value. A tuple, interval or list keeps its commas.
std::string DropThousandsSeparators(const std::string& s) {
  if (s.find(',') == kNpos || s.find_first_of("([") != kNpos) return s;
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == ',') return s;  // a comma after no digits
    if (!IsDigit(s[i])) {
      out += s[i++];
      continue;
    }
    const size_t start = i;
    while (i < s.size() && IsDigit(s[i])) out += s[i++];
    if (i < s.size() && s[i] == ',' && (i - start > 3 || (start > 0 && s[start - 1] == '.'))) {
      return s;
    }
    while (i < s.size() && s[i] == ',') {
      if (!ThreeDigitsAt(s, i + 1)) return s;
      out.append(s, i + 1, 3);
      i += 4;
    }
  }
  return out;
}

// Wrapper commands whose argument is the answer itself. Text-mode ones start a word
// ("5\text{cm}" reads "5 cm", so that the unit is seen as one).
constexpr std::string_view kTextWrappers[] = {"text",   "textbf", "textit", "textrm", "textsf",
                                              "mathrm", "mbox",   "hbox",   "emph",   "textnormal"};
constexpr std::string_view kMathWrappers[] = {"mathbf",    "mathit",       "mathsf", "boxed",
                                              "underline", "operatorname", "bm"};

template <size_t N>
bool Among(std::string_view name, const std::string_view (&names)[N]) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

// Replaces "\cmd{X}" by "X" for the wrapper commands and drops "\textcolor{c}" and "\color{c}",
// in one pass: a stack remembers which open braces belong to a wrapper, so that their closing
// braces go too.
std::string UnwrapAll(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::vector<bool> wrapper_brace;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && IsLetter(s[i + 1])) {
      size_t j = i + 1;
      while (j < s.size() && IsLetter(s[j])) ++j;
      const std::string_view name = s.substr(i + 1, j - i - 1);
      const bool braced = j < s.size() && s[j] == '{';
      if (braced && (name == "textcolor" || name == "color")) {
        const size_t close = s.find('}', j);
        i = close == kNpos ? s.size() : close;  // the colour name holds no braces
        continue;
      }
      const bool text_mode = Among(name, kTextWrappers);
      if (braced && (text_mode || Among(name, kMathWrappers))) {
        if (text_mode) out += ' ';
        wrapper_brace.push_back(true);
        i = j;
        continue;
      }
      out.append(s.substr(i, j - i));
      i = j - 1;
    } else if (s[i] == '\\' && i + 1 < s.size()) {  // "\{", "\}", "\\": not grouping braces
      out.append(s.substr(i, 2));
      ++i;
    } else if (s[i] == '{') {
      wrapper_brace.push_back(false);
      out += '{';
    } else if (s[i] == '}' && !wrapper_brace.empty()) {
      if (!wrapper_brace.back()) out += '}';
      wrapper_brace.pop_back();
    } else {
      out += s[i];
    }
  }
  return out;
}

// A decimal with a repeating block: integer digits, the digits after the point before the
// block, the block, and the length of its notation.
struct RepeatingDecimal {
  std::string whole;
  std::string fixed;
  std::string block;
  size_t length = 0;
};

// The repeating block at the end of `digits` written before an ellipsis ("0.1666...",
// "0.142857142857..."): the shortest period of at most 6 digits seen twice (a one-digit period
// three times), extended back as far as the digits repeat. Moves it from `fixed` to `block`.
bool PeriodicTail(RepeatingDecimal& d) {
  const std::string& s = d.fixed;
  for (size_t p = 1; p <= 6; ++p) {
    const size_t need = p == 1 ? 3 : 2 * p;
    if (s.size() < need) return false;
    bool periodic = true;
    for (size_t k = s.size() - need; k + p < s.size() && periodic; ++k) periodic = s[k] == s[k + p];
    if (!periodic) continue;
    size_t start = s.size() - need;
    while (start > 0 && s[start - 1] == s[start - 1 + p]) --start;
    d.block = s.substr(start, p);
    d.fixed = s.substr(0, start);
    return true;
  }
  return false;
}

// Dotted digits after the point: "0.\dot{3}", "0.1\dot{6}", "0.\dot{1}4\dot{2}" (the block runs
// from the first dotted digit to the last). Reads from `k`; returns the position after them.
size_t DottedDigits(std::string_view s, size_t k, RepeatingDecimal& d) {
  std::string digits;
  size_t first = kNpos;
  size_t last = kNpos;
  while (k < s.size()) {
    const std::string_view rest = s.substr(k);
    if (IsDigit(s[k])) {
      digits += s[k++];
    } else if (rest.starts_with("\\dot{") && rest.size() > 6 && IsDigit(rest[5]) &&
               rest[6] == '}') {
      last = digits.size();
      first = std::min(first, last);
      digits += rest[5];
      k += 7;
    } else if (rest.starts_with("\\dot") && rest.size() > 4 && IsDigit(rest[4])) {
      last = digits.size();
      first = std::min(first, last);
      digits += rest[4];
      k += 5;
    } else {
      break;
    }
  }
  if (first == kNpos) {
    d.fixed = digits;
  } else if (last + 1 == digits.size()) {
    d.fixed = digits.substr(0, first);
    d.block = digits.substr(first);
  }  // else dotted digits with plain digits after them: no repeating decimal
  return k;
}

// The repeating block written after the fixed digits at `k`: \overline{6}, \overline6, \bar{6},
// (6), or an ellipsis (\ldots, \dots, \cdots, "...") after a visibly periodic tail.
bool BlockAfter(std::string_view s, size_t& k, RepeatingDecimal& d) {
  const std::string_view rest = s.substr(k);
  for (std::string_view cmd : {"\\overline", "\\bar"}) {
    if (!rest.starts_with(cmd)) continue;
    size_t i = cmd.size();
    if (i < rest.size() && IsDigit(rest[i])) {
      d.block = rest.substr(i, 1);
      k += i + 1;
      return true;
    }
    if (i >= rest.size() || (rest[i] != '{')) return false;
    const size_t close = rest.find_first_not_of("0123456789", i + 1);
    if (close == kNpos || rest[close] != '}' || close == i + 1) return false;
    d.block = rest.substr(i + 1, close - i - 1);
    k += close + 1;
    return true;
  }
  if (rest.starts_with('(')) {
    const size_t close = rest.find_first_not_of("0123456789", 1);
    if (close == kNpos || rest[close] != ')' || close == 1) return false;
    d.block = rest.substr(1, close - 1);
    k += close + 1;
    return true;
  }
  for (std::string_view dots : {"\\ldots", "\\cdots", "\\dots", "..."}) {
    if (rest.starts_with(dots) && PeriodicTail(d)) {
      k += dots.size();
      return true;
    }
  }
  return false;
}

// A repeating decimal starting at `i` ("0.\overline{3}", ".1\overline{6}", "0.(3)",
// "0.\dot{3}", "0.333..."), or nullopt.
std::optional<RepeatingDecimal> ReadRepeating(std::string_view s, size_t i) {
  RepeatingDecimal d;
  size_t k = i;
  while (k < s.size() && IsDigit(s[k])) ++k;
  d.whole = s.substr(i, k - i);
  if (k >= s.size() || s[k] != '.') return std::nullopt;
  k = DottedDigits(s, k + 1, d);
  if (d.block.empty() && !BlockAfter(s, k, d)) return std::nullopt;
  // Bounded sizes keep the exact arithmetic small; longer notations stay as written.
  if (d.block.empty() || d.whole.size() > 30 || d.fixed.size() + d.block.size() > 30) {
    return std::nullopt;
  }
  d.length = k - i;
  return d;
}

// "0.1\overline{6}" -> "{0.1+\frac{6}{90}}": whole.fixed + block / (10^|fixed| (10^|block| - 1)),
// exact for the symbolic check, braced so that it stays one factor.
std::string RepeatingValue(const RepeatingDecimal& d) {
  std::string out = "{" + (d.whole.empty() ? std::string("0") : d.whole);
  if (!d.fixed.empty()) out += "." + d.fixed;
  const size_t nonzero = std::min(d.block.find_first_not_of('0'), d.block.size() - 1);
  out += "+\\frac{" + d.block.substr(nonzero) + "}{" + std::string(d.block.size(), '9') +
         std::string(d.fixed.size(), '0') + "}}";
  return out;
}

// Rewrites each repeating decimal as its exact value; a number is tried once, at its start.
std::string ExpandRepeatingDecimals(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const bool starts_number =
        (IsDigit(s[i]) || s[i] == '.') && (i == 0 || (!IsDigit(s[i - 1]) && s[i - 1] != '.'));
    if (starts_number) {
      if (const auto d = ReadRepeating(s, i)) {
        out += RepeatingValue(*d);
        i += d->length;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

// Unit abbreviations that may touch their number ("5cm", "60mph").
constexpr std::string_view kUnitAbbreviations[] = {
    "cm",  "mm",  "km",  "ft",  "in", "yd", "mi",  "hr",   "hrs",  "kg",  "mg",  "lb",
    "lbs", "oz",  "ml",  "mL",  "sq", "cu", "cc",  "ms",   "nm",   "mph", "kph", "sec",
    "min", "deg", "rad", "gal", "qt", "pt", "cal", "kcal", "mins", "secs"};
// One-letter SI symbols: units when spaced from the number ("12 m"; "2m" is a product) and the
// other side has no variables (against a gold in m, "2 m" is 2m).
constexpr std::string_view kLetterUnits = "msghLJNWVK";

// Whether `word` (letters) after a value is a unit: an abbreviation; or, when `spaced` from what
// precedes it, any word of three or more letters ("apples", "hours") or, with `letter_units`, a
// one-letter SI symbol.
bool IsUnitWord(std::string_view word, bool spaced, bool letter_units) {
  if (Among(word, kUnitAbbreviations)) return true;
  if (!spaced) return false;
  return word.size() >= 3 ||
         (letter_units && word.size() == 1 && kLetterUnits.find(word[0]) != kNpos);
}

// Whether `t` ends with a unit's power "^2", "^3", "^{2}", "^{3}" after a letter; sets its length.
bool EndsWithUnitPower(std::string_view t, size_t& length) {
  for (std::string_view power : {"^2", "^3", "^{2}", "^{3}"}) {
    if (t.ends_with(power) && t.size() > power.size() && IsLetter(t[t.size() - power.size() - 1])) {
      length = power.size();
      return true;
    }
  }
  return false;
}

// Whether the value `t` ends as a quantity does: a digit, a closing bracket, or a command (\pi).
bool EndsValue(std::string_view t) {
  if (t.empty()) return false;
  if (IsDigit(t.back()) || t.back() == '}' || t.back() == ')') return true;
  size_t k = t.size();
  while (k > 0 && IsLetter(t[k - 1])) --k;
  return k < t.size() && k > 0 && t[k - 1] == '\\';
}

// Drops the unit words that end an answer after its value: "12 square meters" -> "12",
// "60 miles per hour" -> "60", "9.8 m/s^2" -> "9.8", "\frac{\pi}{4} radians" -> "\frac{\pi}{4}".
// Nothing changes unless what remains ends as a value (so "Devon wins" stays).
void DropTrailingUnits(std::string& s, bool letter_units) {
  std::string_view t = s;
  bool dropped = false;
  while (true) {
    while (!t.empty() && IsSpace(t.back())) t.remove_suffix(1);
    if (t.size() >= 2 && t.back() == '.' && IsLetter(t[t.size() - 2])) t.remove_suffix(1);
    size_t power = 0;
    if (EndsWithUnitPower(t, power)) {
      t.remove_suffix(power);
      continue;
    }
    if (dropped && !t.empty() && t.back() == '/') {  // "km/h"
      t.remove_suffix(1);
      continue;
    }
    size_t k = t.size();
    while (k > 0 && IsLetter(t[k - 1])) --k;
    if (k == t.size() || k == 0 || t[k - 1] == '\\') break;
    const bool spaced = IsSpace(t[k - 1]) || t[k - 1] == '/';
    if (!IsUnitWord(t.substr(k), spaced, letter_units)) break;
    t = t.substr(0, k);
    dropped = true;
  }
  t = Trim(t);
  if (dropped && EndsValue(t)) s = std::string(t);
}

// "137 1/2" -> "137\\frac{1}{2}" (a whole number, a space, a fraction of whole numbers).
void MixedNumber(std::string& s) {
  // "1 and 4/5": a whole number and a fraction.
  if (size_t a = s.find(" and "); a != kNpos && a > 0 && IsDigit(s[a - 1]) && a + 5 < s.size() &&
                                  IsDigit(s[a + 5]) && s.find('/') != kNpos && s.find('/') > a) {
    s.replace(a, 5, " ");
  }
  const size_t slash = s.find('/');
  const size_t space = s.rfind(' ', slash);
  if (slash == kNpos || space == kNpos || space == 0 || !IsDigit(s[space - 1])) return;
  const std::string num = s.substr(space + 1, slash - space - 1);
  size_t end = slash + 1;
  while (end < s.size() && IsDigit(s[end])) ++end;
  const std::string den = s.substr(slash + 1, end - slash - 1);
  if (num.empty() || den.empty() || num.find_first_not_of("0123456789") != kNpos) return;
  s = s.substr(0, space) + "\\frac{" + num + "}{" + den + "}" + s.substr(end);
}

// "{{x}}" -> "x".
void StripEnclosingBraces(std::string& s) {
  while (s.size() >= 2 && s.front() == '{') {
    const auto g = Group(s, 0);
    if (!g || g->size() + 2 != s.size()) break;
    s = std::string(Trim(*g));
  }
}

// The word "pi" (not "\pi") as "\pi", in one pass.
void PiWord(std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t p = 0; p < s.size(); ++p) {
    if (s[p] == 'p' && p + 1 < s.size() && s[p + 1] == 'i' &&
        (p == 0 || (!IsLetter(s[p - 1]) && s[p - 1] != '\\')) &&
        (p + 2 == s.size() || !IsLetter(s[p + 2]))) {
      out += '\\';
    }
    out += s[p];
  }
  s = std::move(out);
}

// Commands rewritten by their whole name ("\leq" is not "\leqslant"): spacing, sizing and
// display commands go, fraction styles are \frac, relations take one spelling (\le, \ge, \ne,
// <, >), \cup separates the parts of a union.
struct CommandRewrite {
  std::string_view name;
  std::string_view to;
};
constexpr CommandRewrite kCommandRewrites[] = {
    {"left", ""},          {"right", ""},       {"displaystyle", ""},  {"quad", " "},
    {"qquad", " "},        {"dfrac", "\\frac"}, {"tfrac", "\\frac"},   {"leq", "\\le "},
    {"leqslant", "\\le "}, {"geq", "\\ge "},    {"geqslant", "\\ge "}, {"neq", "\\ne "},
    {"lt", "<"},           {"gt", ">"},         {"div", "/"},          {"cup", ","},
};

// Appends the rewrite of the control symbol "\c" (a backslash and one non-letter): thin and
// normal spaces separate words ("5\,\text{cm}"), a negative space joins them, escaped $ and %
// go, escaped braces are braces.
void ControlSymbol(char c, std::string& out) {
  if (c == ',' || c == ';' || c == ':' || c == ' ') {
    out += ' ';
  } else if (c == '{' || c == '}') {
    out += c;
  } else if (c != '!' && c != '$' && c != '%') {
    out += '\\';
    out += c;
  }
}

// kCommandRewrites, ControlSymbol and "~" (a TeX space), in one pass.
std::string RewriteCommands(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '~') {
      out += ' ';
    } else if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
    } else if (!IsLetter(s[i + 1])) {
      ControlSymbol(s[++i], out);
    } else {
      size_t j = i + 1;
      while (j < s.size() && IsLetter(s[j])) ++j;
      const std::string_view name = s.substr(i + 1, j - i - 1);
      const CommandRewrite* rewrite = nullptr;
      for (const CommandRewrite& r : kCommandRewrites) {
        if (r.name == name) rewrite = &r;
      }
      out.append(rewrite ? rewrite->to : s.substr(i, j - i));
      i = j - 1;
    }
  }
  return out;
}

// One inequality operator: which way it points and whether it is strict.
struct Relation {
  bool less = true;
  bool strict = false;
};

// Splits `s` (normalized, no spaces) at the top-level relations \le, \ge, <, >.
void SplitRelations(std::string_view s, std::vector<std::string>& parts,
                    std::vector<Relation>& relations) {
  parts.assign(1, "");
  int depth = 0;
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    depth += (c == '{' || c == '(' || c == '[') ? 1 : (c == '}' || c == ')' || c == ']') ? -1 : 0;
    const std::string_view rest = s.substr(i);
    size_t n = 0;
    Relation r;
    if (depth == 0 && (rest.starts_with("\\le") || rest.starts_with("\\ge"))) {
      n = 3;
      r.less = rest[1] == 'l';
    } else if (depth == 0 && (c == '<' || c == '>')) {
      n = 1;
      r = {c == '<', true};
    }
    if (n == 0) {
      parts.back() += c;
      ++i;
      continue;
    }
    relations.push_back(r);
    if (relations.size() > 2) return;  // no interval: the caller gives up
    parts.emplace_back();
    i += n;
  }
}

// "x\le3" -> "(-\infty,3]", "-2<x\le7" -> "(-2,7]", "x>0" -> "(0,\infty)": one or two
// inequalities pointing one way around a one-letter variable denote an interval. Anything else
// is returned as it is.
std::string InequalityToInterval(const std::string& s) {
  if (s.find_first_of("<>") == kNpos && s.find("\\le") == kNpos && s.find("\\ge") == kNpos) {
    return s;
  }
  std::vector<std::string> parts;
  std::vector<Relation> rel;
  SplitRelations(s, parts, rel);
  if (rel.empty() || rel.size() > 2 || (rel.size() == 2 && rel[0].less != rel[1].less)) return s;
  if (!rel[0].less) {  // "7\gex\ge-2" reads "-2\lex\le7"
    std::reverse(parts.begin(), parts.end());
    std::reverse(rel.begin(), rel.end());
  }
  const auto is_variable = [](const std::string& p) { return p.size() == 1 && IsLetter(p[0]); };
  std::string lo = "-\\infty";
  std::string hi = "\\infty";
  bool lo_closed = false;
  bool hi_closed = false;
  if (rel.size() == 2 && is_variable(parts[1]) && !parts[0].empty() && !parts[2].empty()) {
    lo = parts[0];
    hi = parts[2];
    lo_closed = !rel[0].strict;
    hi_closed = !rel[1].strict;
  } else if (rel.size() == 1 && is_variable(parts[0]) && !parts[1].empty() &&
             !is_variable(parts[1])) {
    hi = parts[1];
    hi_closed = !rel[0].strict;
  } else if (rel.size() == 1 && is_variable(parts[1]) && !parts[0].empty() &&
             !is_variable(parts[0])) {
    lo = parts[0];
    lo_closed = !rel[0].strict;
  } else {
    return s;
  }
  return (lo_closed ? "[" : "(") + lo + "," + hi + (hi_closed ? "]" : ")");
}

// "(a,b)=(-2,1)" -> "(-2,1)" when the left side holds no digit; "x=5" -> "5" when the left side
// is one letter. (Equations are compared whole first, in Equivalent.)
void DropVariablePrefix(std::string& out) {
  if (size_t eq = out.rfind('=');
      eq != kNpos && out.find('=') == eq && eq > 1 && out.find_first_of("0123456789") > eq) {
    out.erase(0, eq + 1);
  }
  // "(E)" -> "E"; letters compare without case.
  if (out.size() == 3 && out[0] == '(' && out[2] == ')' && IsLetter(out[1])) {
    out = out.substr(1, 1);
  }
  if (out.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == kNpos) {
    out = AsciiLowerCopy(out);
  }
  if (out.size() > 2 && out[1] == '=' && IsLetter(out[0])) out.erase(0, 2);
}

// The notation steps that need the whole answer: Unicode, thousands separators, wrappers.
std::string RewriteNotation(std::string_view answer) {
  std::string s = UnicodeToLatex(Trim(answer));
  s = UnwrapAll(DropTexDigitGrouping(s));
  s = std::string(Trim(s));
  StripEnclosingBraces(s);
  return DropThousandsSeparators(DropGroupingInArguments(s));
}

// "\frac12" -> "\frac{1}{2}".
void FracDigits(std::string& out) {
  if (out.size() == 7 && out.starts_with("\\frac") && IsDigit(out[5]) && IsDigit(out[6])) {
    out = std::string("\\frac{") + out[5] + "}{" + out[6] + "}";
  }
}

// Normalization (Hendrycks-style, extended): presentation that does not change the value goes.
// Equations keep both sides (ValueForm drops a "y=" prefix). `letter_units`: see kLetterUnits.
std::string Normalize(std::string_view answer, bool letter_units = true) {
  std::string s = RewriteNotation(answer);
  MixedNumber(s);
  ReplaceAll(s, ", and ", ",");
  ReplaceAll(s, "sqrt(", "\\sqrt(");
  ReplaceAll(s, "\\\\sqrt", "\\sqrt");
  ReplaceAll(s, "\\begin{pmatrix}", "(");
  ReplaceAll(s, "\\end{pmatrix}", ")");
  ReplaceAll(s, "\\\\", ",");
  ReplaceAll(s, "&", ",");
  ReplaceAll(s, " and ", ",");
  for (std::string_view unit : {"square", "units", "unit", "miles", "inches", "inch", "feet",
                                "meters", "cm", "dollars", "cents"}) {
    ReplaceAll(s, std::string(unit) + "^2", "");
    ReplaceAll(s, std::string(unit) + "^3", "");
    ReplaceAll(s, unit, "");
  }
  ReplaceAll(s, " in base ", "_");
  if (size_t b = s.find("(base "); b != kNpos) {
    const size_t close = s.find(')', b);
    if (close != kNpos) s = s.substr(0, b) + "_" + s.substr(b + 6, close - b - 6);
  }
  s = RewriteCommands(s);
  ReplaceAll(s, "$", "");
  ReplaceAll(s, "<=", "\\le ");
  ReplaceAll(s, ">=", "\\ge ");
  for (std::string_view deg : {"^{\\circ}", "^\\circ", "degrees", "degree"}) {
    ReplaceAll(s, deg, "");
  }
  ReplaceAll(s, "%", "");
  ReplaceAll(s, "infinity", "\\infty");
  ReplaceAll(s, "+\\infty", "\\infty");
  PiWord(s);
  // "x \in [a,b]": the set.
  if (size_t in = s.find("\\in"); in != kNpos && (in + 3 == s.size() || !IsLetter(s[in + 3]))) {
    s.erase(0, in + 3);
  }
  // A mixed number "137 1/2" -> "137\frac{1}{2}".
  MixedNumber(s);
  DropTrailingUnits(s, letter_units);
  std::string spaceless;
  for (char c : s) {
    if (!IsSpace(c)) spaceless += c;
  }
  std::string out = ExpandRepeatingDecimals(spaceless);  // before trailing dots go: "0.333..."
  while (!out.empty() && out.back() == '.') out.pop_back();
  StripEnclosingBraces(out);
  // A matrix as nested lists "[[a,b],[c,d]]" -> "(a,b,c,d)", as \begin{pmatrix} becomes.
  if (out.starts_with("[[") && out.ends_with("]]")) {
    std::string flat = "(";
    for (char c : out.substr(1, out.size() - 2)) {
      if (c != '[' && c != ']') flat += c;
    }
    out = flat + ")";
  }
  out = InequalityToInterval(out);
  FracDigits(out);
  return out;
}

// A normalized answer compared as a value: without a "y=" or "(a,b)=" prefix.
std::string ValueForm(std::string normalized) {
  DropVariablePrefix(normalized);
  FracDigits(normalized);
  return normalized;
}

// ---- Comparison ---------------------------------------------------------------------------------

// The exact value of a plain number: integer, decimal, "a/b", "\frac{a}{b}", "-\frac{a}{b}",
// or a mixed number "n\frac{a}{b}"; nullopt for anything else.
std::optional<long double> NumberValue(std::string_view s) {
  auto parse_decimal = [](std::string_view t) -> std::optional<long double> {
    if (t.empty() || t.size() > 40) return std::nullopt;
    std::string clean;
    for (size_t k = 0; k < t.size(); ++k) {
      if (t[k] != ',') {
        clean += t[k];
        continue;
      }
      // A thousands separator has exactly three digits after it.
      const std::string_view group = t.substr(k + 1, 4);
      if (group.size() < 3 || group.substr(0, 3).find_first_not_of("0123456789") != kNpos ||
          (group.size() == 4 && IsDigit(group[3]))) {
        return std::nullopt;
      }
    }
    size_t i = 0;
    if (clean[0] == '-' || clean[0] == '+') i = 1;
    if (i >= clean.size()) return std::nullopt;
    bool digit = false;
    for (size_t k = i; k < clean.size(); ++k) {
      if (IsDigit(clean[k])) {
        digit = true;
      } else if (clean[k] != '.') {
        return std::nullopt;
      }
    }
    if (!digit) return std::nullopt;
    return std::strtold(clean.c_str(), nullptr);
  };
  if (auto v = parse_decimal(s)) return v;
  bool negative = false;
  if (!s.empty() && s[0] == '-') {
    negative = true;
    s.remove_prefix(1);
  }
  long double whole = 0;
  if (size_t f = s.find("\\frac{"); f != kNpos) {
    if (f > 0) {
      auto w = parse_decimal(s.substr(0, f));
      if (!w) return std::nullopt;
      whole = *w;
    }
    const auto num = Group(s, f + 5);
    if (!num) return std::nullopt;
    const size_t den_open = f + 5 + num->size() + 2;
    const auto den = Group(s, den_open);
    if (!den || den_open + den->size() + 2 != s.size()) return std::nullopt;
    const auto n = parse_decimal(*num);
    const auto d = parse_decimal(*den);
    if (!n || !d || *d == 0) return std::nullopt;
    const long double frac = whole + (whole < 0 ? -1 : 1) * (*n / *d);
    return negative ? -frac : frac;
  }
  if (size_t slash = s.find('/'); slash != kNpos) {
    const auto n = parse_decimal(s.substr(0, slash));
    const auto d = parse_decimal(s.substr(slash + 1));
    if (!n || !d || *d == 0) return std::nullopt;
    return negative ? -(*n / *d) : *n / *d;
  }
  return std::nullopt;
}

// Splits a base subscript off a numeral: "52_8", "52_{8}" -> ("52", "8"); else (s, "").
std::pair<std::string, std::string> SplitBase(const std::string& s) {
  const size_t u = s.find('_');
  if (u == kNpos || u == 0 || s.find_first_not_of("0123456789ABCDEF") < u) return {s, ""};
  std::string base = s.substr(u + 1);
  if (base.size() >= 2 && base.front() == '{' && base.back() == '}') {
    base = base.substr(1, base.size() - 2);
  }
  return {s.substr(0, u), base};
}

// A mixed number "2\frac{1}{2}" or a number with a thousands separator.
bool MixedOrGrouped(std::string_view s) {
  const size_t f = s.find("\\frac");
  return s.find(',') != kNpos || (f != kNpos && f > 0 && IsDigit(s[f - 1]));
}

// A multiple of the identity matrix written with \mathbf{I} ("-\mathbf{I}", "2\mathbf{I}")
// against a square \begin{pmatrix} gold: equal when the diagonal entries equal the multiple and
// the others are 0; nullopt when the answers are not of that shape.
std::optional<bool> IdentityMultiple(std::string_view extracted, std::string_view gold) {
  if (extracted.find("\\mathbf{I}") == kNpos || gold.find("\\begin{pmatrix}") == kNpos) {
    return std::nullopt;
  }
  std::string multiple = ValueForm(Normalize(extracted));  // "-I"
  if (multiple.find_first_of(",()") != kNpos) return std::nullopt;
  ReplaceAll(multiple, "I", "(1)");
  const std::string matrix = ValueForm(Normalize(gold));  // "(a,b,c,d)", rows concatenated
  if (matrix.size() < 2 || matrix.front() != '(' || matrix.back() != ')') return std::nullopt;
  std::vector<std::string> entries(1);
  int depth = 0;
  for (char c : std::string_view(matrix).substr(1, matrix.size() - 2)) {
    depth += (c == '(' || c == '{' || c == '[') ? 1 : (c == ')' || c == '}' || c == ']') ? -1 : 0;
    if (c == ',' && depth == 0) {
      entries.emplace_back();
    } else {
      entries.back() += c;
    }
  }
  size_t n = 2;
  while (n * n < entries.size()) ++n;
  if (n * n != entries.size()) return std::nullopt;
  for (size_t k = 0; k < entries.size(); ++k) {
    const auto eq = NumericallyEqual(entries[k], k / n == k % n ? multiple : "0");
    if (!eq || !*eq) return eq;
  }
  return true;
}

// Two equations (normalized) are equal when one is the other rearranged or scaled ("x-2y=0" and
// "y=x/2"), compared before "y=" prefixes are dropped (which compares "y=5" with "5").
bool EquivalentEquations(const std::string& a, const std::string& b) {
  if (a.find('=') == kNpos || b.find('=') == kNpos) return false;
  return a == b || NumericallyEqual(a, b).value_or(false);
}

// Whether a normalized answer holds a letter outside command names (a variable, i or e).
bool HasVariable(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      while (i + 1 < s.size() && IsLetter(s[i + 1])) ++i;
    } else if (IsLetter(s[i])) {
      return true;
    }
  }
  return false;
}

bool Equivalent(std::string_view extracted, std::string_view gold) {
  if (const auto identity = IdentityMultiple(extracted, gold)) return *identity;
  const std::string normalized_b = Normalize(gold);
  const std::string normalized_a = Normalize(extracted, !HasVariable(normalized_b));
  if (EquivalentEquations(normalized_a, normalized_b)) return true;
  auto [a, base_a] = SplitBase(ValueForm(normalized_a));
  auto [b, base_b] = SplitBase(ValueForm(normalized_b));
  if (!base_a.empty() && !base_b.empty() && base_a != base_b) return false;
  // A percent for a probability: "25\%" for 1/4.
  if (extracted.find('%') != kNpos && gold.find('%') == kNpos && !a.empty()) {
    if (NumericallyEqual("(" + a + ")/100", b).value_or(false)) return true;
  }
  if (a == b) return true;
  const auto x = NumberValue(a);
  const auto y = NumberValue(b);
  if (x && y) {
    if (std::fabs(*x - *y) > 1e-12L * std::max(1.0L, std::fabs(*y))) return false;
    // Close in long double: exact when both are plain decimals (20-digit integers, 0.3333333333333
    // for 1/3); mixed numbers and thousands separators are not the symbolic grammar's.
    if (!MixedOrGrouped(a) && !MixedOrGrouped(b)) return SymbolicallyEqual(a, b).value_or(true);
    return true;
  }
  return NumericallyEqual(a, b).value_or(false);
}

}  // namespace

Verdict ScoreMath(std::string_view completion, std::string_view gold) {
  Verdict v;
  v.rule_set = std::string(kMathRuleSet);
  const std::string text = StripThinking(completion);
  if (const auto box = LastBox(text)) {
    v.extracted = std::string(Trim(*box));
    v.method = "boxed";
  } else if (const auto statement = FinalStatement(text)) {
    v.extracted = *statement;
    v.method = "final_statement";
  } else {
    v.method = "none";
    return v;
  }
  v.parsed = !v.extracted.empty();
  v.correct = v.parsed && Equivalent(v.extracted, gold);
  return v;
}

}  // namespace pipette::scorers
