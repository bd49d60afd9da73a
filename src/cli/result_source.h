// Where the commands that read results find them: the local results store (--store), or a
// `pipette serve` read over its public API (--server URL: GET /api/results, /api/records,
// /api/results/<id>; docs/fleet-protocol.md). One interface, so `results list|show|export`,
// compare, diff, select and report read a server as they read a local store (issue 10, item 5).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_context.h"
#include "pipette/status.h"
#include "pipette/store.h"

namespace pipette::cli {

class ResultSource {
 public:
  virtual ~ResultSource() = default;
  // The store's path or the server's URL, for messages ("no results match in <where>").
  virtual const std::string& where() const = 0;
  // Rows matching `filter`, newest first (filter.limit caps them; 0: all).
  virtual Result<std::vector<ResultRow>> List(const ResultFilter& filter) = 0;
  // Full records matching `filter`, newest first.
  virtual Result<std::vector<nlohmann::json>> Records(const ResultFilter& filter) = 0;
  // The record whose result_id is `id_or_prefix` or starts with it; nullopt when none. Errors:
  // a prefix of several results, the server or store failing (one line each).
  virtual Result<std::optional<nlohmann::json>> Get(const std::string& id_or_prefix) = 0;
};

// Adds `--server URL` to a command that reads results (kept in ctx.server).
void AddServerOption(CLI::App* cmd, CliContext& ctx);

// ctx.server given: that server (a URL that is not http://HOST:PORT, or --store given too, is bad
// input; the server is not contacted yet). Else the local store as OpenStoreToRead opens it.
// nullptr after the error was reported (ctx.exit_code set).
std::unique_ptr<ResultSource> OpenSourceToRead(CliContext& ctx);

}  // namespace pipette::cli
