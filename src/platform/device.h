// Device fingerprint (DESIGN.md 4.6), Linux implementation in device_linux.cc.
//
// Everything is read from /proc, /sys and /etc under roots that tests point at fixture folders
// (src/platform/testdata/), so no function here needs the machine it describes. A file that is
// absent or unreadable is not an error: the field it feeds is empty, 0, null or an empty list, as
// each field says. Nothing here throws; every function is thread-safe (it only reads files).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace pipette {

// Where the fingerprint reads from. The defaults describe the running machine.
struct DeviceRoots {
  std::string proc = "/proc";  // cpuinfo, meminfo, sys/kernel/{osrelease,arch}, driver/nvidia
  std::string sys = "/sys";    // devices/system/cpu, class/{drm,power_supply,thermal}, firmware
  std::string etc = "/etc";    // os-release, machine-id
};

struct CpuTopology {
  int logical = 0;   // online logical CPUs
  int physical = 0;  // physical cores; equals logical when the topology is unknown
  // Logical CPU ids of each physical core, cores ordered by their lowest CPU id. Empty when the
  // topology files are absent.
  std::vector<std::vector<int>> cores;
};

// Counts cores from <sys_root>/devices/system/cpu/cpu*/topology: a core is a distinct
// thread_siblings_list (core_cpus_list, else the (physical_package_id, core_id) pair). Falls back
// to std::thread::hardware_concurrency() for both counts when the files are absent.
CpuTopology ReadCpuTopology(const std::string& sys_root = "/sys");

// One cache of cpu0, from <sys>/devices/system/cpu/cpu0/cache/index*/.
struct CacheInfo {
  int level = 0;
  std::string type;         // "Data", "Instruction" or "Unified"
  uint64_t size_bytes = 0;  // the `size` file ("32K") in bytes (K = 1024)
  std::string shared_cpus;  // shared_cpu_list, e.g. "0-3": the CPUs that share this cache
};

// Sum of the distinct last-level caches of all CPUs, in bytes: the highest level's Unified (or
// Data) caches, one per distinct shared_cpu_list. Falls back to cpuinfo's "cache size" when sysfs
// has no cache folders (common in VMs); 0 when neither is known.
uint64_t TotalLastLevelCacheBytes(const DeviceRoots& roots = {});

// Hardware limits and policy of the CPU frequency driver (cpufreq). kHz throughout.
struct CpuFrequency {
  std::string governor;  // cpu0's scaling_governor, e.g. "performance", "powersave", "schedutil"
  std::string driver;    // scaling_driver, e.g. "intel_pstate", "acpi-cpufreq"
  uint64_t min_khz = 0;  // lowest cpuinfo_min_freq over all CPUs
  uint64_t max_khz = 0;  // highest cpuinfo_max_freq over all CPUs (the big cores on big.LITTLE)
};

// One display or compute device from /sys/class/drm/card<N>/device (and, for NVIDIA's driver,
// /proc/driver/nvidia/gpus/<pci slot>/information, or that file alone when no DRM card exists).
struct GpuInfo {
  std::string card;           // "card0"; empty when only the NVIDIA proc file names the GPU
  std::string vendor_id;      // PCI vendor, "0x10de"; empty for non-PCI (SoC) GPUs
  std::string device_id;      // PCI device, "0x2684"; empty for non-PCI GPUs
  std::string vendor;         // "NVIDIA", "AMD", "Intel", ... from vendor_id; empty when unknown
  std::string name;           // NVIDIA "Model:", else the device-tree compatible string, else empty
  std::string driver;         // bound kernel driver ("i915", "amdgpu", "nvidia", "v3d")
  std::string pci_slot;       // "0000:01:00.0"; empty for non-PCI GPUs
  uint64_t memory_bytes = 0;  // dedicated memory where the driver exposes it (amdgpu), else 0
};

// What powers the machine and which power profile is selected.
struct PowerInfo {
  // "ac": a Mains/USB supply is online, or a battery is charging/full; "battery": a system
  // battery is discharging and no supply is online; "unknown": no power_supply entries (desktops
  // without ACPI adapters, VMs). Device batteries (scope "Device": mice, headsets) are ignored.
  std::string source = "unknown";
  // /sys/firmware/acpi/platform_profile ("balanced", "performance", "low-power"), else cpu0's
  // cpufreq energy_performance_preference ("balance_performance", ...); empty when absent.
  std::string profile;
  std::string profile_source;  // "platform_profile", "energy_performance_preference" or empty
};

// A thermal sensor, /sys/class/thermal/thermal_zone<zone>/{type,temp}.
struct ThermalZone {
  int zone = 0;                   // N of thermal_zoneN
  std::string type;               // "x86_pkg_temp", "acpitz", "cpu-thermal", ...
  std::optional<double> celsius;  // only when asked for and readable
};

// Thermal zones ordered by zone number. Reads each `temp` (millidegrees C) only when
// `with_temperature`; a zone whose temp cannot be read keeps celsius empty.
std::vector<ThermalZone> ReadThermalZones(const std::string& sys_root = "/sys",
                                          bool with_temperature = false);

struct OsInfo {
  // From <etc>/os-release, else <etc>/../usr/lib/os-release (os-release(5)).
  std::string name;         // os-release NAME, "Debian GNU/Linux"; "unknown" when absent
  std::string version_id;   // os-release VERSION_ID, "12"; empty when absent (rolling releases)
  std::string pretty_name;  // os-release PRETTY_NAME
  std::string kernel;       // <proc>/sys/kernel/osrelease, else uname(2) release
  std::string arch;         // <proc>/sys/kernel/arch, else uname(2) machine: "x86_64", "aarch64"
};

struct CpuInfo {
  // x86: cpuinfo "model name". ARM: the decoded cores, "Cortex-A55 x4 + Cortex-A76 x4", after
  // cpuinfo's "Hardware" when present: "Qualcomm Technologies, Inc SM8250 (Cortex-A55 x4 + ...)".
  std::string model;
  std::string vendor;  // x86 "vendor_id" ("GenuineIntel"); ARM implementer ("ARM", "Qualcomm")
  int physical_cores = 0;
  int logical_cores = 0;
  bool smt = false;               // more logical CPUs than physical cores
  std::string flags;              // the distinct "flags"/"Features" words, sorted, space-separated
  std::string flags_hash;         // first 16 hex of SHA-256 of `flags` (CompleteDeviceInfo)
  std::vector<CacheInfo> caches;  // cpu0's caches ordered by level, then type
};

// CPUs that share one maximum frequency: the clusters of a big.LITTLE chip ("0-3" at 1.8 GHz,
// "4-7" at 2.4 GHz), from cpufreq's cpuinfo_max_freq of each online CPU.
struct CpuCluster {
  std::string cpus;     // CPU list, "4-7"
  uint64_t max_khz = 0;
};

// A system battery (/sys/class/power_supply/<name> of type Battery, scope not Device). A phone on
// a charger runs hotter, so its state is recorded beside each result.
struct BatteryInfo {
  std::string name;                     // "BAT0", "battery"
  std::optional<int> level_percent;     // `capacity`
  std::string status;                   // "Charging", "Discharging", "Full", "Not charging"
  std::optional<double> celsius;        // `temp` (tenths of a degree C) / 10
};

// The fingerprint, typed. DeviceJson() turns it into the record's `device` block.
struct DeviceInfo {
  OsInfo os;
  CpuInfo cpu;
  std::string board;  // DMI "sys_vendor product_name", else device-tree model; empty when absent
  std::optional<CpuFrequency> frequency;  // empty without cpufreq (typical in VMs)
  uint64_t memory_bytes = 0;              // MemTotal, bytes
  uint64_t swap_bytes = 0;                // SwapTotal, bytes
  std::vector<GpuInfo> gpus;
  PowerInfo power;
  std::vector<ThermalZone> thermal_zones;  // types only (no temperatures)
  std::optional<bool> virtualized;  // x86 "hypervisor" cpu flag; empty where no such flag exists
  std::string machine_id;           // /etc/machine-id; used only inside the id, never printed
  std::vector<CpuCluster> clusters;  // by max frequency, slowest first; empty without cpufreq
  std::optional<BatteryInfo> battery;
  // The architecture the kernel runs (<proc>/sys/kernel/arch) when it is not the one this
  // program runs as (os.arch, from uname(2)): the device is emulated (qemu-user, an emulator's
  // binary translation), and its speed is not the hardware's. Empty when they agree.
  std::string emulated_on;
};

// Reads every fact of the device from files; the hashes are left empty (flags_hash). This is
// what runs on the device (pipette-llamacpp-driver's probe); the host completes it.
DeviceInfo ReadDeviceFacts(const DeviceRoots& roots = {});

// Fills in what is computed from the facts on the host: cpu.flags_hash.
void CompleteDeviceInfo(DeviceInfo& info);

// ReadDeviceFacts, then CompleteDeviceInfo.
DeviceInfo ReadDeviceInfo(const DeviceRoots& roots = {});

// The facts as JSON and back, every field kept (machine_id included: never print this JSON; it
// travels from the device's probe to the host, which keeps only DeviceJson). FromJson tolerates
// absent fields (an older driver) and completes the info (CompleteDeviceInfo).
nlohmann::json DeviceFactsToJson(const DeviceInfo& info);
DeviceInfo DeviceFactsFromJson(const nlohmann::json& facts);

// Memory total as it enters the id: rounded to the nearest 256 MiB, because MemTotal moves by a
// few MiB between kernels (reserved memory) on the same hardware.
uint64_t RoundedMemoryForId(uint64_t memory_bytes);

// `device.id`: SHA-256 (64 lowercase hex) of the canonical JSON of the stable hardware fields,
// and of nothing else:
//   os.arch; cpu.model, cpu.vendor, cpu.physical_cores, cpu.logical_cores;
//   cpu.caches[].{level, type, size_bytes}; RoundedMemoryForId(memory_bytes);
//   gpus[].{vendor_id, device_id} (the driver name for non-PCI GPUs), sorted; machine_id.
// Not in the id: the label, OS and kernel, frequency and governor, flags (kernels add flags),
// board name, swap, power, thermal zones, virtualization, and anything that changes while running.
// A machine without /etc/machine-id (many containers) is identified by its hardware alone.
std::string DeviceId(const DeviceInfo& info);

// The record's `device` block (DESIGN.md 5):
//   {id, label, os{name, version_id, pretty_name, kernel, arch}, cpu{model, vendor,
//    physical_cores, logical_cores, smt, flags_hash, caches[{level, type, size_bytes,
//    shared_cpus}]}, board, frequency{governor, driver, min_khz, max_khz} | null, memory_bytes,
//    swap_bytes, governor, gpus[{card, vendor_id, device_id, vendor, name, driver, pci_slot,
//    memory_bytes}], power{source, profile, profile_source}, thermal_zones[{zone, type}],
//    virtualized, clusters[{cpus, max_khz}], battery{name, level_percent, status, celsius} | null,
//    emulated (bool), emulated_on (the kernel's architecture) | null}
// Empty strings and unknown values are JSON null; `governor` repeats frequency.governor (null
// without cpufreq). memory_bandwidth_bytes_per_s is added by the caller (platform/bandwidth.h).
nlohmann::json DeviceJson(const DeviceInfo& info, const std::string& label);

// DeviceJson(ReadDeviceInfo(roots), label).
nlohmann::json DeviceFingerprint(const std::string& label, const DeviceRoots& roots);

// The same, with /etc from the running machine. Kept for callers that only move /proc and /sys.
nlohmann::json DeviceFingerprint(const std::string& label, const std::string& proc_root = "/proc",
                                 const std::string& sys_root = "/sys");

}  // namespace pipette
