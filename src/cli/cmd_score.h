#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette score --eval math_500|gpqa_diamond --completions FILE [--data-dir DIR]`: scores JSON
// Lines {"id", "completion"} (id = the data set's upstream sample id, optionally "#k" for the
// k-th attempt) with the deterministic scorers (pipette/scorers.h) and prints accuracy and the
// unparsed rate; with --json also `samples: [{id, extracted, method, correct}]`.
void AddScoreCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
