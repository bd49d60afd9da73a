// Thermal zones and throttle counters (DESIGN.md 4.5, 4.6), Linux implementation in
// thermal_linux.cc. Reads sysfs under a root that tests point at fixture folders. hwmon sensors
// are out of scope: the readiness gate uses thermal zones only. platform/device.h lists the same
// zones (types only) for the device fingerprint; this header is the live temperature reading
// that the readiness gate and the per-repetition thermal snapshots use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pipette {

// One temperature reading of <sys_root>/class/thermal/thermal_zone<N>.
struct ThermalSample {
  std::string zone;    // directory name, e.g. "thermal_zone0"
  std::string type;    // contents of `type`, e.g. "x86_pkg_temp"; empty when unreadable
  double celsius = 0;  // `temp` (millidegrees Celsius) / 1000, in °C
  bool gates = false;  // CPU/SoC-related: IsCpuThermalZoneType(type)
};

// True when a zone of this `type` measures the CPU or SoC, so that it gates readiness. Matched
// case-insensitively by prefix: x86_pkg_temp, coretemp, k10temp, zenpower, cpu (cpu-thermal,
// cpu0-thermal, cpuss-0-usr, ...), soc (soc_thermal, soc-thermal), bigcore/littlecore (Rockchip),
// tcpu and b0d4 (Intel's processor participant), and acpitz. acpitz is the ACPI firmware zone; on
// laptops and desktops it follows the CPU package (it is what triggers the firmware's passive
// cooling), so it gates. Everything else is recorded but does not gate: NVMe ("nvme"), Wi-Fi
// ("iwlwifi_1"), battery ("battery", "BAT0"), chipset ("pch_cannonlake"), GPU ("gpu-thermal"),
// skin and board sensors, and unknown types.
bool IsCpuThermalZoneType(const std::string& type);

// Reads every <sys_root>/class/thermal/thermal_zone*/{type,temp}, ordered by zone number. A zone
// whose `temp` cannot be read or parsed (some report EIO/ENODATA while their device sleeps) is
// skipped. Returns an empty vector when there are no thermal zones (VMs, containers): that is not
// an error. Thread-safe.
std::vector<ThermalSample> ReadThermalSnapshot(const std::string& sys_root = "/sys");

// Sum of the kernel's thermal throttle event counters.
struct ThrottleCounts {
  bool available = false;  // at least one counter file was readable
  uint64_t total = 0;      // sum of all counters read (events since boot)
};

// Sums <sys_root>/devices/system/cpu/cpu*/thermal_throttle/{core,package}_throttle_count (x86
// only; a package counter repeats on every CPU of its package, which is harmless because only
// increases matter). Throttling happened between two readings when `total` increased. Returns
// available == false where the platform does not expose them. Thread-safe.
ThrottleCounts ReadThrottleCounts(const std::string& sys_root = "/sys");

}  // namespace pipette
