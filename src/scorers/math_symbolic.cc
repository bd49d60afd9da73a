// Exact equivalence with GiNaC (see math_symbolic.h): a parse tree with up-front cost bounds,
// then GiNaC expressions, then normal(expand(a - b)).
#include "scorers/math_symbolic.h"

#include <ginac/ginac.h>

#include <array>
#include <cctype>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

namespace pipette::scorers {
namespace {

enum class Kind { kNum, kVar, kImag, kPi, kAdd, kSub, kMul, kDiv, kNeg, kPow, kRoot };

struct Node {
  Kind kind = Kind::kNum;
  int a = -1;          // first operand (kRoot: the index)
  int b = -1;          // second operand (kRoot: the radicand)
  std::string digits;  // kNum: the digits without the point
  int scale = 0;       // kNum: digits after the point
  char var = 0;        // kVar
};

Node Make(Kind kind, int a = -1, int b = -1) {
  Node n;
  n.kind = kind;
  n.a = a;
  n.b = b;
  return n;
}

Node Number(std::string digits) {
  Node n = Make(Kind::kNum);
  n.digits = std::move(digits);
  return n;
}

// The numeric check's grammar (math_expr.cc), building a tree instead of a value.
class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  // The root node, or -1 when the text is not an expression or is over the size caps.
  int Parse() {
    if (s_.size() > kSymbolicMaxChars) return -1;
    const int root = Expr();
    return root >= 0 && pos_ == s_.size() ? root : -1;
  }
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  bool Eat(std::string_view t) {
    if (s_.substr(pos_).starts_with(t)) {
      pos_ += t.size();
      return true;
    }
    return false;
  }
  bool AtEnd() const { return pos_ >= s_.size(); }

  int Add(Node n) {
    if (static_cast<int>(nodes_.size()) >= kSymbolicMaxNodes) return -1;
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }
  int Binary(Kind k, int a, int b) { return a < 0 || b < 0 ? -1 : Add(Make(k, a, b)); }
  int Digit(char c) { return Add(Number(std::string(1, c))); }

  // Depth guard shared by the recursive rules.
  struct Deeper {
    explicit Deeper(int& d) : d_(d) { ++d_; }
    ~Deeper() { --d_; }
    int& d_;
  };

  int Expr() {
    Deeper guard(depth_);
    if (depth_ > kSymbolicMaxDepth) return -1;
    int v = Term();
    while (v >= 0 && !AtEnd()) {
      if (Eat("+")) {
        v = Binary(Kind::kAdd, v, Term());
      } else if (Eat("-")) {
        v = Binary(Kind::kSub, v, Term());
      } else {
        break;
      }
    }
    return v;
  }

  bool StartsAtom() const {
    if (AtEnd()) return false;
    const char c = s_[pos_];
    return std::isalnum(static_cast<unsigned char>(c)) || c == '(' || c == '{' ||
           (c == '\\' && !s_.substr(pos_).starts_with("\\cdot") &&
            !s_.substr(pos_).starts_with("\\times"));
  }

  int Term() {
    int v = Unary();
    while (v >= 0 && !AtEnd()) {
      if (Eat("*") || Eat("\\cdot") || Eat("\\times")) {
        v = Binary(Kind::kMul, v, Unary());
      } else if (Eat("/")) {
        v = Binary(Kind::kDiv, v, Unary());
      } else if (StartsAtom()) {
        v = Binary(Kind::kMul, v, Power());
      } else {
        break;
      }
    }
    return v;
  }

  int Unary() {
    Deeper guard(depth_);
    if (depth_ > kSymbolicMaxDepth) return -1;
    if (Eat("-")) {
      const int v = Unary();
      return v < 0 ? -1 : Add(Make(Kind::kNeg, v));
    }
    if (Eat("+")) return Unary();
    return Power();
  }

  int Power() {
    const int base = Atom();
    if (base < 0 || !Eat("^")) return base;
    int exponent;
    if (!AtEnd() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      exponent = Digit(s_[pos_++]);
    } else {
      exponent = Unary();
    }
    return Binary(Kind::kPow, base, exponent);
  }

  int Argument() {
    if (Eat("{")) {
      const int v = Expr();
      return v >= 0 && Eat("}") ? v : -1;
    }
    if (AtEnd()) return -1;
    if (std::isdigit(static_cast<unsigned char>(s_[pos_]))) return Digit(s_[pos_++]);
    return Atom();
  }

  int Atom() {
    Deeper guard(depth_);
    if (depth_ > kSymbolicMaxDepth || AtEnd()) return -1;
    const char c = s_[pos_];
    if (Eat("(") || Eat("{")) {
      const int v = Expr();
      return v >= 0 && Eat(c == '(' ? ")" : "}") ? v : -1;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      Node n = Number("");
      bool point = false;
      while (!AtEnd() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) {
        if (s_[pos_] == '.') {
          if (point) return -1;  // "1.2.3"
          point = true;
        } else {
          n.digits += s_[pos_];
          n.scale += point ? 1 : 0;
        }
        ++pos_;
      }
      if (n.digits.empty()) return -1;
      return Add(std::move(n));
    }
    if (Eat("\\pi")) return Add(Make(Kind::kPi));
    if (Eat("\\frac")) {
      const int n = Argument();
      return Binary(Kind::kDiv, n, n < 0 ? -1 : Argument());
    }
    if (Eat("\\sqrt")) {
      int index;
      if (Eat("[")) {
        index = Expr();
        if (index < 0 || !Eat("]")) return -1;
      } else {
        index = Digit('2');
      }
      return Binary(Kind::kRoot, index, Argument());
    }
    if (c == 'i') {
      ++pos_;
      return Add(Make(Kind::kImag));
    }
    if (std::isalpha(static_cast<unsigned char>(c))) {
      ++pos_;
      Node n = Make(Kind::kVar);
      n.var = c;
      return Add(std::move(n));
    }
    return -1;  // \infty, other commands, punctuation
  }

  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<Node> nodes_;
};

// Estimated size of a subtree once expanded: terms, bits of its largest exact number, and its
// value when it is a real constant (NaN otherwise), to bound exponents.
struct Cost {
  double terms = 1;
  double bits = 1;
  double value = NAN;
};

// Terms of a t-term sum raised to the n-th power: the binomial count C(n+t-1, t-1), capped.
double PowerTerms(double t, double n) {
  if (t <= 1) return 1;
  double c = 1;
  for (double k = 1; k < t && c <= kSymbolicMaxTerms; ++k) c = c * (n + k) / k;
  return c;
}

// The cost of node `i`, or nullopt when a cap is exceeded.
std::optional<Cost> Estimate(const std::vector<Node>& nodes, int i) {
  const Node& n = nodes[i];
  Cost c;
  std::optional<Cost> x;
  std::optional<Cost> y;
  if (n.a >= 0 && !(x = Estimate(nodes, n.a))) return std::nullopt;
  if (n.b >= 0 && !(y = Estimate(nodes, n.b))) return std::nullopt;
  switch (n.kind) {
    case Kind::kNum:
      c.value = std::strtod(n.digits.c_str(), nullptr);
      c.bits = std::log2(c.value + 1) + 3.33 * n.scale;  // numerator and denominator 10^scale
      c.value /= std::pow(10.0, n.scale);
      break;
    case Kind::kVar:
    case Kind::kImag:
      break;
    case Kind::kPi:
      c.value = M_PI;
      break;
    case Kind::kNeg:
      c = *x;
      c.value = -x->value;
      break;
    case Kind::kAdd:
    case Kind::kSub:
      c.terms = x->terms + y->terms;
      c.bits = std::max(x->bits, y->bits) + 1;
      c.value = n.kind == Kind::kAdd ? x->value + y->value : x->value - y->value;
      break;
    case Kind::kMul:
    case Kind::kDiv:
      c.terms = x->terms * y->terms;
      c.bits = x->bits + y->bits;
      c.value = n.kind == Kind::kMul ? x->value * y->value : x->value / y->value;
      break;
    case Kind::kPow:
    case Kind::kRoot: {
      const Cost& base = n.kind == Kind::kPow ? *x : *y;
      const Cost& other = n.kind == Kind::kPow ? *y : *x;
      if (std::isnan(other.value)) {  // a symbolic exponent: an opaque power
        c.bits = base.bits + other.bits;
        break;
      }
      if (n.kind == Kind::kRoot && other.value == 0) return std::nullopt;
      const double e = n.kind == Kind::kPow ? other.value : 1 / other.value;
      if (!std::isfinite(e) || std::fabs(e) > kSymbolicMaxExponent ||
          (n.kind == Kind::kRoot && std::fabs(other.value) > kSymbolicMaxExponent)) {
        return std::nullopt;
      }
      const double whole = std::floor(std::fabs(e));
      c.terms = PowerTerms(base.terms, whole) + (whole == std::fabs(e) ? 0 : 1);
      c.bits = base.bits * (whole + 1) + whole * std::log2(base.terms) + other.bits;
      c.value = std::pow(base.value, e);
      break;
    }
  }
  if (c.terms > kSymbolicMaxTerms || c.bits > kSymbolicMaxBits) return std::nullopt;
  return c;
}

constexpr std::array<int, 25> kSmallPrimes = {2,  3,  5,  7,  11, 13, 17, 19, 23, 29, 31, 37, 41,
                                              43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97};

// n^e for a positive integer n and a rational e, over the small primes dividing n (the
// remaining cofactor, when not 1, stays one base): GiNaC then extracts integer powers itself.
GiNaC::ex IntegerRadical(GiNaC::numeric n, const GiNaC::numeric& e) {
  GiNaC::ex out = 1;
  if (n.int_length() <= 4096) {
    for (int p : kSmallPrimes) {
      int multiplicity = 0;
      while (GiNaC::irem(n, p).is_zero()) {
        n = GiNaC::iquo(n, p);
        ++multiplicity;
      }
      if (multiplicity > 0) out *= GiNaC::pow(GiNaC::ex(p), GiNaC::ex(e * multiplicity));
    }
  }
  if (!n.is_equal(1)) out *= GiNaC::pow(GiNaC::ex(n), GiNaC::ex(e));
  return out;
}

// An expression with no value (0^0, a zero denominator): thrown before GiNaC would throw its own.
struct Undefined {};

// base^e with a canonical form for radicals of rational numbers (principal branch for a negative
// base: (-r)^e = (-1)^e r^e).
GiNaC::ex Power(const GiNaC::ex& base, const GiNaC::ex& e) {
  // GiNaC throws on 0^0 and 0^-q only after allocating the power, which then leaks (LeakSanitizer
  // in fuzz_scorers): refused here first, as undefined.
  if (base.is_zero() && GiNaC::is_a<GiNaC::numeric>(e)) {
    const auto& q = GiNaC::ex_to<GiNaC::numeric>(e);
    if (q.is_zero() || !q.is_real() || q.is_negative()) throw Undefined();
  }
  if (GiNaC::is_a<GiNaC::numeric>(base) && GiNaC::is_a<GiNaC::numeric>(e)) {
    const auto& r = GiNaC::ex_to<GiNaC::numeric>(base);
    const auto& q = GiNaC::ex_to<GiNaC::numeric>(e);
    if (r.is_rational() && q.is_rational() && !q.is_integer() && !r.is_zero()) {
      GiNaC::ex out = IntegerRadical(GiNaC::abs(r.numer()), q) * IntegerRadical(r.denom(), -q);
      if (r.is_negative()) out *= GiNaC::pow(GiNaC::ex(-1), e);
      return out;
    }
  }
  return GiNaC::pow(base, e);
}

// Builds GiNaC expressions from parse trees, one symbol per letter across both sides.
class Builder {
 public:
  GiNaC::ex Build(const std::vector<Node>& nodes, int i) {
    const Node& n = nodes[i];
    auto build = [&](int k) { return Build(nodes, k); };
    switch (n.kind) {
      case Kind::kNum:
        return GiNaC::ex(GiNaC::numeric(n.digits.c_str())) /
               GiNaC::pow(GiNaC::ex(10), GiNaC::ex(n.scale));
      case Kind::kVar:
        return Symbol(n.var);
      case Kind::kImag:
        return GiNaC::ex(GiNaC::I);
      case Kind::kPi:
        return GiNaC::Pi;
      case Kind::kNeg:
        return -build(n.a);
      case Kind::kAdd:
        return build(n.a) + build(n.b);
      case Kind::kSub:
        return build(n.a) - build(n.b);
      case Kind::kMul:
        return build(n.a) * build(n.b);
      case Kind::kDiv: {
        const GiNaC::ex denominator = build(n.b);
        if (denominator.is_zero()) throw Undefined();  // before GiNaC allocates (see Power)
        return build(n.a) / denominator;
      }
      case Kind::kPow:
        return Power(build(n.a), build(n.b));
      case Kind::kRoot: {
        const GiNaC::ex index = build(n.a);
        if (index.is_zero()) throw Undefined();
        return Power(build(n.b), 1 / index);
      }
    }
    return 0;
  }

 private:
  GiNaC::ex Symbol(char c) {
    for (const auto& [letter, s] : symbols_) {
      if (letter == c) return s;
    }
    symbols_.emplace_back(c, GiNaC::symbol(std::string(1, c)));
    return symbols_.back().second;
  }

  std::vector<std::pair<char, GiNaC::symbol>> symbols_;
};

// Whether `e` holds a floating-point number anywhere (GiNaC evaluates some numeric powers, e.g.
// of complex bases, in floating point): such a result is not exact.
bool HasFloat(const GiNaC::ex& e) {
  if (GiNaC::is_a<GiNaC::numeric>(e)) return !GiNaC::ex_to<GiNaC::numeric>(e).is_crational();
  for (size_t k = 0; k < e.nops(); ++k) {
    if (HasFloat(e.op(k))) return true;
  }
  return false;
}

std::mutex& GinacMutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::optional<bool> SymbolicallyEqual(std::string_view a, std::string_view b) {
  Parser pa(a);
  Parser pb(b);
  const int ra = pa.Parse();
  const int rb = pb.Parse();
  if (ra < 0 || rb < 0) return std::nullopt;
  const auto ca = Estimate(pa.nodes(), ra);
  const auto cb = Estimate(pb.nodes(), rb);
  if (!ca || !cb || ca->terms + cb->terms > kSymbolicMaxTerms) return std::nullopt;
  std::lock_guard<std::mutex> lock(GinacMutex());
  try {
    Builder builder;
    const GiNaC::ex x = builder.Build(pa.nodes(), ra);
    const GiNaC::ex y = builder.Build(pb.nodes(), rb);
    if (HasFloat(x) || HasFloat(y)) return std::nullopt;
    const GiNaC::ex d = GiNaC::normal(GiNaC::expand(x - y));
    if (HasFloat(d)) return std::nullopt;
    if (d.is_zero()) return true;
    if (GiNaC::is_a<GiNaC::numeric>(d)) return false;  // an exact non-zero number
    return std::nullopt;
  } catch (...) {  // division by zero, 0^-1, and the like
    return std::nullopt;
  }
}

}  // namespace pipette::scorers
