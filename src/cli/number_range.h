// Range checks for numeric command-line options that say what was wrong in the user's terms
// ("'abc' is not a number; give one from 0 to 10"), where CLI::Range says "Value abc not in range
// 0.000000 to 10.000000" for text, fractions and out-of-range numbers alike.
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace pipette::cli {

// A validator accepting a number within [lo, hi]; a whole number when T is an integer type.
template <typename T>
CLI::Validator NumberIn(T lo, T hi) {
  static_assert(std::is_arithmetic_v<T>);
  const std::string range = fmt::format("from {} to {}", lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end == text.c_str() || *end != '\0' || !std::isfinite(v)) {
          return fmt::format("'{}' is not a number; give one {}", text, range);
        }
        if (std::is_integral_v<T> && v != std::floor(v)) {
          return fmt::format("{} is not a whole number; give one {}", text, range);
        }
        if (v < static_cast<double>(lo) || v > static_cast<double>(hi)) {
          return fmt::format("{} is out of range; give a number {}", text, range);
        }
        return {};
      },
      fmt::format("NUMBER {}", range));
}

}  // namespace pipette::cli
