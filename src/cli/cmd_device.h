#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace pipette::cli {

// `pipette device`: the fingerprint of this machine (DESIGN.md 4.6) as a table, or with --json
// the record's `device` block plus memory_bandwidth_bytes_per_s from the cache (null if never
// probed).
// `pipette device probe [--threads N] [--runs K] [--size-mib M]`: measures memory bandwidth with
// the STREAM-like triad (platform/bandwidth.h), caches it for this device id and prints it in
// GB/s (1e9 bytes/s), or with --json the measurement, the device id and the cache file.
// Exit status: 2 for bad values (threads, runs or size out of range for this machine), 1 when
// the measurement or the cache write fails.
void AddDeviceCommand(CLI::App& app, CliContext& ctx);

}  // namespace pipette::cli
