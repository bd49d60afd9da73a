#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette serve`: the fleet server (pipette/server.h, docs/fleet-protocol.md) and its operator
// commands, all over one fleet database (--db PATH|postgresql://URL, default
// DefaultFleetDbPath()):
//   serve [--listen HOST:PORT] [--lease S] [--max-body BYTES] [--rate-limit N] [--threads N]
//                                  serves until SIGTERM or SIGINT (requests in flight finish)
//   serve keys create [--labels a,b] [--expires-days 90]
//                                  prints a single-use pre-authorization token once (only its
//                                  digest is stored)
//   serve clients list             registered clients (--json: as GET /api/me shows one)
//   serve clients approve|revoke ID
// Exit status: 2 for bad arguments (a listen address, an unknown client), 1 when the database
// cannot be opened or the address cannot be bound.
void AddServeCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
