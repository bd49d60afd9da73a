#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette results list|show|export`: read the results store (--store, default
// DefaultStorePath()).
//   list [filters] [--limit N]      newest first: unique short id, start time, status, benchmark,
//                                   model file, quant, threads, headline median (--json: rows)
//   show ID                         one result by id or unique id prefix: a summary, or with
//                                   --json the full record
//   export [--format jsonl|csv] [-o FILE] [filters]   all matching records (default stdout;
//                                   a FILE is written whole or not at all)
// Filters: --benchmark ID, --model SHA256-PREFIX|FILE-NAME-PART, --quant Q, --status ok|failed,
// --device ID-PREFIX, --runtime NAME, --label L, --since RFC3339.
// A store file that does not exist yet reads as empty. Exit status: 2 for an unknown or
// ambiguous id, 1 when the store cannot be read or the export cannot be written.
void AddResultsCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
