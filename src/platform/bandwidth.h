// Memory bandwidth of a device (DESIGN.md 4.6), measured with a STREAM-like triad and cached per
// device id, and the decode roofline that uses it (DESIGN.md 4.3).
//
// The kernel is STREAM's triad, a[i] = b[i] + s * c[i] over arrays of doubles. Bytes are counted
// as STREAM counts them: 3 arrays x 8 bytes x n per sweep (two reads and one write per element).
// The write-allocate read of a[] that ordinary stores cause is not counted, so the figure is
// comparable to STREAM's "Triad" column and to likwid-bench -t stream* ("MByte/s", 1e6 bytes/s).
// All rates are bytes per second (1 GB/s = 1e9 bytes/s); sizes are bytes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette {

struct BandwidthOptions {
  // Worker threads, each pinned to its own CPU and working on its own slice of the arrays.
  // 0: one per physical core that this process may run on (sched_getaffinity), which saturates
  // memory on most machines without SMT siblings competing for the same core.
  int threads = 0;
  // Timed runs after one untimed warm-up sweep; the best is reported (STREAM's convention: the
  // fastest run is the one least disturbed by the rest of the machine). 1 to 1000.
  int runs = 5;
  // Each timed run repeats the sweep over the arrays until it lasts about this long, seconds (the
  // count comes from the warm-up sweep's time). One 10 ms sweep on a shared or virtual machine
  // catches bursts and stalls; half a second is closer to what a long decode sustains. 0: one sweep
  // per run, as STREAM itself does. 0 to 60.
  double min_run_seconds = 0.5;
  // Working set of the three arrays together, bytes. 0: the minimum, MinimumBandwidthBytes().
  uint64_t total_bytes = 0;
  // Refuse total_bytes below MinimumBandwidthBytes(): a smaller set measures caches, not memory.
  // Tests turn this off to run in milliseconds; the CLI never does.
  bool enforce_minimum = true;
  // Pin each thread to one CPU (the first allowed CPU of a distinct physical core). Without it the
  // scheduler may move threads and first-touch placement loses its meaning on NUMA machines.
  bool pin_threads = true;
  // The CPUs threads may run on. Empty: this process's affinity mask (sched_getaffinity(2)).
  std::vector<int> allowed_cpus;
  // Where the topology, cache sizes and MemAvailable are read (tests: fixture folders).
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
};

// The working-set floor, bytes: each array at least 4x the total last-level cache (STREAM's rule)
// and the three arrays at least 256 MiB together. `llc_bytes` is TotalLastLevelCacheBytes().
uint64_t MinimumBandwidthBytes(uint64_t llc_bytes);

// What MeasureBandwidth will do, decided from the options and the machine before allocating.
struct BandwidthPlan {
  int threads = 0;
  std::vector<int> cpus;             // CPU of each thread when pinned; empty when not pinned
  uint64_t elements = 0;             // doubles per array (a multiple of 8 x threads)
  uint64_t array_bytes = 0;          // bytes per array = elements x 8
  uint64_t llc_bytes = 0;            // total last-level cache found, bytes (0 when unknown)
  uint64_t minimum_total_bytes = 0;  // MinimumBandwidthBytes(llc_bytes)
};

// Checks the options against the machine. Errors (one line naming the option and the limit):
// min_run_seconds outside 0..60; threads < 0 or above the CPUs this process may use; runs
// outside 1..1000; total_bytes below the minimum (when enforced) or above 80% of MemAvailable (it
// would swap and measure the disk).
Result<BandwidthPlan> PlanBandwidth(const BandwidthOptions& options);

struct BandwidthResult {
  double bytes_per_s = 0;  // best of the runs, bytes/s (STREAM triad counting, see above)
  int threads = 0;
  size_t array_bytes = 0;               // bytes of each of the three arrays
  int runs = 0;                         // timed runs
  int sweeps = 1;                       // sweeps over the three arrays in each timed run
  std::vector<double> run_bytes_per_s;  // every timed run, in order, bytes/s
  std::string method = "stream-triad/1";
  std::vector<int> cpus;    // CPU each thread ran on; empty when not pinned
  std::string measured_at;  // RFC 3339 UTC
};

// Plans (see PlanBandwidth), allocates the three arrays, lets each thread first-touch its slice
// (so pages land on that thread's NUMA node), runs one untimed sweep and then `runs` timed runs
// of `sweeps` sweeps each. Threads wait for each other at a spinning barrier before and after
// every run; a run's time goes from the first thread's start to the last thread's end. Takes
// about runs x min_run_seconds plus the first touch; uses 3 x array_bytes of memory, freed on
// return. Errors: PlanBandwidth's, allocation failure, and a wrong triad result (a broken build).
// Not to be run concurrently with another measurement: it is one.
Result<BandwidthResult> MeasureBandwidth(const BandwidthOptions& options = {});

// The cache file of a device's bandwidth:
//   $PIPETTE_CACHE/bandwidth-<device_id>.json when PIPETTE_CACHE is set and not empty, else
//   $XDG_CACHE_HOME/pipette/..., else $HOME/.cache/pipette/...
// Empty when device_id is not a lowercase hex string (it would escape the folder).
std::string BandwidthCachePath(const std::string& device_id);

// The cached result of the device, or nullopt when there is none. A file that cannot be read or
// parsed, that names another device, or that was made by another method version is treated as
// absent (it is a cache: `pipette device probe` rewrites it). Never fails.
std::optional<BandwidthResult> CachedBandwidth(const std::string& device_id);

// Writes the result (with the device id and a schema "pipette.bandwidth/1") to
// BandwidthCachePath(device_id), creating the folder; replaces the file atomically (rename).
// Errors: an invalid device id, or the folder or file cannot be written (message names it).
Status StoreBandwidth(const std::string& device_id, const BandwidthResult& result);

// {bytes_per_s, method, threads, array_bytes, runs, sweeps, run_bytes_per_s, cpus, measured_at}.
nlohmann::json BandwidthJson(const BandwidthResult& result);
// The inverse (a device's probe reply); missing fields keep their defaults.
BandwidthResult BandwidthFromJson(const nlohmann::json& j);

// Sets device["memory_bandwidth_bytes_per_s"] of a block made by DeviceFingerprint() to the
// cached bandwidth of device["id"] (bytes/s), or to null when that device was never probed. Reads
// the cache only; never measures (a measurement takes seconds and disturbs the machine).
void AddCachedBandwidth(nlohmann::json& device);

// decode_roofline_efficiency (DESIGN.md 4.3), a ratio: decode_throughput (tokens/s) x bytes of
// weights read per token (bytes; for a dense model, the model's tensor bytes) / memory bandwidth
// (bytes/s). 1.0 means decode streams the weights at the measured bandwidth. Nullopt when an
// input is not a positive finite number (no bandwidth measured, a failed decode).
std::optional<double> DecodeRooflineEfficiency(double decode_tokens_per_s, double bytes_per_token,
                                               double bandwidth_bytes_per_s);

}  // namespace pipette
