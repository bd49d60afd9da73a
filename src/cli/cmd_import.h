#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette import llama-bench FILE`: llama-bench's -o json, jsonl or sql output into the store as
// results of the llamacpp-stock runtime (pipette/import.h), all rows or none.
void AddImportCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
