// MATH-500 as the reference scorer grades it (Liquid4All/pipette-scores d93e2e1: box or
// last-number extraction, the PRM800K grader, the robust_boxed fallback), faults included, for
// parity checks. Each step is a hand-written, linear reimplementation of the upstream behaviour
// named in its comment; sympy's simplification is replaced by a numeric check of the difference
// at fixed points, and pylatexenc's LaTeX-to-text by the subset of its rules MATH answers use.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipette/scorers.h"
#include "scorers/text_scan.h"

namespace pipette::scorers {
namespace {

constexpr size_t kNpos = std::string_view::npos;
// Nesting and recursion caps: pathological input gets a verdict, never a stack overflow.
constexpr int kMaxDepth = 200;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (true) {
    const size_t p = s.find(from, i);
    if (p == kNpos) break;
    out.append(s.substr(i, p - i)).append(to);
    i = p + from.size();
  }
  out.append(s.substr(i));
  return out;
}

std::vector<std::string_view> Split(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (true) {
    const size_t p = s.find(sep, i);
    if (p == kNpos) break;
    parts.push_back(s.substr(i, p - i));
    i = p + sep.size();
  }
  parts.push_back(s.substr(i));
  return parts;
}

// The length of the white space (str.isspace) that starts `s` at `i`, UTF-8; 0 if none.
size_t SpaceAt(std::string_view s, size_t i) {
  const auto u = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  const unsigned c = u(i);
  if (c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f)) return 1;
  if (c == 0xc2 && (u(i + 1) == 0x85 || u(i + 1) == 0xa0)) return 2;
  if (c == 0xe1 && u(i + 1) == 0x9a && u(i + 2) == 0x80) return 3;
  if (c == 0xe2 && u(i + 1) == 0x80 &&
      (u(i + 2) <= 0x8a || u(i + 2) == 0xa8 || u(i + 2) == 0xa9 || u(i + 2) == 0xaf)) {
    return u(i + 2) >= 0x80 ? 3 : 0;
  }
  if (c == 0xe2 && u(i + 1) == 0x81 && u(i + 2) == 0x9f) return 3;
  if (c == 0xe3 && u(i + 1) == 0x80 && u(i + 2) == 0x80) return 3;
  return 0;
}

// Python's str.strip(): Unicode white space at both ends.
std::string_view PyStrip(std::string_view s) {
  size_t b = 0;
  while (b < s.size()) {
    const size_t n = SpaceAt(s, b);
    if (n == 0) break;
    b += n;
  }
  size_t e = s.size();
  while (e > b) {
    size_t n = 0;
    for (size_t len = 1; len <= 3 && len <= e - b && n == 0; ++len) {
      if (SpaceAt(s, e - len) == len) n = len;
    }
    if (n == 0) break;
    e -= n;
  }
  return s.substr(b, e - b);
}

// pipette_scores.scoring.completion_text.remove_thinking_tags, as its regular expressions act:
// <think>...</think> and [THINK]...[/THINK] pairs (any case, the nearest closing tag) removed
// left to right in one pass; then everything through the FIRST remaining </think> (else the
// first [/THINK]); then everything from the first remaining opening tag; then what precedes the
// first "assistant[<|channel|>]final[<|message|>]" (case-sensitive); then one trailing <|end|>
// or <|return|>; then white space at both ends.
std::string UpstreamRemoveThinkingTags(std::string_view in) {
  const std::string_view kOpen[2] = {"<think>", "[think]"};
  const std::string_view kClose[2] = {"</think>", "[/think]"};
  std::string t;
  {
    size_t last_close[2];
    size_t next_open[2];
    for (int k = 0; k < 2; ++k) {
      last_close[k] = kNpos;
      for (size_t p = FindNoCase(in, kClose[k]); p != kNpos; p = FindNoCase(in, kClose[k], p + 1)) {
        last_close[k] = p;
      }
      next_open[k] = FindNoCase(in, kOpen[k]);
    }
    size_t i = 0;
    while (true) {
      size_t best = kNpos;
      int which = 0;
      for (int k = 0; k < 2; ++k) {
        if (next_open[k] != kNpos && next_open[k] < i) next_open[k] = FindNoCase(in, kOpen[k], i);
        // An opening tag with no closing tag after it matches nothing, nor does any later one.
        if (next_open[k] != kNpos &&
            (last_close[k] == kNpos || last_close[k] < next_open[k] + kOpen[k].size())) {
          next_open[k] = kNpos;
        }
        if (next_open[k] < best) {
          best = next_open[k];
          which = k;
        }
      }
      if (best == kNpos) break;
      t.append(in.substr(i, best - i));
      const size_t close = FindNoCase(in, kClose[which], best + kOpen[which].size());
      i = close + kClose[which].size();
    }
    t.append(in.substr(std::min(i, in.size())));
  }
  for (int k = 0; k < 2; ++k) {
    if (const size_t p = FindNoCase(t, kClose[k]); p != kNpos) {
      t.erase(0, p + kClose[k].size());
      break;
    }
  }
  t.erase(std::min(FindNoCase(t, kOpen[0]), FindNoCase(t, kOpen[1])) == kNpos
              ? t.size()
              : std::min(FindNoCase(t, kOpen[0]), FindNoCase(t, kOpen[1])));
  for (size_t p = t.find("assistant"); p != kNpos; p = t.find("assistant", p + 1)) {
    size_t k = p + 9;
    if (t.compare(k, 11, "<|channel|>") == 0 && t.compare(k + 11, 5, "final") == 0) k += 11;
    if (t.compare(k, 5, "final") != 0) continue;
    k += 5;
    if (t.compare(k, 11, "<|message|>") == 0) k += 11;
    t.erase(0, k);
    break;
  }
  {
    std::string_view body = t;
    size_t e = body.size();
    while (true) {  // trailing white space (Python's \s)
      size_t n = 0;
      for (size_t len = 1; len <= 3 && len <= e && n == 0; ++len) {
        if (SpaceAt(body, e - len) == len) n = len;
      }
      if (n == 0) break;
      e -= n;
    }
    body = body.substr(0, e);
    for (std::string_view marker : {"<|end|>", "<|return|>"}) {
      if (body.ends_with(marker)) {
        t.erase(e - marker.size());
        break;
      }
    }
  }
  return std::string(PyStrip(t));
}

// --- Extraction -------------------------------------------------------------------------------

// The match of \\(?:boxed|fbox|framebox)\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\} at `i`: the content's
// end (the closing brace's position) and its start, or nullopt.
std::optional<std::pair<size_t, size_t>> BoxAt(std::string_view t, size_t i) {
  size_t k = kNpos;
  for (std::string_view name : {"\\boxed{", "\\fbox{", "\\framebox{"}) {
    if (t.compare(i, name.size(), name) == 0) k = i + name.size();
  }
  if (k == kNpos) return std::nullopt;
  const size_t start = k;
  bool inner = false;
  for (; k < t.size(); ++k) {
    if (t[k] == '}') {
      if (!inner) return std::pair{k, start};
      inner = false;
    } else if (t[k] == '{') {
      if (inner) return std::nullopt;
      inner = true;
    }
  }
  return std::nullopt;
}

// The last match of the box pattern, as re.finditer finds them (non-overlapping, left to right),
// stripped; nullopt when none.
std::optional<std::string> LastBox(std::string_view t) {
  std::optional<std::string> found;
  size_t i = 0;
  while (i < t.size()) {
    const size_t p = t.find('\\', i);
    if (p == kNpos) break;
    if (auto m = BoxAt(t, p)) {
      found = std::string(PyStrip(t.substr(m->second, m->first - m->second)));
      i = m->first + 1;
    } else {
      i = p + 1;
    }
  }
  return found;
}

// The last match of -?\d+(?:\.\d+)? (ASCII digits), non-overlapping left to right.
std::optional<std::string> LastNumber(std::string_view t) {
  std::optional<std::string> found;
  size_t i = 0;
  while (i < t.size()) {
    size_t start = i;
    size_t k = i;
    if (t[k] == '-') ++k;
    if (k < t.size() && IsDigit(t[k])) {
      while (k < t.size() && IsDigit(t[k])) ++k;
      if (k + 1 < t.size() && t[k] == '.' && IsDigit(t[k + 1])) {
        k += 1;
        while (k < t.size() && IsDigit(t[k])) ++k;
      }
      found = std::string(t.substr(start, k - start));
      i = k;
    } else {
      ++i;
    }
  }
  return found;
}

// --- Python number helpers --------------------------------------------------------------------

// float(s) as Python parses it (ASCII white space around, sign, digits with single underscores
// between them, a decimal point, an exponent, inf/infinity/nan); nullopt when it raises.
std::optional<double> PyFloat(std::string_view s) {
  s = PyStrip(s);
  std::string clean;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) clean += s[i++];
  const std::string rest = AsciiLowerCopy(s.substr(i));
  if (rest == "inf" || rest == "infinity" || rest == "nan") {
    return std::strtod((clean + rest).c_str(), nullptr);
  }
  auto digits = [&](bool& any) {
    while (i < s.size()) {
      if (IsDigit(s[i])) {
        clean += s[i++];
        any = true;
      } else if (s[i] == '_' && any && i + 1 < s.size() && IsDigit(s[i + 1])) {
        ++i;
      } else {
        break;
      }
    }
  };
  bool int_part = false, frac_part = false;
  digits(int_part);
  if (i < s.size() && s[i] == '.') {
    clean += s[i++];
    digits(frac_part);
  }
  if (!int_part && !frac_part) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    clean += s[i++];
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) clean += s[i++];
    bool exp = false;
    digits(exp);
    if (!exp) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  return std::strtod(clean.c_str(), nullptr);
}

// str(int(x)) for a finite double (its exact integer value).
std::string IntString(double x) {
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.0f", std::trunc(x));
  std::string s = buf;
  return s == "-0" ? "0" : s;
}

// abs(x - int(round(x))) <= 1e-7 (false for inf and nan, where int() raises).
bool PyIsInt(double x) { return std::isfinite(x) && std::fabs(x - std::nearbyint(x)) <= 1e-7; }

// re.sub(r"(\d)(,)(\d\d\d)($|\D)", r"\1\3\4") repeated until nothing changes.
std::string StripFormattedCommas(std::string s) {
  for (int pass = 0; pass < 64; ++pass) {
    std::string out;
    out.reserve(s.size());
    size_t i = 0;
    bool changed = false;
    while (i < s.size()) {
      if (IsDigit(s[i]) && i + 4 < s.size() + 0 && s[i + 1] == ',' && IsDigit(s[i + 2]) &&
          IsDigit(s[i + 3]) && IsDigit(s[i + 4]) && (i + 5 == s.size() || !IsDigit(s[i + 5]))) {
        out += s[i];
        out.append(s, i + 2, 3);
        i += 5;
        if (i < s.size()) out += s[i++];
        changed = true;
      } else {
        out += s[i++];
      }
    }
    s = std::move(out);
    if (!changed) break;
  }
  return s;
}

bool StrIsInt(const std::string& s) {
  const auto x = PyFloat(StripFormattedCommas(s));
  return x && PyIsInt(*x);
}

// ^-?[0-9]+.?/0*[1-9][0-9]*.?$ ('.' any character but a line break). The slash follows the
// leading digits directly or after one character, so only those two positions are tried.
bool IsFrac(std::string_view s) {
  size_t k = 0;
  if (k < s.size() && s[k] == '-') ++k;
  const size_t d = k;
  while (k < s.size() && IsDigit(s[k])) ++k;
  if (k == d) return false;
  auto nonzero_digits = [](std::string_view t) {
    if (t.empty()) return false;
    bool nonzero = false;
    for (char c : t) {
      if (!IsDigit(c)) return false;
      nonzero = nonzero || c != '0';
    }
    return nonzero;
  };
  auto denominator = [&](std::string_view t) {
    if (nonzero_digits(t)) return true;
    return !t.empty() && t.back() != '\n' && nonzero_digits(t.substr(0, t.size() - 1));
  };
  // [0-9]+ may also give back digits to `.?`, but then `.?` is a digit and the slash is still at
  // one of these two places.
  for (size_t p : {k, k + 1}) {
    if (p >= s.size() || s[p] != '/') continue;
    if (p == k + 1 && s[k] == '\n') continue;
    if (denominator(s.substr(p + 1))) return true;
  }
  return false;
}

// --- Hendrycks MATH normalization (math_normalize.normalize_answer) ----------------------------

struct PyError {};  // an exception upstream's code raises (and catches)

// ^\\text\{(.+?)\}$: the content of an enclosing \text{...} without line breaks, or nullopt.
std::optional<std::string_view> EnclosingText(std::string_view s) {
  if (s.size() < 8 || s.substr(0, 6) != "\\text{" || s.back() != '}') return std::nullopt;
  const std::string_view inner = s.substr(6, s.size() - 7);
  if (inner.find('\n') != kNpos) return std::nullopt;
  return inner;
}

std::string FixFracs(const std::string& s) {
  const auto parts = Split(s, "\\frac");
  std::string out(parts[0]);
  for (size_t k = 1; k < parts.size(); ++k) {
    const std::string_view p = parts[k];
    out += "\\frac";
    if (!p.empty() && p[0] == '{') {
      out += p;
      continue;
    }
    if (p.empty()) throw PyError{};  // substr[0] on an empty string
    if (p.size() < 2) return s;
    const char a = p[0], b = p[1];
    if (b != '{') {
      out += std::string("{") + a + "}{" + b + "}";
    } else {
      out += std::string("{") + a + "}" + b;
    }
    out += p.substr(2);
  }
  return out;
}

// int(x) on a Python string: optional sign, ASCII digits (underscores between), white space.
std::optional<long long> PyInt(std::string_view s) {
  s = PyStrip(s);
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  if (i == s.size() || s.size() - i > 17) return std::nullopt;
  long long v = 0;
  for (; i < s.size(); ++i) {
    if (IsDigit(s[i])) {
      v = v * 10 + (s[i] - '0');
    } else if (!(s[i] == '_' && i > 0 && i + 1 < s.size() && IsDigit(s[i + 1]) &&
                 IsDigit(s[i - 1]))) {  // i > 0: "_1" read s[-1] (found by fuzz/fuzz_scorers)
      return std::nullopt;
    }
  }
  return neg ? -v : v;
}

std::string FixASlashB(const std::string& s) {
  const auto parts = Split(s, "/");
  if (parts.size() != 2) return s;
  const auto a = PyInt(parts[0]), b = PyInt(parts[1]);
  if (!a || !b || s != std::to_string(*a) + "/" + std::to_string(*b)) return s;
  return "\\frac{" + std::to_string(*a) + "}{" + std::to_string(*b) + "}";
}

std::string FixSqrt(const std::string& s) {
  if (s.find("\\sqrt") == kNpos) return s;
  const auto parts = Split(s, "\\sqrt");
  std::string out(parts[0]);
  for (size_t k = 1; k < parts.size(); ++k) {
    const std::string_view p = parts[k];
    if (p.empty()) throw PyError{};
    if (p[0] != '{') {
      out += std::string("\\sqrt{") + p[0] + "}";
      out += p.substr(1);
    } else {
      out += "\\sqrt";
      out += p;
    }
  }
  return out;
}

std::string StripString(std::string s) {
  s = ReplaceAll(s, "\n", "");
  s = ReplaceAll(s, "\\!", "");
  s = ReplaceAll(s, "\\\\", "\\");
  s = ReplaceAll(s, "tfrac", "frac");
  s = ReplaceAll(s, "dfrac", "frac");
  s = ReplaceAll(s, "\\left", "");
  s = ReplaceAll(s, "\\right", "");
  s = ReplaceAll(s, "^{\\circ}", "");
  s = ReplaceAll(s, "^\\circ", "");
  s = ReplaceAll(s, "\\$", "");
  if (s.find("\\text{ ") != kNpos) {  // units on the right
    const auto parts = Split(s, "\\text{ ");
    if (parts.size() != 2) throw PyError{};
    s = std::string(parts[0]);
  }
  s = ReplaceAll(s, "\\%", "");
  s = ReplaceAll(s, " .", " 0.");
  s = ReplaceAll(s, "{.", "{0.");
  if (s.empty()) return s;
  if (s[0] == '.') s = "0" + s;
  if (const auto parts = Split(s, "="); parts.size() == 2 && parts[0].size() <= 2) {
    s = std::string(parts[1]);
  }
  s = FixSqrt(s);
  s = ReplaceAll(s, " ", "");
  s = FixFracs(s);
  if (s == "0.5") s = "\\frac{1}{2}";
  return FixASlashB(s);
}

std::string HendrycksNormalize(std::string_view answer) {
  std::string a(PyStrip(answer));
  if (auto inner = EnclosingText(a)) a = std::string(PyStrip(*inner));
  try {
    return StripString(a);
  } catch (const PyError&) {
    return a;
  }
}

// --- pylatexenc's LaTeX-to-text, the subset MATH answers use (grader._parse_latex) ------------

class LatexToText {
 public:
  explicit LatexToText(std::string_view s) : s_(s) {}

  std::string Run() {
    std::string out;
    Nodes(out, 0, '\0');
    return out;
  }

 private:
  // Renders nodes up to `close` ('}' or '\0' for the end, or an \end{...}).
  void Nodes(std::string& out, int depth, char close) {
    while (i_ < s_.size()) {
      if (close == '}' && s_[i_] == '}') {
        ++i_;
        return;
      }
      if (close == 'E' && s_.compare(i_, 5, "\\end{") == 0) return;
      Node(out, depth);
    }
  }

  // One node: a group, a macro with its arguments, or a character.
  void Node(std::string& out, int depth) {
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      if (depth >= kMaxDepth) throw PyError{};
      Nodes(out, depth + 1, '}');
    } else if (c == '}') {
      ++i_;  // a stray closing brace
    } else if (c == '\\') {
      Macro(out, depth);
    } else if (c == '~') {
      ++i_;
      out += "\xc2\xa0";
    } else {
      out += c;
      ++i_;
    }
  }

  // The text of one argument: a group or a single token.
  std::string Arg(int depth) {
    while (i_ < s_.size() && IsSpace(s_[i_])) ++i_;
    if (i_ >= s_.size()) throw PyError{};
    std::string out;
    Node(out, depth + 1);
    return out;
  }

  void SkipOptional() {
    size_t k = i_;
    while (k < s_.size() && IsSpace(s_[k])) ++k;
    if (k < s_.size() && s_[k] == '[') {
      const size_t e = s_.find(']', k);
      if (e != kNpos) i_ = e + 1;
    }
  }

  void Macro(std::string& out, int depth) {
    if (depth >= kMaxDepth) throw PyError{};
    ++i_;
    if (i_ >= s_.size()) return;
    std::string name;
    if (IsLetter(s_[i_])) {
      while (i_ < s_.size() && IsLetter(s_[i_])) name += s_[i_++];
      while (i_ < s_.size() && IsSpace(s_[i_])) ++i_;  // a macro name eats the spaces after it
    } else {
      name = s_[i_++];
      if (name == ",") return void(out += " ");
      if (name == ";" || name == ":" || name == " ") return void(out += " ");
      if (name == "!") return;
      if (name == "\\") return void(out += "\n");
      out += name;  // \{ \} \% \$ \# \& \_
      return;
    }
    if (name == "frac" || name == "dfrac" || name == "tfrac" || name == "cfrac") {
      const std::string a = Arg(depth), b = Arg(depth);
      out += a + "/" + b;
    } else if (name == "sqrt") {
      SkipOptional();
      out += "\xe2\x88\x9a(" + Arg(depth) + ")";
    } else if (name == "mbox" || name == "textcolor" || name == "color") {
      const std::string a = Arg(depth);  // \mbox drops its text; a colour is not shown
      if (name == "textcolor") out += Arg(depth);
    } else if (name == "begin") {
      Environment(out, depth);
    } else if (name == "end") {
      Arg(depth);
    } else if (name == "mathbf") {
      Letters(Arg(depth), 0x1D400, 0x1D41A, out);
    } else if (name == "mathbb") {
      Letters(Arg(depth), 0x1D538, 0x1D552, out);
    } else if (name == "mathcal") {
      Letters(Arg(depth), 0x1D49C, 0x1D4B6, out);
    } else if (const std::string_view sym = Symbol(name); !sym.empty()) {
      out += sym;
    }
    // Any other macro (\text, \mathrm, \left, \displaystyle, unknown ones) renders as nothing;
    // a group after it renders as its content.
  }

  static std::string_view Symbol(const std::string& name) {
    static const std::pair<std::string_view, std::string_view> kSymbols[] = {
        {"pi", "\xcf\x80"},
        {"infty", "\xe2\x88\x9e"},
        {"cup", "\xe2\x88\xaa"},
        {"cdot", "\xc2\xb7"},
        {"times", "\xc3\x97"},
        {"pm", "\xc2\xb1"},
        {"mp", "\xe2\x88\x93"},
        {"le", "\xe2\x89\xa4"},
        {"leq", "\xe2\x89\xa4"},
        {"ge", "\xe2\x89\xa5"},
        {"geq", "\xe2\x89\xa5"},
        {"neq", "\xe2\x89\xa0"},
        {"ne", "\xe2\x89\xa0"},
        {"in", "\xe2\x88\x88"},
        {"circ", "\xe2\x88\x98"},
        {"prime", "'"},
        {"dots", "\xe2\x80\xa6"},
        {"ldots", "\xe2\x80\xa6"},
        {"cdots", "\xe2\x8b\xaf"},
        {"lbrace", "{"},
        {"rbrace", "}"},
        {"div", "\xc3\xb7"},
        {"approx", "\xe2\x89\x88"},
        {"quad", "  "},
        {"qquad", "    "},
        {"alpha", "\xce\xb1"},
        {"beta", "\xce\xb2"},
        {"gamma", "\xce\xb3"},
        {"delta", "\xce\xb4"},
        {"theta", "\xce\xb8"},
        {"lambda", "\xce\xbb"},
        {"mu", "\xce\xbc"},
        {"sigma", "\xcf\x83"},
        {"phi", "\xcf\x86"},
        {"omega", "\xcf\x89"},
        {"log", "log"},
        {"ln", "ln"},
        {"sin", "sin"},
        {"cos", "cos"},
        {"tan", "tan"},
        {"exp", "exp"},
    };
    for (const auto& [k, v] : kSymbols) {
      if (k == name) return v;
    }
    return {};
  }

  // \mathbf, \mathbb, \mathcal: ASCII letters as Unicode mathematical letters (from `upper` and
  // `lower`, the code points of A and a), other characters as they are.
  static void Letters(const std::string& text, unsigned upper, unsigned lower, std::string& out) {
    for (char c : text) {
      unsigned cp = 0;
      if (c >= 'A' && c <= 'Z') cp = upper + (c - 'A');
      if (c >= 'a' && c <= 'z') cp = lower + (c - 'a');
      if (cp == 0) {
        out += c;
        continue;
      }
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // \begin{env}...\end{env}: matrices as "[ a b; c d ]", anything else as its content.
  void Environment(std::string& out, int depth) {
    const std::string env = Arg(depth);
    const bool matrix = env.find("matrix") != kNpos || env == "array";
    if (env == "array") Arg(depth);  // the column spec
    std::string body;
    Nodes(body, depth + 1, 'E');
    if (s_.compare(i_, 5, "\\end{") == 0) {
      i_ += 4;
      Arg(depth);
    }
    if (!matrix) {
      out += body;
      return;
    }
    std::vector<std::string> rows;
    for (std::string_view row : Split(body, "\n")) {
      std::string cells;
      for (std::string_view cell : Split(row, "&")) {
        if (!cells.empty()) cells += " ";
        cells += PyStrip(cell);
      }
      if (!PyStrip(cells).empty()) rows.push_back(cells);
    }
    if (rows.empty()) throw PyError{};
    out += "[ ";
    for (size_t r = 0; r < rows.size(); ++r) out += (r ? "; " : "") + rows[r];
    out += " ]";
  }

  std::string_view s_;
  size_t i_ = 0;
};

std::string ParseLatex(std::string expr) {
  expr = ReplaceAll(expr, "\\tfrac", "\\frac");
  expr = ReplaceAll(expr, "\\dfrac", "\\frac");
  expr = ReplaceAll(expr, "\\frac", " \\frac");
  expr = LatexToText(expr).Run();
  // The characters the text has for \sqrt, \pi, \infty, \cup, \cdot, \times (typed or not).
  for (const auto& [from, to] :
       {std::pair<std::string_view, std::string_view>{"\xe2\x88\x9a", "sqrt"},
        {"\xcf\x80", "pi"},
        {"\xe2\x88\x9e", "inf"},
        {"\xe2\x88\xaa", "U"},
        {"\xc2\xb7", "*"},
        {"\xc3\x97", "*"}}) {
    expr = ReplaceAll(expr, from, to);
  }
  return std::string(PyStrip(expr));
}

// --- PRM800K normalization (grader._normalize) ------------------------------------------------

// re.sub(rf"{unit}(es)?(s)? *(\^[0-9]+)?", "", s)
std::string RemoveUnit(const std::string& s, std::string_view unit) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, unit.size(), unit) != 0) {
      out += s[i++];
      continue;
    }
    size_t k = i + unit.size();
    if (s.compare(k, 2, "es") == 0) k += 2;
    if (k < s.size() && s[k] == 's') ++k;
    while (k < s.size() && s[k] == ' ') ++k;
    if (k + 1 < s.size() && s[k] == '^' && IsDigit(s[k + 1])) {
      ++k;
      while (k < s.size() && IsDigit(s[k])) ++k;
    }
    i = k;
  }
  return out;
}

// re.sub(pattern, "", s) for `^ *\\circ` (circ) or `,\\! *` (thin-space thousands).
std::string RemoveCircOrThinComma(const std::string& s, bool circ) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const char lead = circ ? '^' : ',';
    if (s[i] == lead) {
      size_t k = i + 1;
      if (circ) {
        while (k < s.size() && s[k] == ' ') ++k;
        if (s.compare(k, 5, "\\circ") == 0) {
          i = k + 5;
          continue;
        }
      } else if (s.compare(k, 2, "\\!") == 0) {
        k += 2;
        while (k < s.size() && s[k] == ' ') ++k;
        i = k;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

std::string PrmNormalize(std::string expr) {
  if (auto inner = EnclosingText(expr)) expr = std::string(*inner);
  expr = ReplaceAll(expr, "\\%", "%");
  expr = ReplaceAll(expr, "\\$", "$");
  expr = ReplaceAll(expr, "$", "");
  expr = ReplaceAll(expr, "%", "");
  expr = ReplaceAll(expr, " or ", " , ");
  expr = ReplaceAll(expr, " and ", " , ");
  expr = ReplaceAll(expr, "million", "*10^6");
  expr = ReplaceAll(expr, "billion", "*10^9");
  expr = ReplaceAll(expr, "trillion", "*10^12");
  for (std::string_view unit :
       {"degree", "cm", "centimeter", "meter", "mile", "second", "minute", "hour", "day", "week",
        "month", "year", "foot", "feet", "inch", "yard"}) {
    expr = RemoveUnit(expr, unit);
  }
  expr = RemoveCircOrThinComma(expr, true);
  if (!expr.empty() && expr.front() == '{' && expr.back() == '}') {
    expr = expr.substr(1, expr.size() - 2);
  }
  expr = RemoveCircOrThinComma(expr, false);
  if (const auto x = PyFloat(expr); x && PyIsInt(*x)) expr = IntString(std::nearbyint(*x));
  if (expr.find('\\') != kNpos) {
    try {
      expr = ParseLatex(expr);
    } catch (const PyError&) {
    }
  }
  {  // re.sub("- *", "-")
    std::string out;
    for (size_t i = 0; i < expr.size(); ++i) {
      out += expr[i];
      if (expr[i] == '-') {
        while (i + 1 < expr.size() && expr[i + 1] == ' ') ++i;
      }
    }
    expr = std::move(out);
  }
  {  // mixed numbers: re.sub("([0-9]) +([0-9])", r"\1+\2")
    std::string out;
    size_t i = 0;
    while (i < expr.size()) {
      if (IsDigit(expr[i]) && i + 1 < expr.size() && expr[i + 1] == ' ') {
        size_t k = i + 1;
        while (k < expr.size() && expr[k] == ' ') ++k;
        if (k < expr.size() && IsDigit(expr[k])) {
          out += expr[i];
          out += '+';
          out += expr[k];
          i = k + 1;
          continue;
        }
      }
      out += expr[i++];
    }
    expr = std::move(out);
  }
  std::string out;
  for (char c : expr) {
    if (c != ' ' && c != '{' && c != '}') out += AsciiLower(c);
  }
  if (StrIsInt(out)) {
    if (const auto x = PyFloat(ReplaceAll(out, ",", ""))) out = IntString(*x);
  }
  return out;
}

// --- sympy's parse_expr with implicit multiplication, evaluated numerically --------------------

using Complex = std::complex<double>;

// A recursive-descent evaluator of the Python-like text PrmNormalize yields: numbers, one-letter
// symbols (a multi-letter name other than pi and sqrt is split into letters, as sympy's
// split_symbols does), pi, sqrt(), + - * / ** (^), !, parentheses, implicit products at the
// precedence of '*'. Anything else (commas, '=', '±', brackets, other Unicode) is a parse error,
// as it is for sympy or for the subtraction of two tuples.
class Evaluator {
 public:
  Evaluator(std::string_view s, const Complex* vars) : s_(s), vars_(vars) {}

  std::optional<Complex> Run() {
    try {
      const Complex v = Sum(0);
      if (pos_ != s_.size()) return std::nullopt;
      return v;
    } catch (const PyError&) {
      return std::nullopt;
    }
  }

 private:
  bool Peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  bool AtPow() const {
    return Peek('^') || (Peek('*') && pos_ + 1 < s_.size() && s_[pos_ + 1] == '*');
  }
  bool AtAtom() const {
    return pos_ < s_.size() &&
           (IsDigit(s_[pos_]) || s_[pos_] == '.' || IsLetter(s_[pos_]) || s_[pos_] == '(');
  }

  Complex Sum(int depth) {
    if (depth > kMaxDepth) throw PyError{};
    Complex v = Product(depth);
    while (Peek('+') || Peek('-')) {
      const char op = s_[pos_++];
      const Complex r = Product(depth);
      v = op == '+' ? v + r : v - r;
    }
    return v;
  }

  Complex Product(int depth) {
    Complex v = Unary(depth);
    while (true) {
      if (Peek('*') && !AtPow()) {
        ++pos_;
        v *= Unary(depth);
      } else if (Peek('/')) {
        ++pos_;
        const Complex d = Unary(depth);
        if (d == Complex(0)) throw PyError{};  // zoo: never equal
        v /= d;
      } else if (AtAtom()) {
        v *= Unary(depth);  // implicit multiplication
      } else {
        return v;
      }
    }
  }

  Complex Unary(int depth) {
    if (depth > kMaxDepth) throw PyError{};
    if (Peek('-')) {
      ++pos_;
      return -Unary(depth + 1);
    }
    if (Peek('+')) {
      ++pos_;
      return Unary(depth + 1);
    }
    return Power(depth);
  }

  Complex Power(int depth) {
    Complex base = Postfix(depth);
    if (AtPow()) {
      pos_ += Peek('^') ? 1 : 2;
      const Complex e = Unary(depth + 1);
      base = std::pow(base, e);
    }
    return base;
  }

  Complex Postfix(int depth) {
    Complex v = Atom(depth);
    while (Peek('!')) {
      ++pos_;
      const double n = v.real();
      if (v.imag() != 0 || n < 0 || n > 170 || n != std::floor(n)) throw PyError{};
      double f = 1;
      for (int k = 2; k <= static_cast<int>(n); ++k) f *= k;
      v = f;
    }
    return v;
  }

  Complex Atom(int depth) {
    if (pos_ >= s_.size()) throw PyError{};
    const char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      const Complex v = Sum(depth + 1);
      if (!Peek(')')) throw PyError{};
      ++pos_;
      return v;
    }
    if (IsDigit(c) || c == '.') {
      // A Python number literal: digits with single underscores between them ("40_9" is 409).
      std::string num;
      while (pos_ < s_.size()) {
        if (IsDigit(s_[pos_]) || s_[pos_] == '.') {
          num += s_[pos_++];
        } else if (s_[pos_] == '_' && !num.empty() && IsDigit(num.back()) && pos_ + 1 < s_.size() &&
                   IsDigit(s_[pos_ + 1])) {
          ++pos_;
        } else {
          break;
        }
      }
      if (num == "." || std::count(num.begin(), num.end(), '.') > 1) throw PyError{};
      return std::strtod(num.c_str(), nullptr);
    }
    if (IsLetter(c)) {
      {
        const size_t start = pos_;
        while (pos_ < s_.size() && (IsLetter(s_[pos_]) || IsDigit(s_[pos_]) || s_[pos_] == '_')) {
          ++pos_;
        }
        const std::string_view name = s_.substr(start, pos_ - start);
        if (name == "pi") return M_PI;
        if (name == "sqrt") {
          const Complex arg = Atom(depth + 1);
          return std::sqrt(arg);
        }
        if (name.find('_') != kNpos) throw PyError{};
        // split_symbols: one symbol per letter, digits as numbers, multiplied.
        Complex v = 1;
        for (size_t k = 0; k < name.size(); ++k) {
          if (IsLetter(name[k])) {
            v *= vars_[AsciiLower(name[k]) - 'a'];
          } else {
            size_t e = k;
            while (e < name.size() && IsDigit(name[e])) ++e;
            v *= std::strtod(std::string(name.substr(k, e - k)).c_str(), nullptr);
            k = e - 1;
          }
        }
        return v;
      }
    }
    throw PyError{};
  }

  std::string_view s_;
  const Complex* vars_;
  size_t pos_ = 0;
};

// The distinct letters of `expr` without "sqrt" and "frac" (count_unknown_letters_in_expr), any
// non-ASCII character counting as a letter (it fails to parse either way).
bool ShouldAllowEval(const std::string& expr) {
  const std::string e = ReplaceAll(ReplaceAll(expr, "sqrt", ""), "frac", "");
  bool seen[128] = {};
  int letters = 0;
  for (char c : e) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) return false;
    if (IsLetter(c) && !seen[u]) {
      seen[u] = true;
      ++letters;
    }
  }
  if (letters > 2) return false;
  if (e.find("^{") != kNpos || e.find("^(") != kNpos) return false;
  for (size_t p = e.find('^'); p != kNpos; p = e.find('^', p + 1)) {
    size_t k = p + 1;
    while (k < e.size() && IsDigit(e[k])) ++k;
    if (k - p - 1 >= 2) return false;                            // \^[0-9][0-9]+
    if (k > p + 1 && k < e.size() && e[k] == '^') return false;  // \^[0-9]+\^
  }
  return true;
}

// sympy.simplify((gt)-(given)) == 0, checked numerically at three fixed points.
bool EqualUnderSympy(const std::string& gt, const std::string& given) {
  if (!ShouldAllowEval("(" + gt + ")-(" + given + ")")) return false;
  for (int point = 0; point < 3; ++point) {
    Complex vars[26];
    for (int k = 0; k < 26; ++k) {
      vars[k] = Complex(0.5 + 0.37 * ((k * 7 + point * 11) % 13), 0.29 * ((k * 5 + point) % 7));
    }
    const auto a = Evaluator(gt, vars).Run();
    const auto b = Evaluator(given, vars).Run();
    if (!a || !b) return false;
    if (!std::isfinite(a->real()) || !std::isfinite(a->imag()) || !std::isfinite(b->real()) ||
        !std::isfinite(b->imag())) {
      return false;
    }
    const double scale = std::max({1.0, std::abs(*a), std::abs(*b)});
    if (std::abs(*a - *b) > 1e-10 * scale) return false;
  }
  return true;
}

// split_tuple: the elements of "(a,b)" / "[a,b)" ... without inner brackets, else the whole.
std::vector<std::string> SplitTuple(const std::string& expr_in) {
  const std::string expr = StripFormattedCommas(expr_in);
  if (expr.empty()) return {};
  auto tuple_char = [](char c) { return c == '(' || c == ')' || c == '[' || c == ']'; };
  if (expr.size() > 2 && tuple_char(expr.front()) && tuple_char(expr.back())) {
    bool inner = false;
    for (size_t k = 1; k + 1 < expr.size(); ++k) inner = inner || tuple_char(expr[k]);
    if (!inner) {
      std::vector<std::string> elems;
      for (std::string_view e : Split(std::string_view(expr).substr(1, expr.size() - 2), ",")) {
        elems.emplace_back(PyStrip(e));
      }
      return elems;
    }
  }
  return {expr};
}

// grader.grade_answer(given, ground_truth).
bool GradeAnswer(std::string_view given, std::string_view gold) {
  if (HendrycksNormalize(gold) == HendrycksNormalize(given)) return true;
  const std::string gt = PrmNormalize(std::string(gold));
  const std::string gn = PrmNormalize(std::string(given));
  if (gt == gn) return true;
  if (gn.empty()) return false;
  const auto gt_elems = SplitTuple(gt);
  const auto gn_elems = SplitTuple(gn);
  if (gt_elems.size() > 1 && (gt.front() != gn.front() || gt.back() != gn.back())) return false;
  if (gt_elems.size() != gn_elems.size()) return false;
  for (size_t k = 0; k < gt_elems.size(); ++k) {
    const std::string& a = gt_elems[k];
    const std::string& b = gn_elems[k];
    bool ok;
    if (IsFrac(a) && IsFrac(b)) {
      ok = a == b;
    } else if (StrIsInt(a) != StrIsInt(b)) {
      ok = false;
    } else {
      ok = EqualUnderSympy(a, b);
    }
    if (!ok) return false;
  }
  return true;
}

// openbench's normalize_numeric_answer: the leading integer, else the float's repr.
std::optional<std::string> NormalizeNumeric(std::string_view answer) {
  if (answer.empty()) return std::nullopt;
  const std::string a(PyStrip(ReplaceAll(answer, ",", "")));
  size_t k = 0;
  if (k < a.size() && a[k] == '-') ++k;
  const size_t d = k;
  while (k < a.size() && IsDigit(a[k])) ++k;
  if (k > d) return a.substr(0, k);
  const auto x = PyFloat(a);
  if (!x || !std::isfinite(*x)) return std::nullopt;
  if (*x == std::trunc(*x)) return IntString(*x);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", *x);  // a canonical form of the value
  return std::string(buf);
}

}  // namespace

Verdict ScoreMathUpstream(std::string_view completion, std::string_view gold) {
  const std::string text = UpstreamRemoveThinkingTags(completion);
  Verdict v;
  v.rule_set = std::string(kMathUpstreamRuleSet);
  std::optional<std::string> extracted = LastBox(text);
  if (!extracted || extracted->empty()) extracted = LastNumber(text);
  if (!extracted) {
    v.method = "failed";
    return v;
  }
  v.extracted = *extracted;
  v.parsed = true;
  const std::string_view expected = PyStrip(gold);
  if (GradeAnswer(*extracted, expected)) {
    v.method = "prm800k";
    v.correct = true;
    return v;
  }
  const auto a = NormalizeNumeric(*extracted);
  const auto b = NormalizeNumeric(expected);
  v.correct = a && b && *a == *b;
  v.method = v.correct ? "robust_boxed" : "no_match";
  return v;
}

}  // namespace pipette::scorers
