#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette models inspect|synth|quantize|import-llama2c`: read a GGUF header, write a synthetic
// model of a real architecture's shape, and prepare model files with llama.cpp's tools.
// Exit status: 2 for bad input (missing or invalid files, unknown names), 1 when a tool or a write
// fails after the inputs were accepted.
void AddModelsCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
