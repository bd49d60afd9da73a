// The device probe (DESIGN.md 8a): one request, answered on the device by
// pipette-llamacpp-driver (`--probe JSON`, or the `probe` command of its protocol), naming what
// to read; the reply carries each reading as JSON, and the host turns it back into the same
// structs the local readers return. Nothing here hashes or formats for people: the device side
// stays small and statically linkable.
//
// Request (every member optional):
//   {"device": true,           the fingerprint's facts (DeviceFactsToJson)
//    "thermal": true,          thermal zones with temperatures
//    "throttle": true,         throttle counters
//    "cpu_pids": [pid, ...],   a CPU time reading, with these processes' own time
//    "memory_pid": pid,        that process's /proc/<pid>/status memory
//    "energy": true,           RAPL counters and the battery's draw (platform/energy.h)
//    "bandwidth": {"threads": N, "runs": R, "total_bytes": B}}
//                              a memory bandwidth measurement (platform/bandwidth.h; each member
//                              optional, 0 or absent: the default). Takes seconds.
//    "noise_floor": {"runs": R, "run_ms": M, "memory_bytes": B}}
//                              the noise floor (platform/noise_floor.h; each member optional).
//                              Takes about 2 x R x M ms.
// Reply: {"ok": true, and a member per item asked: "device", "thermal", "throttle", "cpu",
// "memory" (null when the process is gone), "energy", "bandwidth" (BandwidthJson, or
// {"error": "one line"} when the options do not fit the device), "noise_floor" (NoiseFloorJson,
// or {"error": "one line"})}.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/status.h"
#include "platform/bandwidth.h"
#include "platform/cpu_load.h"
#include "platform/device.h"
#include "platform/energy.h"
#include "platform/noise_floor.h"
#include "platform/proc_memory.h"
#include "platform/thermal.h"

namespace pipette {

// Answers `request` from the files under `roots`. Never throws: members of the wrong type are
// ignored.
nlohmann::json AnswerProbe(const nlohmann::json& request, const DeviceRoots& roots = {});

// The readings of a reply, back as structs; an absent or malformed member gives the empty
// reading (no zones, available == false, nullopt).
std::vector<ThermalSample> ThermalFromProbe(const nlohmann::json& reply);
ThrottleCounts ThrottleFromProbe(const nlohmann::json& reply);
CpuSample CpuFromProbe(const nlohmann::json& reply);
std::optional<ProcMemory> MemoryFromProbe(const nlohmann::json& reply);
EnergyReading EnergyFromProbe(const nlohmann::json& reply);
// The bandwidth measured, or the device's one-line refusal (PlanBandwidth's errors).
Result<BandwidthResult> BandwidthFromProbe(const nlohmann::json& reply);
// The noise floor measured, or the device's one-line refusal (MeasureNoiseFloor's errors).
Result<NoiseFloorResult> NoiseFloorFromProbe(const nlohmann::json& reply);

// One ProcMemory as JSON ({"vm_hwm", "vm_rss", "vm_swap", "rss_anon", "rss_file", "rss_shmem",
// "has_rss_split"}, bytes) and back.
nlohmann::json ProcMemoryToJson(const ProcMemory& m);
ProcMemory ProcMemoryFromJson(const nlohmann::json& j);

}  // namespace pipette
