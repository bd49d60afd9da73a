// What the pipette subcommands share: global options and the exit status to return.
#pragma once

#include <string>

#include "pipette/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace pipette::cli {

// Exit statuses of the pipette command (documented in docs/reference.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // a measurement or operation failed (result stored)
inline constexpr int kExitBadInput = 2;  // bad arguments or input files; nothing was measured

struct CliContext {
  std::string store_path;  // --store; empty means DefaultStorePath()
  bool json = false;       // --json: print data as JSON instead of a table
  std::string server;      // --server URL of the commands that read results (result_source.h)
  std::string ca_file;     // --ca-file: the CA that signs an https:// fleet server's certificate
  int exit_code = kExitOk;
  const CLI::App* app = nullptr;  // the pipette command: ReportError adds the flags of the
                                  // subcommand being run (flag_names.h)
};

// Prints "pipette: error: <message>" to stderr, the names of settings and options in the message
// followed by the running subcommand's flags for them (WithFlags, flag_names.h); sets
// ctx.exit_code and returns it.
int ReportError(CliContext& ctx, const Error& error, int exit_code = kExitBadInput);

}  // namespace pipette::cli
