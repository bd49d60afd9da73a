// Small byte-level text helpers shared by the scorers (ASCII case folding, searching, trimming).
// Internal to src/scorers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pipette::scorers {

inline char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
inline char AsciiUpper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; }
inline bool IsAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// `text` with ASCII letters lower-cased; same length, so positions carry over.
std::string AsciiLowerCopy(std::string_view text);

// `text` without leading and trailing white space.
std::string_view Trim(std::string_view text);

// The position of `needle` (lower case) in `text` compared case-insensitively, from `from`;
// npos when absent.
size_t FindNoCase(std::string_view text, std::string_view needle, size_t from = 0);

}  // namespace pipette::scorers
