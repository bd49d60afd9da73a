// `pipette worker` (docs/fleet-protocol.md; pipette/worker.h): pull jobs from a `pipette serve`
// and run them on this device until interrupted.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// Adds: worker --server URL [--labels a,b] [--label NAME] [--models DIR ...] [--identity FILE]
//   [--max-jobs N] [--once] [--logs DIR] [--outbox DIR] [--lease SECONDS] (and the global
//   --store). One line per event on stdout.
void AddWorkerCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
