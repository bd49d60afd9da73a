// Device fingerprint (DESIGN.md 4.6), Linux implementation in device_linux.cc. Reads /proc and
// /sys under a root that tests can point at fixture folders.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace pipette {

struct CpuTopology {
  int logical = 0;   // online logical CPUs
  int physical = 0;  // distinct (package, core) pairs; equals logical when topology is unknown
};

// Counts cores from <sys_root>/devices/system/cpu/cpu*/topology. Falls back to
// std::thread::hardware_concurrency() for both when the files are absent.
CpuTopology ReadCpuTopology(const std::string& sys_root = "/sys");

// The `device` block of the result record: id, label, os{name, kernel, arch}, cpu{model,
// physical_cores, logical_cores, smt}, memory_bytes, swap_bytes, governor, gpus[].
// `device.id` is the SHA-256 of the stable fields (CPU model, core counts, total memory, machine
// id), so it survives reboots and differs between machines. Thread-safe.
nlohmann::json DeviceFingerprint(const std::string& label, const std::string& proc_root = "/proc",
                                 const std::string& sys_root = "/sys");

}  // namespace pipette
