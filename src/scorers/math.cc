// MATH-500: brace-balanced box extraction, an explicit final-answer statement when unboxed,
// normalization and string / numeric / symbolic (GiNaC) equivalence (rule set kMathRuleSet).
#include <cmath>
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

// The answer of an explicit final statement: the text after the last "answer is", "final
// answer:" or "answer:" up to the end of its line, without a trailing clause or period.
std::optional<std::string> FinalStatement(std::string_view text) {
  const std::string lower = AsciiLowerCopy(text);
  size_t best = kNpos;
  size_t best_end = 0;
  for (std::string_view phrase : {"answer is", "answer:", "answer**:", "answer:**"}) {
    for (size_t p = lower.find(phrase); p != kNpos; p = lower.find(phrase, p + 1)) {
      if (best == kNpos || p > best) {
        best = p;
        best_end = p + phrase.size();
      }
    }
  }
  if (best == kNpos) return std::nullopt;
  size_t end = text.find('\n', best_end);
  // "**Answer:**\n X": the answer on the next line.
  if (Trim(text.substr(best_end, end == kNpos ? kNpos : end - best_end)).find_first_not_of("*_") ==
          kNpos &&
      end != kNpos) {
    best_end = end + 1;
    end = text.find('\n', best_end);
  }
  std::string_view line = text.substr(best_end, end == kNpos ? kNpos : end - best_end);
  // A trailing clause (", which I checked ...") is not part of the answer.
  if (size_t c = line.find(", which"); c != kNpos) line = line.substr(0, c);
  line = Trim(line);
  while (!line.empty() && std::string_view("*_: ").find(line.front()) != kNpos) {
    line.remove_prefix(1);
  }
  while (!line.empty() && std::string_view(".*_ ").find(line.back()) != kNpos) {
    line.remove_suffix(1);
  }
  if (line.empty()) return std::nullopt;
  return std::string(line);
}

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  for (size_t p = s.find(from); p != kNpos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
}

// Replaces "\cmd{X}" by "X" for a wrapper command.
void Unwrap(std::string& s, std::string_view cmd) {
  const std::string open = std::string(cmd) + "{";
  for (size_t p = s.find(open); p != kNpos; p = s.find(open, p)) {
    const auto g = Group(s, p + cmd.size());
    if (!g) return;
    const std::string inner(*g);
    s.replace(p, cmd.size() + 2 + inner.size(), inner);
  }
}

// "137 1/2" -> "137\\frac{1}{2}" (a whole number, a space, a fraction of whole numbers).
void MixedNumber(std::string& s) {
  // "1 and 4/5": a whole number and a fraction.
  if (size_t a = s.find(" and "); a != kNpos && a > 0 && std::isdigit(s[a - 1]) &&
                                  a + 5 < s.size() && std::isdigit(s[a + 5]) &&
                                  s.find('/') != kNpos && s.find('/') > a) {
    s.replace(a, 5, " ");
  }
  const size_t slash = s.find('/');
  const size_t space = s.rfind(' ', slash);
  if (slash == kNpos || space == kNpos || space == 0 || !std::isdigit(s[space - 1])) return;
  const std::string num = s.substr(space + 1, slash - space - 1);
  size_t end = slash + 1;
  while (end < s.size() && std::isdigit(s[end])) ++end;
  const std::string den = s.substr(slash + 1, end - slash - 1);
  if (num.empty() || den.empty() || num.find_first_not_of("0123456789") != kNpos) return;
  s = s.substr(0, space) + "\\frac{" + num + "}{" + den + "}" + s.substr(end);
}

// Drops a last word of three or more letters that follows a digit and a space ("16/27 gallons").
void DropTrailingWord(std::string& s) {
  const std::string_view t = Trim(s);
  const size_t space = t.rfind(' ');
  if (space == kNpos || space == 0 || !std::isdigit(static_cast<unsigned char>(t[space - 1]))) {
    return;
  }
  const std::string_view word = t.substr(space + 1);
  if (word.size() < 3) return;
  for (char c : word) {
    if (!std::isalpha(static_cast<unsigned char>(c))) return;
  }
  s = std::string(t.substr(0, space));
}

// "{{x}}" -> "x".
void StripEnclosingBraces(std::string& s) {
  while (s.size() >= 2 && s.front() == '{') {
    const auto g = Group(s, 0);
    if (!g || g->size() + 2 != s.size()) break;
    s = std::string(Trim(*g));
  }
}

// Replaces "\\textcolor{colour}{X}" by "X".
void DropTextColor(std::string& s) {
  constexpr std::string_view kCmd = "\\textcolor{";
  for (size_t p = s.find(kCmd); p != kNpos; p = s.find(kCmd, p)) {
    const auto colour = Group(s, p + kCmd.size() - 1);
    if (!colour) return;
    s.erase(p, kCmd.size() + colour->size() + 1);
  }
}

// Normalization (Hendrycks-style, extended): presentation that does not change the value goes.
std::string Normalize(std::string_view answer) {
  std::string s(Trim(answer));
  DropTextColor(s);
  for (std::string_view w : {"\\text", "\\textbf", "\\mathbf", "\\mathrm", "\\mbox", "\\boxed",
                             "\\underline", "\\mathit", "\\operatorname", "\\bm"}) {
    Unwrap(s, w);
  }
  StripEnclosingBraces(s);
  MixedNumber(s);
  ReplaceAll(s, ", and ", ",");
  ReplaceAll(s, "\xcf\x80", "\\pi ");       // π
  ReplaceAll(s, "\xe2\x88\x9a", "\\sqrt");  // √
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
  ReplaceAll(s, "\\$", "");
  for (std::string_view from :
       {"\\left", "\\right", "\\!", "\\,", "\\;", "\\:", "\\quad", "\\ ", "$", "\\displaystyle"}) {
    ReplaceAll(s, from, "");
  }
  ReplaceAll(s, "\\dfrac", "\\frac");
  ReplaceAll(s, "\\tfrac", "\\frac");
  for (std::string_view deg : {"^{\\circ}", "^\\circ", "\xc2\xb0", "degrees", "degree"}) {
    ReplaceAll(s, deg, "");
  }
  ReplaceAll(s, "\\%", "");
  ReplaceAll(s, "%", "");
  ReplaceAll(s, "\\{", "{");
  ReplaceAll(s, "\\}", "}");
  ReplaceAll(s, "\xe2\x88\x92", "-");        // − (minus sign)
  ReplaceAll(s, "\xe2\x88\x9e", "\\infty");  // ∞
  ReplaceAll(s, "\xe2\x88\xaa", "\\cup");    // ∪
  ReplaceAll(s, "infinity", "\\infty");
  ReplaceAll(s, "+\\infty", "\\infty");
  ReplaceAll(s, "\\cup", ",");
  // The word "pi" (not "\pi") is pi.
  for (size_t p = s.find("pi"); p != kNpos; p = s.find("pi", p + 2)) {
    if ((p == 0 || (!std::isalpha(static_cast<unsigned char>(s[p - 1])) && s[p - 1] != '\\')) &&
        (p + 2 == s.size() || !std::isalpha(static_cast<unsigned char>(s[p + 2])))) {
      s.insert(p, "\\");
      ++p;
    }
  }
  // "x \in [a,b]": the set.
  if (size_t in = s.find("\\in"); in != kNpos && (in + 3 == s.size() || !std::isalpha(s[in + 3]))) {
    s.erase(0, in + 3);
  }
  // A mixed number "137 1/2" -> "137\frac{1}{2}".
  MixedNumber(s);
  // A trailing unit word after a number: "16/27 gallons" -> "16/27".
  DropTrailingWord(s);
  std::string out;
  for (char c : s) {
    if (!IsSpace(c)) out += c;
  }
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
  // "(a,b)=(-2,1)": the right side when the left side holds no digit.
  if (size_t eq = out.rfind('=');
      eq != kNpos && out.find('=') == eq && eq > 1 && out.find_first_of("0123456789") > eq) {
    out.erase(0, eq + 1);
  }
  // "(E)" -> "E"; letters compare without case.
  if (out.size() == 3 && out[0] == '(' && out[2] == ')' && std::isalpha(out[1]))
    out = out.substr(1, 1);
  if (out.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == kNpos) {
    out = AsciiLowerCopy(out);
  }
  // "x=5" -> "5" when the left side is one letter.
  if (out.size() > 2 && out[1] == '=' && std::isalpha(static_cast<unsigned char>(out[0]))) {
    out.erase(0, 2);
  }
  // "\frac12" -> "\frac{1}{2}".
  if (out.size() == 7 && out.starts_with("\\frac") && std::isdigit(out[5]) &&
      std::isdigit(out[6])) {
    out = std::string("\\frac{") + out[5] + "}{" + out[6] + "}";
  }
  return out;
}

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
          (group.size() == 4 && std::isdigit(static_cast<unsigned char>(group[3])))) {
        return std::nullopt;
      }
    }
    size_t i = 0;
    if (clean[0] == '-' || clean[0] == '+') i = 1;
    if (i >= clean.size()) return std::nullopt;
    bool digit = false;
    for (size_t k = i; k < clean.size(); ++k) {
      if (std::isdigit(static_cast<unsigned char>(clean[k]))) {
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
  return s.find(',') != kNpos ||
         (f != kNpos && f > 0 && std::isdigit(static_cast<unsigned char>(s[f - 1])));
}

// A multiple of the identity matrix written with \mathbf{I} ("-\mathbf{I}", "2\mathbf{I}")
// against a square \begin{pmatrix} gold: equal when the diagonal entries equal the multiple and
// the others are 0; nullopt when the answers are not of that shape.
std::optional<bool> IdentityMultiple(std::string_view extracted, std::string_view gold) {
  if (extracted.find("\\mathbf{I}") == kNpos || gold.find("\\begin{pmatrix}") == kNpos) {
    return std::nullopt;
  }
  std::string multiple = Normalize(extracted);  // "-I"
  if (multiple.find_first_of(",()") != kNpos) return std::nullopt;
  ReplaceAll(multiple, "I", "(1)");
  const std::string matrix = Normalize(gold);  // "(a,b,c,d)", rows concatenated
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

bool Equivalent(std::string_view extracted, std::string_view gold) {
  if (const auto identity = IdentityMultiple(extracted, gold)) return *identity;
  auto [a, base_a] = SplitBase(Normalize(extracted));
  auto [b, base_b] = SplitBase(Normalize(gold));
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
