// The pull worker of the fleet (DESIGN.md 8; docs/fleet-protocol.md): `pipette worker`.
//
// A loop on one device: deliver what waits in the outbox, claim a job this device can run (its
// labels, arch, memory, runtimes and model files), heartbeat the lease while the cell runs (with
// the harness, exactly as `pipette run`), store the record in the local results store, then hand
// it to the outbox, which submits it as the job's result. No work: back off (1 s doubling to
// 30 s). The server unreachable: say so once per try and retry forever; results wait in the
// outbox. SIGINT/SIGTERM: the running cell is abandoned (its lease expires and another device
// takes the job) and the loop ends.
//
// Not thread-safe: one RunWorker per process (it installs the interrupt handler).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipette/fleet_client.h"
#include "pipette/status.h"

namespace pipette {

struct WorkerOptions {
  std::string server_url;                // "http://HOST:PORT" or "https://HOST:PORT"
  FleetClientOptions client;             // how it is reached (the CA file of a private CA)
  std::string identity_path;             // the device's key pair; empty: DefaultIdentityPath()
  std::vector<std::string> labels;       // capability labels offered in each claim
  std::vector<std::string> models_dirs;  // folders scanned for *.gguf (not recursive)
  std::string store_path;                // local results store; empty: DefaultStorePath()
  std::string logs_dir;       // each cell's runtime log; empty: worker-logs beside the store
  std::string outbox_dir;     // empty: DefaultOutboxDir(server_url)
  std::string driver_path;    // the llamacpp driver; empty: beside pipette (or, with `device`,
                              // the device build for its architecture)
  // The device this worker measures (DESIGN.md 8a): "local", or ssh://... / adb://... for a board
  // or a phone driven from this host (one worker, and so one job at a time, per device; give each
  // its own --identity). Its arch and memory are what the worker offers in claims.
  std::string device = "local";
  std::string label;          // device label recorded when a job carries no label_note
  double lease_s = 60;        // the server's lease; heartbeats go every lease_s / 3
  double max_backoff_s = 30;  // the longest wait between claims when there is no work
  int max_jobs = 0;           // stop after this many jobs (done or failed); 0: never
  bool once = false;          // stop when there is no job (after delivering the outbox)
};

// What the loop reports, one line each (the CLI prints them).
struct WorkerHooks {
  std::function<void(const std::string&)> line;
};

// Device capabilities as a claim body: {labels, arch (uname -m), memory_bytes (MemTotal),
// runtimes (RuntimeNames()), models [sha256..]}: this machine's arch and memory, or `arch` and
// `memory_bytes` when given (another device's).
nlohmann::json WorkerCapabilities(const std::vector<std::string>& labels,
                                  const std::map<std::string, std::string>& models,
                                  const std::string& arch = "", int64_t memory_bytes = 0);

// The *.gguf files directly in `dirs`, by SHA-256 (through `hash`: the store's cache). A folder
// that does not exist or a file that cannot be read is an Error naming it.
Result<std::map<std::string, std::string>> ScanModels(
    const std::vector<std::string>& dirs,
    const std::function<Result<std::string>(const std::string&)>& hash);

// Runs the loop until max_jobs, once with no work, or an interrupt. Errors: the identity, the
// store, the outbox or the model folders cannot be used (nothing else stops the loop).
// Returns the number of jobs this worker ran.
Result<int> RunWorker(const WorkerOptions& options, const WorkerHooks& hooks = {});

}  // namespace pipette
