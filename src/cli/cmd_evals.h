#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette evals fingerprint`: load the quality-eval data sets (MATH-500, GPQA Diamond, IFBench)
// from the user's data directory and print each one's sample count and fingerprint, and whether
// it is the published one (../shared/docs/evals.md 1). A fingerprint that differs is a warning on
// stderr; exit status 2 when a data file is missing or malformed (each error on one line).
void AddEvalsCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
