// ParseSince: the --since filter of every command that reads results (ResultFilter::since).
#include <cctype>
#include <string>

#include "pipette/store.h"

namespace pipette {
namespace {

bool Digits(const std::string& s, size_t at, size_t n) {
  if (at + n > s.size()) return false;
  for (size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

int Number(const std::string& s, size_t at, size_t n) { return std::stoi(s.substr(at, n)); }

int DaysIn(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

}  // namespace

Result<std::string> ParseSince(const std::string& since) {
  const Error bad = MakeError("'" + since +
                              "' is not a date or RFC 3339 UTC time (e.g. 2026-11-29 or "
                              "2026-11-29T10:00:00Z)");
  std::string s = since;
  // "YYYY-MM-DDTHH:MM:SS": the separator before each field, its offset and width, its range.
  struct Field {
    char separator;
    size_t at, width;
    int low, high;
  };
  static constexpr Field kFields[] = {{0, 0, 4, 0, 9999},    {'-', 5, 2, 1, 12},
                                      {'-', 8, 2, 1, 31},    {'T', 11, 2, 0, 23},
                                      {':', 14, 2, 0, 59},   {':', 17, 2, 0, 60}};
  int value[6] = {};
  size_t end = 0;  // where the complete fields end
  for (size_t f = 0; f < 6; ++f) {
    const Field& field = kFields[f];
    if (f > 0) {
      if (end == s.size()) break;  // a prefix ending after a complete field
      char& sep = s[end];
      if (field.separator == 'T' && sep == 't') sep = 'T';
      if (sep != field.separator) return bad;
    }
    if (!Digits(s, field.at, field.width)) return bad;
    value[f] = Number(s, field.at, field.width);
    if (value[f] < field.low || value[f] > field.high) return bad;
    end = field.at + field.width;
  }
  if (end >= 10 && value[2] > DaysIn(value[0], value[1])) return bad;
  if (end == 19 && end < s.size() && s[end] == '.') {  // fractional seconds: at least one digit
    size_t digits = end + 1;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
    if (digits == end + 1) return bad;
    end = digits;
  }
  if (end == 19 || (end > 19 && s[19] == '.')) {  // a complete time may end in Z (UTC)
    if (end + 1 == s.size() && (s[end] == 'Z' || s[end] == 'z')) s.resize(end);
  }
  if (end != s.size()) return bad;
  return s;
}

}  // namespace pipette
