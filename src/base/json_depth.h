// Nesting depth of JSON text from outside (request bodies, server replies, a device's answers,
// user files), checked before anything parses it. nlohmann::json parses without recursion, but
// dump(), comparison and copies of a value recurse once per level: 100,000 nested arrays (200 KB)
// overflow a thread's stack (issue 24). Header-only: the static device driver uses it too.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pipette {

// How deep outside JSON may nest: a result record is refused deeper than this (record_schema),
// and no message of pipette's protocols comes near it.
inline constexpr int kMaxJsonDepth = 64;

// The byte offset of the first '[' or '{' that opens level max_depth + 1, or nullopt when `text`
// never nests deeper. Brackets inside strings (escapes included) do not count. One linear pass,
// no recursion; text that is not JSON is left for the parser to refuse.
inline std::optional<size_t> JsonNestsDeeperThan(std::string_view text, int max_depth = kMaxJsonDepth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

// "nested deeper than 64 levels (byte 64)" for text JsonNestsDeeperThan refuses.
inline std::string TooDeeplyNested(size_t byte, int max_depth = kMaxJsonDepth) {
  return "nested deeper than " + std::to_string(max_depth) + " levels (byte " +
         std::to_string(byte) + ")";
}

// json::parse of outside text that is discarded (as text that is not JSON is) when it nests
// deeper than max_depth.
inline nlohmann::json ParseBoundedJson(std::string_view text, int max_depth = kMaxJsonDepth) {
  if (JsonNestsDeeperThan(text, max_depth)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace pipette
