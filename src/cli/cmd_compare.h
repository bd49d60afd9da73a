#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette compare A B`: per metric the ratio B/A of the medians, a two-sided Mann-Whitney U test
// on the raw samples, and a verdict (faster/slower, better/worse, or no significant difference)
// that needs both p < --alpha and a ratio outside the noise band (DESIGN.md 6).
void AddCompareCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
