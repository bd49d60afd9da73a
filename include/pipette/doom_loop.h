// The doom-loop detector of quality-eval generation (../shared/docs/evals.md 2): quantized models
// on slow devices can loop until max tokens and waste many minutes per sample, so generation is
// stopped once the text's tail repeats in one of six ways. The defaults are the published
// protocol's; each detector can be tuned or switched off, and the options are recorded in every
// eval result (`eval.doom_loop`).
//
// Pure functions of the text; thread-safe. The cost of one check is bounded by the windows below
// (a few million byte comparisons at most), independent of the text's length.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/status.h"

namespace pipette {

struct DoomLoopOptions {
  // Nothing is checked below this many bytes of generated text.
  int min_bytes = 8192;
  // exact_block: the last `block_copies` x p bytes are copies of one p-byte block,
  // block_min_period <= p, within the last block_window bytes.
  bool exact_block = true;
  int block_window = 4096, block_min_period = 32, block_copies = 3;
  // repeated_line: the last `line_repeats` lines are the same normalized line (digit runs
  // collapsed, lower case, trimmed) of at least line_min_chars characters.
  bool repeated_line = true;
  int line_repeats = 6, line_min_chars = 12;
  // line_cycle: the last cycle_copies x k lines repeat a cycle of k normalized lines,
  // cycle_min_lines <= k <= cycle_max_lines (not all one line).
  bool line_cycle = true;
  int cycle_min_lines = 2, cycle_max_lines = 16, cycle_copies = 3;
  // long_block: the last long_block_bytes bytes occur earlier within the last long_window bytes.
  bool long_block = true;
  int long_block_bytes = 512, long_window = 8192;
  // counter_lines: the last counter_lines lines are short (at most 120 bytes) and differ only by
  // a trailing integer.
  bool counter = true;
  int counter_lines = 40;
  // tail_repeat: the last tail_bytes bytes occur at least tail_copies times within the last
  // tail_window bytes.
  bool tail_repeat = true;
  int tail_bytes = 64, tail_copies = 4, tail_window = 16384;
};

// The detector names, in the order they are tried (the cheap byte checks first): exact_block,
// long_block, repeated_line, line_cycle, counter_lines, tail_repeat.
const std::vector<std::string>& DoomLoopDetectorNames();

// The name of the first detector that fires on `text`, or nullopt (also below min_bytes).
std::optional<std::string> DetectDoomLoop(std::string_view text, const DoomLoopOptions& options);

// Applies one "KEY=VALUE" tuning: a numeric option by its name above (min_bytes=256,
// line_repeats=4), or a detector switched with NAME=on|off (line_cycle=off). Errors name the key
// and list the known ones, or say what value is expected (a positive integer, on or off).
Status SetDoomLoopOption(DoomLoopOptions& options, std::string_view key_value);

// The options as recorded: every switch and number by its name.
nlohmann::json ToJson(const DoomLoopOptions& options);

}  // namespace pipette
