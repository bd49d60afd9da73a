// What the commands that read the results store share: its path, opening it without creating
// it, and the --since filter.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli/cli_context.h"
#include "pipette/store.h"

namespace pipette::cli {

// --store, else DefaultStorePath().
std::string StorePath(const CliContext& ctx);

// The store, opened for a command that only reads it: a missing file is bad input ("no results
// store at PATH; check --store ..."), not a new empty store. On an error it is reported (exit 2
// for a missing file, 1 otherwise) and nullptr returned.
std::unique_ptr<ResultStore> OpenStoreToRead(CliContext& ctx);

// Adds the filters that select configurations' results: --model, --quant, --device, --runtime,
// --label and --since (check it with CheckSince). --benchmark, --status and --limit differ
// between commands and are added by each.
void AddConfigurationFilters(CLI::App* cmd, ResultFilter& filter);

// False, after reporting "--since: '<value>' is not a date or RFC 3339 UTC time (...)" (exit 2),
// when `cmd` was given a --since that ParseSince refuses (an empty one included).
bool CheckSince(const CLI::App& cmd, const ResultFilter& filter, CliContext& ctx);

}  // namespace pipette::cli
