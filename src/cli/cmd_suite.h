// `pipette suite run FILE [--dry-run]`: runs a suite (include/pipette/suite.h) with a progress
// bar on a terminal (plain lines otherwise) and lists failed cells at the end. Exit status 0 when
// every cell is ok (measured now or stored before), 1 when a cell failed or could not run, 2 for a
// bad suite file, 130 after Ctrl-C (the current cell is stored as interrupted; rerun to resume).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

void AddSuiteCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
