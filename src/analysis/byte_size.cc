#include "analysis/byte_size.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace pipette::analysis {

Result<double> ParseByteSize(std::string_view text) {
  const Error bad = MakeError(fmt::format("'{}' is not a size: give bytes or a number with a "
                                          "unit (B, KB, MB, GB, KiB, MiB, GiB), e.g. 12MiB",
                                          text));
  std::string s;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) {
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  size_t digits = 0;
  while (digits < s.size() && (std::isdigit(static_cast<unsigned char>(s[digits])) || s[digits] == '.')) {
    ++digits;
  }
  if (digits == 0) return bad;
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + digits, value);
  if (ec != std::errc() || end != s.data() + digits || !std::isfinite(value)) return bad;
  const std::string unit = s.substr(digits);
  struct Unit {
    const char* name;
    double factor;
  };
  static constexpr Unit kUnits[] = {
      {"b", 1},
      {"kb", 1e3},       {"mb", 1e6},       {"gb", 1e9},       {"tb", 1e12},
      {"kib", 1024.0},   {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0},
      {"k", 1024.0},     {"m", 1048576.0},  {"g", 1073741824.0}, {"t", 1099511627776.0}};
  if (unit.empty()) {  // 11.5 bytes is never meant: a memory limit of 11.5 was 11.5 MiB
    std::string number(text);
    while (!number.empty() && std::isspace(static_cast<unsigned char>(number.back()))) number.pop_back();
    // A small number is meant in MiB or GiB, a large one in bytes.
    if (value >= 1024) {
      return MakeError(fmt::format("'{}' has no unit: did you mean {}B (bytes)? (or give KB, MB, "
                                   "GB, KiB, MiB or GiB, e.g. 12MiB)",
                                   text, number));
    }
    return MakeError(fmt::format("'{}' has no unit: did you mean {}MiB? (give B, KB, MB, GB, KiB, "
                                 "MiB or GiB, e.g. 12MiB, or {}B for bytes)",
                                 text, number, number));
  }
  for (const Unit& u : kUnits) {
    if (unit != u.name) continue;
    if (!std::isfinite(value * u.factor)) return bad;  // beyond any double
    return value * u.factor;
  }
  return bad;
}

Result<double> ParseNonNegative(std::string_view text, std::string_view what) {
  const Error bad = MakeError(fmt::format("'{}' is not a finite number >= 0; give {}", text, what));
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text.front())) ||
                        text.front() == '.')) {
    return bad;  // a sign, a space, "nan", "inf" or nothing
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
    return bad;
  }
  return value;
}

}  // namespace pipette::analysis
