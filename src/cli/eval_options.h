// The options of an eval cell on the command line (`run -b eval_...`): data directory, subset,
// repeats, sampling, the doom-loop detector's tuning and the checkpoint folder.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pipette/benchmark.h"
#include "pipette/evals.h"
#include "pipette/status.h"

namespace pipette::cli {

struct EvalArgs {
  EvalOptions options;
  std::vector<std::string> doom_loop;  // KEY=VALUE tunings, applied in order
};

// Adds --data-dir, --limit, --repeats, --temperature, --seed, --max-tokens, --parallel,
// --doom-loop and --checkpoint-dir to `cmd`.
void AddEvalOptions(CLI::App* cmd, EvalArgs& args);

// The options with the defaults filled in: the data directory from $PIPETTE_EVALS_DIR when not
// given, max_tokens from the benchmark's definition (8192 where it has none), the checkpoint
// folder "eval-checkpoints" beside the store at `store_path`, the doom-loop tunings applied.
// Errors: a doom-loop tuning SetDoomLoopOption refuses.
Result<EvalOptions> ResolveEvalArgs(const EvalArgs& args, const BenchmarkSpec& benchmark,
                                    const std::string& store_path);

}  // namespace pipette::cli
