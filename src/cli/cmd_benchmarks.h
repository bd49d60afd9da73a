// `pipette benchmarks`: browse the benchmark catalog (DESIGN.md 4.1).
//
//   pipette benchmarks list [--type T] [--dir DIR]   table of id, type, P, D (JSON array with
//   --json) pipette benchmarks show ID [--dir DIR]           one definition (JSON object with
//   --json)
//
// The catalog is the built-in ladder plus the TOML definitions in DIR, or, without --dir, in
// DefaultUserBenchmarkDir() when that directory exists. `show` also accepts any well-formed id
// that is not in the catalog (source "pattern"). Errors (unknown id or type, a bad definition
// file, a missing --dir) are reported with ReportError and exit status kExitBadInput.
#pragma once

#include "cli/cli_context.h"

namespace CLI {
class App;
}  // namespace CLI

namespace pipette::cli {

// Registers the `benchmarks` subcommand on `app`. `ctx` must outlive app.parse(); the subcommand
// reads ctx.json when it runs and sets ctx.exit_code on error.
void AddBenchmarksCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
