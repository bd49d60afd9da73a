#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette select [filters] [limits]` (DESIGN.md 6): groups the store's ok results into
// configurations (model file + quant + runtime + settings + device), applies the hard limits
// (--max-ttft MS, --max-latency MS, --max-memory SIZE, --min-decode-throughput TOK_S,
// --max-power W, --max-energy-per-token MJ, --max-quality-drop PP; each against the worst result of the configuration that has the metric),
// then ranks what passed on the Pareto front of decode speed, peak memory and quality. Prints the
// ranked table and then each excluded configuration with its reasons; --json prints the same as
// data. Filters as `results list`: --benchmark (repeatable), --model, --quant, --device, --label,
// --runtime, --since.
// Exit status: 0 when configurations were judged, also when none meets the limits (it says so);
// 1 when no ok result matches (nothing to choose from) or the store cannot be read; 2 for a bad
// limit (e.g. --max-memory 12parsecs).
void AddSelectCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
