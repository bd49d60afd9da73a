#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette diff A B`: why two results differ, in the order one should look (DESIGN.md 6):
// inputs (benchmark, model hash, prompt hash), environment (runtime version and commit, OS,
// kernel, governor, device), parameters (runtime settings), tooling (warnings, fallbacks), then
// the metrics. The first line names the first layer that differs.
void AddDiffCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
