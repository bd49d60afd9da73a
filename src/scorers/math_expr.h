// Numeric equivalence of normalized LaTeX answers (internal to src/scorers): an expression is
// parsed (numbers, one-letter variables, i, \pi, + - * / ^, \frac, \sqrt, \sqrt[n], \cdot,
// \times, parentheses, implicit products) and evaluated in complex arithmetic at fixed points;
// lists, tuples, intervals, matrices (as tuples), "\pm" and equations are compared element-wise.
#pragma once

#include <optional>
#include <string_view>

namespace pipette::scorers {

// Whether `a` and `b` (normalized, no spaces) denote the same value; nullopt when either cannot
// be parsed. Relative tolerance 1e-9, so rounded decimals of irrational values are not equal.
// Each scalar pair the numeric check does not call different is then compared exactly with
// GiNaC (math_symbolic.h), whose verdict, when it has one, wins.
std::optional<bool> NumericallyEqual(std::string_view a, std::string_view b);

}  // namespace pipette::scorers
