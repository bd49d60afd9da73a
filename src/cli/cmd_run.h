#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette run --model FILE --benchmark ID [...]`: one cell, stored, printed (DESIGN.md 4.2).
void AddRunCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
