#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette compare A B`: per metric the ratio B/A of the medians, a two-sided Mann-Whitney U test
// on the raw samples, and a verdict (faster/slower, better/worse, or no significant difference)
// that needs both p < --alpha and a ratio outside the noise band (DESIGN.md 6).
// `pipette compare --a FILTER --b FILTER`: the same for two groups of ok results (filter
// key=value[,key=value], keys quant, model, benchmark, runtime, device, label, threads), paired by
// benchmark id (the newest result of each benchmark on each side); benchmarks measured on one side
// only are listed as unpaired. --json prints the rows as data.
// Exit status: 2 for an unknown id, a failed result, a bad filter, a group that selects nothing,
// or ids and groups mixed; 1 when the store cannot be read.
void AddCompareCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
