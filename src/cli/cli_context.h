// What the pipette subcommands share: global options and the exit status to return.
#pragma once

#include <string>

#include "pipette/status.h"

namespace pipette::cli {

// Exit statuses of the pipette command (documented in README).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // a measurement or operation failed (result stored)
inline constexpr int kExitBadInput = 2;  // bad arguments or input files; nothing was measured

struct CliContext {
  std::string store_path;  // --store; empty means DefaultStorePath()
  bool json = false;       // --json: print data as JSON instead of a table
  int exit_code = kExitOk;
};

// Prints "pipette: error: <message>" to stderr, sets ctx.exit_code and returns it.
int ReportError(CliContext& ctx, const Error& error, int exit_code = kExitBadInput);

}  // namespace pipette::cli
