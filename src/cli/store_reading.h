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
// store at PATH (...); check the store path (--store)"), not a new empty store. On an error it is reported (exit 2
// for a missing file, 1 otherwise) and nullptr returned.
std::unique_ptr<ResultStore> OpenStoreToRead(CliContext& ctx);

// Adds the filters every command that reads results takes (one set, issue 7): --benchmark,
// --model, --quant, --device, --runtime, --label (each repeatable, values alternatives),
// --threads, --cpus and --setting KEY=VALUE (runtime.settings; ResultFilter::settings), --since
// (check it with CheckSince). --status and --limit are `results`' own.
void AddConfigurationFilters(CLI::App* cmd, ResultFilter& filter);

// The filters of `f` as flags, e.g. "--quant Q8_0 --quant Q4_0 --setting threads=1"; "" for none.
std::string FilterText(const ResultFilter& f);

// False, after reporting "--since: '<value>' is not a date or RFC 3339 UTC time (...)" (exit 2),
// when `cmd` was given a --since that ParseSince refuses (an empty one included).
bool CheckSince(const CLI::App& cmd, const ResultFilter& filter, CliContext& ctx);

}  // namespace pipette::cli
