// The noise floor of a device (issue 27): how much the time of one fixed piece of work varies
// from run to run on it, pinned to one CPU and left to the scheduler. A difference between two
// measurements smaller than this cannot be told from the machine's own jitter, whatever the
// configuration; `pipette device probe` measures it and caches it per device id, every record
// made afterwards carries it in its device block, and `results list`, `compare` and the quick
// start state it once instead of repeating the same advice on every noisy row.
//
// The compute kernel is cache-resident (a multiply-add sweep over a 16 KiB array of floats, L1 on
// every CPU pipette runs on), so what varies is the CPU the work gets: preemption, a
// hypervisor's steal, frequency changes, interrupts; not memory. The memory mode streams reads
// over a buffer far larger than any last-level cache (64 MiB), pinned to the same CPU, as decode
// streams its weights: what varies there is also the memory bandwidth the CPU gets, which a VM's
// neighbours share (on a 2-vCPU VM: 0.2% for the compute kernel while decode of a 134M model
// moved between two speeds 30% apart). Each run lasts about run_ms (sized from a calibration
// pass), runs alternate between the three modes so all see the same minutes of the machine, and
// the spread of a mode is its robust coefficient of variation:
// 1.4826 x the median absolute deviation / the median (equal to the standard deviation / mean
// for normally distributed times, unmoved by a few outliers).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette {

struct NoiseFloorOptions {
  // Timed runs of each mode, after two untimed ones; 10 to 10000.
  int runs = 60;
  // Each run's length, milliseconds: about one repetition of a short benchmark; 1 to 1000.
  double run_ms = 40;
  // The CPUs it may use. Empty: this process's affinity mask (sched_getaffinity(2)). The pinned
  // mode runs on the last of them: CPU 0 takes most interrupts, and the quick start pins its
  // runtime to the last CPU too, so the floor it states is the one its cells ran on.
  std::vector<int> allowed_cpus;
  // The memory mode's buffer, bytes; 1 MiB to 4 GiB.
  uint64_t memory_bytes = 64ull << 20;
};

// One mode's runs.
struct NoiseFloorMode {
  double spread = 0;             // robust coefficient of variation of run times, a fraction
  double median_ms = 0;          // median run time, ms
  std::vector<double> run_ms;    // every timed run, in order, ms
  int cpu = -1;                  // the CPU of the pinned mode; -1: unpinned
};

struct NoiseFloorResult {
  NoiseFloorMode pinned;
  NoiseFloorMode unpinned;
  NoiseFloorMode memory;         // streaming reads, pinned; no runs from an older driver
  std::string cpus;              // the CPUs allowed while measuring, taskset -c syntax
  std::string method = "fma-l1-stream-alternating/2";
  std::string measured_at;       // RFC 3339 UTC
};

// Robust coefficient of variation of positive values (see above); 0 for fewer than 2 values.
double RobustSpread(const std::vector<double>& values);

// Measures the three modes in one thread that changes its own affinity between runs (the
// caller's threads are untouched). Takes about 3 x runs x run_ms and holds memory_bytes. Errors
// (one line naming the option): runs, run_ms or memory_bytes out of range, a CPU not allowed
// here, the kernel refusing the affinity.
Result<NoiseFloorResult> MeasureNoiseFloor(const NoiseFloorOptions& options = {});

// {pinned: {spread, median_ms, run_ms, cpu}, unpinned: {...}, memory: {...} (when it has runs),
// cpus, method, measured_at}, and back (a device's probe reply; missing fields keep their
// defaults).
nlohmann::json NoiseFloorJson(const NoiseFloorResult& result);
NoiseFloorResult NoiseFloorFromJson(const nlohmann::json& j);

// The cache file of a device's noise floor, beside its bandwidth (platform/bandwidth.h):
// <pipette cache>/noise-floor-<device_id>.json. Empty when device_id is not lowercase hex.
std::string NoiseFloorCachePath(const std::string& device_id);

// The cached result of the device, or nullopt when there is none, it cannot be read, names
// another device or was made by an unknown method (the first, fma-l1-alternating/1, had no
// memory mode: read without one). Never fails.
std::optional<NoiseFloorResult> CachedNoiseFloor(const std::string& device_id);

// Writes the result with the device id (schema "pipette.noise_floor/1"), atomically. Errors: an
// invalid device id, the folder or file cannot be written.
Status StoreNoiseFloor(const std::string& device_id, const NoiseFloorResult& result);

// The record's summary of a result: {"pinned": spread, "unpinned": spread, "memory": spread
// (when measured), "cpu": pinned CPU, "measured_at"} (spreads are fractions).
nlohmann::json NoiseFloorSummary(const NoiseFloorResult& result);

// Sets device["noise_floor"] of a block made by DeviceFingerprint() to NoiseFloorSummary of the
// cached noise floor of device["id"], or to null when that device was never probed. Reads the
// cache only; never measures.
void AddCachedNoiseFloor(nlohmann::json& device);

}  // namespace pipette
