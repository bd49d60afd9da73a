// `pipette plan submit|status` (docs/fleet-protocol.md "Plans and jobs"): a suite as a plan of
// jobs on a `pipette serve`, and its progress.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// Adds:
//   plan submit SUITE.toml --server URL [--requires-label L ...] [--requires-arch A]
//       [--expires-in HOURS] [--name N] [--identity FILE]
//       prints the plan id, the number of jobs and each job the server found no device for
//       (exit 1: server unreachable or failing; 2: bad suite or refused).
//   plan status ID --server URL [--identity FILE]
//       done/running/queued/failed/expired counts, per device, failures with their reasons.
void AddPlanCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
