#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette report [-o FILE] [--format html|md|csv|jsonl] [--title T] [filters]`: the stored results
// (--store) that match the filters as a report (include/pipette/report.h says what it contains).
//   html   one self-contained file: inline CSS and SVG charts, no scripts, nothing fetched
//   md     the same sections as Markdown tables, for pasting into a review
//   csv, jsonl   the matching records as `results export` writes them (ExportCsv / ExportJsonl)
// Without -o the report goes to stdout; a FILE is written whole or not at all (a temporary file
// renamed into place) and is checked first like every -o (platform/output_path.h).
// Filters, as `results list`: --benchmark ID, --model SHA256-PREFIX|FILE-NAME-PART, --quant Q,
// --device ID-PREFIX, --runtime NAME, --label L, --since RFC3339.
// No matching result (or no store yet): prints "no results match in STORE: nothing to report",
// writes nothing and exits 0, as `results list` does. Exit status: 2 bad arguments or -o path,
// 1 the store cannot be read or FILE cannot be written.
void AddReportCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
