// Exact (computer-algebra) equivalence of normalized LaTeX answers with GiNaC (internal to
// src/scorers). The grammar is the numeric check's (math_expr.h): numbers (decimals exactly, as
// rationals), one-letter variables (symbols), i (the imaginary unit), \pi, + - * / ^, \frac,
// \sqrt, \sqrt[n], \cdot, \times, parentheses, implicit products; anything else (\infty, words,
// commas) is not comparable. Radicals of rational numbers are written over primes (sqrt(12) is
// 2*3^(1/2), sqrt(2/3) is 1/3*2^(1/2)*3^(1/2)) so that equal surds compare equal.
//
// Time limit per comparison: GiNaC cannot be interrupted, so the work is bounded before any of it
// starts. A side is refused ("not comparable", nullopt) when its normalized text exceeds
// kSymbolicMaxChars characters, its parse tree kSymbolicMaxNodes nodes or kSymbolicMaxDepth levels,
// a constant exponent or root index exceeds kSymbolicMaxExponent in magnitude, or the estimated
// size after expansion exceeds kSymbolicMaxTerms terms (both sides together; the terms of a
// product multiply, those of a t-term sum to the n-th power are C(n+t-1, t-1)) or any exact number
// kSymbolicMaxBits bits. Measured at the caps ((x+y)^{990}, (x+2y+3z)^{40}, 2^{10000}, quotients of
// 30th powers) one comparison takes at most about 25 ms; MATH answers take microseconds.
//
// GiNaC's reference counts are not thread-safe, so comparisons are serialized by one mutex.
#pragma once

#include <optional>
#include <string_view>

namespace pipette::scorers {

inline constexpr size_t kSymbolicMaxChars = 1000;
inline constexpr int kSymbolicMaxNodes = 400;
inline constexpr int kSymbolicMaxDepth = 64;
inline constexpr double kSymbolicMaxExponent = 10000;
inline constexpr double kSymbolicMaxTerms = 1000;
inline constexpr double kSymbolicMaxBits = 20000;

// Whether scalar expressions `a` and `b` (normalized, no spaces) are exactly equal: true when
// normal(expand(a - b)) is 0; false when a - b is exactly a non-zero (complex) rational number;
// nullopt when either side cannot be parsed, is over the caps, or the difference is some other
// expression (GiNaC did not decide, e.g. nested radicals).
std::optional<bool> SymbolicallyEqual(std::string_view a, std::string_view b);

}  // namespace pipette::scorers
