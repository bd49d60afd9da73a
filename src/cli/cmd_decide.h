// `pipette decide FILE.toml`: the decision funnel (include/pipette/decide.h, docs/deciding.md):
// screen, measure and stabilize a suite's configurations against a decision's limits and
// objectives, resumable (Ctrl-C, then the same command). Exit status 0 with a chosen
// configuration, 1 when none qualifies or a stage could not run, 2 for a bad decision file or a
// state that does not match it, 130 after Ctrl-C.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

void AddDecideCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
