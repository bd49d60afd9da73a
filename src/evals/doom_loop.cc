#include "pipette/doom_loop.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

namespace pipette {
namespace {

// The lines of `text` that are complete (a generated line still growing is not judged) and not
// blank, trimmed.
std::vector<std::string_view> CompleteLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string_view::npos; nl = text.find('\n', start)) {
    std::string_view line = text.substr(start, nl - start);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) {
      line.remove_prefix(1);
    }
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.remove_suffix(1);
    }
    if (!line.empty()) lines.push_back(line);
    start = nl + 1;
  }
  return lines;
}

// Lower case, every run of digits as one '0'.
std::string Normalize(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (std::isdigit(c)) {
      if (i == 0 || !std::isdigit(static_cast<unsigned char>(line[i - 1]))) out += '0';
      continue;
    }
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

std::string_view Tail(std::string_view text, size_t bytes) {
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

bool ExactBlock(std::string_view text, const DoomLoopOptions& o) {
  const std::string_view w = Tail(text, static_cast<size_t>(o.block_window));
  const size_t copies = static_cast<size_t>(std::max(o.block_copies, 2));
  const size_t n = w.size();
  for (size_t p = static_cast<size_t>(std::max(o.block_min_period, 1)); p * copies <= n; ++p) {
    const char* last = w.data() + n - p;
    bool all = true;
    for (size_t k = 2; k <= copies && all; ++k) all = std::memcmp(last, w.data() + n - k * p, p) == 0;
    if (all) return true;
  }
  return false;
}

bool RepeatedLine(const std::vector<std::string>& norm, const DoomLoopOptions& o) {
  const size_t r = static_cast<size_t>(std::max(o.line_repeats, 2));
  if (norm.size() < r) return false;
  const std::string& last = norm.back();
  if (last.size() < static_cast<size_t>(o.line_min_chars)) return false;
  return std::all_of(norm.end() - static_cast<long>(r), norm.end(),
                     [&](const std::string& l) { return l == last; });
}

bool LineCycle(const std::vector<std::string>& norm, const DoomLoopOptions& o) {
  const size_t copies = static_cast<size_t>(std::max(o.cycle_copies, 2));
  for (size_t k = static_cast<size_t>(std::max(o.cycle_min_lines, 2));
       k <= static_cast<size_t>(o.cycle_max_lines) && k * copies <= norm.size(); ++k) {
    const size_t base = norm.size() - k * copies;
    bool same = true;
    for (size_t i = k; i < k * copies && same; ++i) same = norm[base + i] == norm[base + i % k];
    bool varied = false;
    for (size_t i = 1; i < k && !varied; ++i) varied = norm[base + i] != norm[base];
    if (same && varied) return true;
  }
  return false;
}

bool LongBlock(std::string_view text, const DoomLoopOptions& o) {
  const std::string_view w = Tail(text, static_cast<size_t>(o.long_window));
  const size_t b = static_cast<size_t>(std::max(o.long_block_bytes, 1));
  if (w.size() < 2 * b) return false;
  const std::string_view block = w.substr(w.size() - b);
  return w.substr(0, w.size() - b).find(block) != std::string_view::npos;
}

// "Step 12: ..." lines that differ only by their trailing integer.
bool CounterLines(const std::vector<std::string_view>& lines, const DoomLoopOptions& o) {
  const size_t n = static_cast<size_t>(std::max(o.counter_lines, 2));
  if (lines.size() < n) return false;
  std::string_view stem;
  for (size_t i = lines.size() - n; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    if (l.size() > 120) return false;
    size_t cut = l.size();
    while (cut > 0 && std::isdigit(static_cast<unsigned char>(l[cut - 1]))) --cut;
    if (cut == l.size()) return false;
    const std::string_view s = l.substr(0, cut);
    if (i == lines.size() - n) {
      stem = s;
    } else if (s != stem) {
      return false;
    }
  }
  return true;
}

bool TailRepeat(std::string_view text, const DoomLoopOptions& o) {
  const std::string_view w = Tail(text, static_cast<size_t>(o.tail_window));
  const size_t b = static_cast<size_t>(std::max(o.tail_bytes, 1));
  if (w.size() < b) return false;
  const std::string_view tail = w.substr(w.size() - b);
  int count = 0;
  for (size_t at = w.find(tail); at != std::string_view::npos; at = w.find(tail, at + 1)) {
    if (++count >= o.tail_copies) return true;
  }
  return false;
}

struct IntOption {
  const char* name;
  int DoomLoopOptions::*field;
};
constexpr IntOption kInts[] = {
    {"min_bytes", &DoomLoopOptions::min_bytes},
    {"block_window", &DoomLoopOptions::block_window},
    {"block_min_period", &DoomLoopOptions::block_min_period},
    {"block_copies", &DoomLoopOptions::block_copies},
    {"line_repeats", &DoomLoopOptions::line_repeats},
    {"line_min_chars", &DoomLoopOptions::line_min_chars},
    {"cycle_min_lines", &DoomLoopOptions::cycle_min_lines},
    {"cycle_max_lines", &DoomLoopOptions::cycle_max_lines},
    {"cycle_copies", &DoomLoopOptions::cycle_copies},
    {"long_block_bytes", &DoomLoopOptions::long_block_bytes},
    {"long_window", &DoomLoopOptions::long_window},
    {"counter_lines", &DoomLoopOptions::counter_lines},
    {"tail_bytes", &DoomLoopOptions::tail_bytes},
    {"tail_copies", &DoomLoopOptions::tail_copies},
    {"tail_window", &DoomLoopOptions::tail_window},
};
struct Switch {
  const char* name;
  bool DoomLoopOptions::*field;
};
constexpr Switch kSwitches[] = {
    {"exact_block", &DoomLoopOptions::exact_block}, {"repeated_line", &DoomLoopOptions::repeated_line},
    {"line_cycle", &DoomLoopOptions::line_cycle},   {"long_block", &DoomLoopOptions::long_block},
    {"counter_lines", &DoomLoopOptions::counter},   {"tail_repeat", &DoomLoopOptions::tail_repeat},
};

}  // namespace

const std::vector<std::string>& DoomLoopDetectorNames() {
  static const std::vector<std::string> names = {"exact_block", "long_block",   "repeated_line",
                                                 "line_cycle",  "counter_lines", "tail_repeat"};
  return names;
}

std::optional<std::string> DetectDoomLoop(std::string_view text, const DoomLoopOptions& o) {
  if (text.size() < static_cast<size_t>(std::max(o.min_bytes, 0))) return std::nullopt;
  if (o.exact_block && ExactBlock(text, o)) return "exact_block";
  if (o.long_block && LongBlock(text, o)) return "long_block";
  const std::vector<std::string_view> lines = CompleteLines(Tail(text, 16384));
  std::vector<std::string> norm;
  norm.reserve(lines.size());
  for (std::string_view l : lines) norm.push_back(Normalize(l));
  if (o.repeated_line && RepeatedLine(norm, o)) return "repeated_line";
  if (o.line_cycle && LineCycle(norm, o)) return "line_cycle";
  if (o.counter && CounterLines(lines, o)) return "counter_lines";
  if (o.tail_repeat && TailRepeat(text, o)) return "tail_repeat";
  return std::nullopt;
}

Status SetDoomLoopOption(DoomLoopOptions& o, std::string_view kv) {
  const size_t eq = kv.find('=');
  std::string known;
  for (const auto& s : kSwitches) known += std::string(known.empty() ? "" : ", ") + s.name;
  for (const auto& i : kInts) {
    if (std::string_view(i.name) != "counter_lines") known += std::string(", ") + i.name;
  }
  if (eq == std::string_view::npos || eq == 0) {
    return MakeError("doom-loop option '" + std::string(kv) +
                     "' is not KEY=VALUE (e.g. min_bytes=256 or line_cycle=off)");
  }
  const std::string_view key = kv.substr(0, eq), value = kv.substr(eq + 1);
  if (value == "on" || value == "off") {
    for (const auto& s : kSwitches) {
      if (key == s.name) {
        o.*s.field = value == "on";
        return Status::Ok();
      }
    }
    return MakeError("doom-loop option '" + std::string(key) + "' is not a detector; the detectors: " +
                     "exact_block, long_block, repeated_line, line_cycle, counter_lines, tail_repeat");
  }
  for (const auto& i : kInts) {
    if (key != i.name) continue;
    int v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 1 || v > (1 << 24)) {
      return MakeError("doom-loop option " + std::string(key) + " = '" + std::string(value) +
                       "': give a positive integer (at most 16777216)");
    }
    if (key == "min_bytes" && v < 1) v = 1;
    o.*i.field = v;
    return Status::Ok();
  }
  return MakeError("unknown doom-loop option '" + std::string(key) + "'; known: " + known);
}

nlohmann::json ToJson(const DoomLoopOptions& o) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& i : kInts) j[i.name] = o.*i.field;
  nlohmann::json on = nlohmann::json::object();
  for (const auto& s : kSwitches) on[s.name] = o.*s.field;
  j["detectors"] = on;
  return j;
}

}  // namespace pipette
