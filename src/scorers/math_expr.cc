// A small recursive-descent evaluator for answer expressions (see math_expr.h).
#include "scorers/math_expr.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "scorers/math_symbolic.h"

namespace pipette::scorers {
namespace {

using Value = std::complex<double>;
constexpr int kMaxDepth = 200;
constexpr int kPoints = 3;

class Parser {
 public:
  Parser(std::string_view s, int point) : s_(s), point_(point) {}

  std::optional<Value> Parse() {
    auto v = Expr();
    if (!v || pos_ != s_.size() || !std::isfinite(v->real()) || !std::isfinite(v->imag())) {
      return std::nullopt;
    }
    return v;
  }

 private:
  bool Eat(std::string_view t) {
    if (s_.substr(pos_).starts_with(t)) {
      pos_ += t.size();
      return true;
    }
    return false;
  }
  bool AtEnd() const { return pos_ >= s_.size(); }

  std::optional<Value> Expr() {
    if (++depth_ > kMaxDepth) return std::nullopt;
    auto v = Term();
    while (v && !AtEnd()) {
      if (Eat("+")) {
        auto r = Term();
        if (!r) return std::nullopt;
        *v += *r;
      } else if (Eat("-")) {
        auto r = Term();
        if (!r) return std::nullopt;
        *v -= *r;
      } else {
        break;
      }
    }
    --depth_;
    return v;
  }

  bool StartsAtom() const {
    if (AtEnd()) return false;
    const char c = s_[pos_];
    return std::isalnum(static_cast<unsigned char>(c)) || c == '(' || c == '{' ||
           (c == '\\' && !s_.substr(pos_).starts_with("\\cdot") &&
            !s_.substr(pos_).starts_with("\\times"));
  }

  std::optional<Value> Term() {
    auto v = Unary();
    while (v && !AtEnd()) {
      if (Eat("*") || Eat("\\cdot") || Eat("\\times")) {
        auto r = Unary();
        if (!r) return std::nullopt;
        *v *= *r;
      } else if (Eat("/")) {
        auto r = Unary();
        if (!r || std::abs(*r) == 0.0) return std::nullopt;
        *v /= *r;
      } else if (StartsAtom()) {
        auto r = Power();
        if (!r) return std::nullopt;
        *v *= *r;
      } else {
        break;
      }
    }
    return v;
  }

  std::optional<Value> Unary() {
    if (++depth_ > kMaxDepth) return std::nullopt;
    std::optional<Value> v;
    if (Eat("-")) {
      v = Unary();
      if (v) v = -*v;
    } else if (Eat("+")) {
      v = Unary();
    } else {
      v = Power();
    }
    --depth_;
    return v;
  }

  std::optional<Value> Power() {
    auto base = Atom();
    if (!base || !Eat("^")) return base;
    std::optional<Value> exponent;
    if (!AtEnd() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      exponent = Value(s_[pos_++] - '0');
    } else {
      exponent = Unary();
    }
    if (!exponent || std::abs(*exponent) > 64) return std::nullopt;  // no huge powers
    return std::pow(*base, *exponent);
  }

  // "{expr}" (a TeX argument) or a single digit/letter.
  std::optional<Value> Argument() {
    if (Eat("{")) {
      auto v = Expr();
      if (!v || !Eat("}")) return std::nullopt;
      return v;
    }
    if (AtEnd()) return std::nullopt;
    const char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      ++pos_;
      return Value(c - '0');
    }
    return Atom();
  }

  std::optional<Value> Atom() {
    if (++depth_ > kMaxDepth || AtEnd()) return std::nullopt;
    std::optional<Value> v;
    const char c = s_[pos_];
    if (Eat("(") || Eat("{")) {
      const char close = c == '(' ? ')' : '}';
      v = Expr();
      if (!v || !Eat(std::string_view(&close, 1))) v = std::nullopt;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const size_t start = pos_;
      while (!AtEnd() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) {
        ++pos_;
      }
      v = Value(std::strtod(std::string(s_.substr(start, pos_ - start)).c_str(), nullptr));
    } else if (Eat("\\infty")) {
      v = Value(1e200);
    } else if (Eat("\\pi")) {
      v = Value(M_PI);
    } else if (Eat("\\frac")) {
      auto n = Argument();
      auto d = n ? Argument() : std::nullopt;
      if (d && std::abs(*d) != 0.0) v = *n / *d;
    } else if (Eat("\\sqrt")) {
      Value root(2);
      if (Eat("[")) {
        auto r = Expr();
        if (!r || !Eat("]")) return std::nullopt;
        root = *r;
      }
      auto x = Argument();
      if (x && std::abs(root) != 0.0) v = std::pow(*x, 1.0 / root);
    } else if (c == 'i') {
      ++pos_;
      v = Value(0, 1);
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      ++pos_;
      // Fixed, unremarkable values per letter and evaluation point.
      v = Value(0.5 + 0.1373 * (c - 'A') / 57.0 + 0.7071 * point_ + 0.031 * ((c * 7) % 11));
    }
    --depth_;
    return v;
  }

  std::string_view s_;
  size_t pos_ = 0;
  int point_;
  int depth_ = 0;
};

bool Close(Value a, Value b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

std::optional<bool> NumericScalarEqual(std::string_view a, std::string_view b) {
  for (int point = 0; point < kPoints; ++point) {
    const auto x = Parser(a, point).Parse();
    const auto y = Parser(b, point).Parse();
    if (!x || !y) return std::nullopt;
    if (!Close(*x, *y)) return false;
  }
  return true;
}

// Numeric "different" is final (symbolic equality never overrides it); otherwise GiNaC's exact
// verdict when it has one (it tells 2^{64} from 2^{64}+1 and 0.3333333333 from 1/3, and compares
// exponents above 64), else the numeric one.
std::optional<bool> ScalarEqual(std::string_view a, std::string_view b) {
  const auto numeric = NumericScalarEqual(a, b);
  if (numeric == false) return false;
  if (const auto exact = SymbolicallyEqual(a, b)) return exact;
  return numeric;
}

// Splits at top-level commas; "a\pm b" gives "a+b" and "a-b".
std::vector<std::string> Items(std::string_view s) {
  std::vector<std::string> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && (s[i] == '(' || s[i] == '[' || s[i] == '{')) ++depth;
    if (i < s.size() && (s[i] == ')' || s[i] == ']' || s[i] == '}')) --depth;
    if (i == s.size() || (s[i] == ',' && depth == 0)) {
      std::string item(s.substr(start, i - start));
      if (size_t pm = item.find("\\pm"); pm != std::string::npos) {
        items.push_back(item.substr(0, pm) + "+" + item.substr(pm + 3));
        items.push_back(item.substr(0, pm) + "-" + item.substr(pm + 3));
      } else {
        items.push_back(std::move(item));
      }
      start = i + 1;
    }
  }
  return items;
}

// "(a,b]": the delimiters and the inside; nullopt when `s` is not one bracketed group.
std::optional<std::pair<std::string, std::string>> Bracketed(std::string_view s) {
  if (s.size() < 2 || (s.front() != '(' && s.front() != '[') ||
      (s.back() != ')' && s.back() != ']')) {
    return std::nullopt;
  }
  int depth = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == '(' || s[i] == '[') ++depth;
    if (s[i] == ')' || s[i] == ']') --depth;
    if (depth == 0) return std::nullopt;  // "(a)(b)" is a product, not one group
  }
  return std::make_pair(std::string{s.front(), s.back()}, std::string(s.substr(1, s.size() - 2)));
}

// "f=g" -> "(f)-(g)".
std::string Difference(std::string_view equation) {
  const size_t eq = equation.find('=');
  std::string out = "(";
  out.append(equation.substr(0, eq));
  out.append(")-(");
  out.append(equation.substr(eq + 1));
  out.append(")");
  return out;
}

// Equations "f=g": equal when f-g of one is a non-zero constant multiple of the other's.
std::optional<bool> EquationEqual(std::string_view a, std::string_view b) {
  const std::string fa = Difference(a);
  const std::string fb = Difference(b);
  std::optional<Value> ratio;
  for (int point = 0; point < kPoints; ++point) {
    const auto x = Parser(fa, point).Parse();
    const auto y = Parser(fb, point).Parse();
    if (!x || !y) return std::nullopt;
    if (std::abs(*y) < 1e-12) {
      if (std::abs(*x) > 1e-12) return false;
      continue;
    }
    if (!ratio) ratio = *x / *y;
    if (!Close(*x / *y, *ratio) || std::abs(*ratio) < 1e-12) return false;
  }
  return true;
}

std::optional<bool> Equal(std::string_view a, std::string_view b, int depth);

std::optional<bool> ItemEqual(std::string_view a, std::string_view b, int depth) {
  if (Items(a).size() == 1 && Items(b).size() == 1 && !Bracketed(a) && !Bracketed(b)) {
    return ScalarEqual(a, b);
  }
  return Equal(a, b, depth + 1);
}

std::optional<bool> Equal(std::string_view a, std::string_view b, int depth) {
  if (depth > 8) return std::nullopt;
  if (a.find('=') != std::string_view::npos && b.find('=') != std::string_view::npos) {
    return EquationEqual(a, b);
  }
  const auto ba = Bracketed(a);
  const auto bb = Bracketed(b);
  const bool ordered = ba && bb;  // tuples, intervals, vectors: delimiters and order matter
  if (ordered && ba->first != bb->first) return false;
  const std::vector<std::string> xs = Items(ordered ? ba->second : a);
  const std::vector<std::string> ys = Items(ordered ? bb->second : b);
  if (xs.size() == 1 && ys.size() == 1) {
    if (ordered) return Equal(xs[0], ys[0], depth + 1);  // "((a))" or an interval of one item
    return ScalarEqual(xs[0], ys[0]);
  }
  if (xs.size() != ys.size()) return false;
  std::vector<bool> used(ys.size(), false);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (ordered) {
      const auto eq = ItemEqual(xs[i], ys[i], depth);
      if (!eq || !*eq) return eq;
      continue;
    }
    bool matched = false;  // an unordered list (roots): any order
    for (size_t j = 0; j < ys.size() && !matched; ++j) {
      if (used[j]) continue;
      const auto eq = ItemEqual(xs[i], ys[j], depth);
      if (!eq) return std::nullopt;
      if (*eq) used[j] = matched = true;
    }
    if (!matched) return false;
  }
  return true;
}

}  // namespace

std::optional<bool> NumericallyEqual(std::string_view a, std::string_view b) {
  return Equal(a, b, 0);
}

}  // namespace pipette::scorers
