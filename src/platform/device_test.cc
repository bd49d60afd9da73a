// Device fingerprint and bandwidth probe. Fixtures under testdata/ have the shapes of real /proc,
// /sys and /etc trees (testdata/README.md says where each shape comes from).
#include "platform/device.h"
#include "platform/energy.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "platform/bandwidth.h"
#include "platform/cpu_affinity.h"
#include "platform/noise_floor.h"
#include "platform/probe.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

DeviceRoots RootsAt(const fs::path& dir) {
  return {(dir / "proc").string(), (dir / "sys").string(), (dir / "etc").string()};
}

DeviceRoots Fixture(const std::string& name) {
  return RootsAt(fs::path(PIPETTE_DEVICE_TESTDATA) / name);
}

// A writable copy of a fixture, for tests that change one file.
fs::path CopyFixture(const std::string& name, const std::string& as) {
  const fs::path dir = fs::path(testing::TempDir()) / ("devfix-" + as);
  fs::remove_all(dir);
  fs::copy(fs::path(PIPETTE_DEVICE_TESTDATA) / name, dir, fs::copy_options::recursive);
  return dir;
}

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::trunc) << text;
}

// Replaces the first occurrence of `from` in a file.
void Edit(const fs::path& path, const std::string& from, const std::string& to) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << path;
  text.replace(at, from.size(), to);
  Write(path, text);
}

TEST(CpuTopology, CountsPhysicalCoresFromFixture) {
  const fs::path root = fs::path(testing::TempDir()) / "sysfix";
  fs::remove_all(root);
  // 4 logical CPUs on 2 cores (SMT), one package; only the older core_id files.
  for (int cpu = 0; cpu < 4; ++cpu) {
    const fs::path d = root / "devices/system/cpu" / ("cpu" + std::to_string(cpu)) / "topology";
    fs::create_directories(d);
    std::ofstream(d / "core_id") << cpu / 2 << "\n";
    std::ofstream(d / "physical_package_id") << 0 << "\n";
  }
  fs::create_directories(root / "devices/system/cpu/cpufreq");  // not a cpuN folder
  const CpuTopology t = ReadCpuTopology(root.string());
  EXPECT_EQ(t.logical, 4);
  EXPECT_EQ(t.physical, 2);
  EXPECT_EQ(t.cores, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
}

TEST(CpuTopology, SmtSiblingsAndOfflineCpus) {
  const CpuTopology laptop = ReadCpuTopology(Fixture("x86_laptop").sys);
  EXPECT_EQ(laptop.logical, 8);
  EXPECT_EQ(laptop.physical, 4);
  EXPECT_EQ(laptop.cores, (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));

  // big.LITTLE: core_id restarts in each cluster; thread_siblings_list keeps cores apart.
  const CpuTopology arm = ReadCpuTopology(Fixture("arm64_board").sys);
  EXPECT_EQ(arm.logical, 6);
  EXPECT_EQ(arm.physical, 6);

  const fs::path dir = CopyFixture("x86_laptop", "offline");
  Write(dir / "sys/devices/system/cpu/cpu7/online", "0\n");
  const CpuTopology t = ReadCpuTopology((dir / "sys").string());
  EXPECT_EQ(t.logical, 7);
  EXPECT_EQ(t.physical, 4);
}

TEST(DeviceInfo, X86LaptopOnBattery) {
  const DeviceInfo d = ReadDeviceInfo(Fixture("x86_laptop"));
  EXPECT_EQ(d.os.name, "Debian GNU/Linux");
  EXPECT_EQ(d.os.version_id, "12");
  EXPECT_EQ(d.os.pretty_name, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(d.os.kernel, "6.1.0-18-amd64");
  EXPECT_EQ(d.os.arch, "x86_64");
  EXPECT_EQ(d.cpu.model, "11th Gen Intel(R) Core(TM) i7-1165G7 @ 2.80GHz");
  EXPECT_EQ(d.cpu.vendor, "GenuineIntel");
  EXPECT_EQ(d.cpu.physical_cores, 4);
  EXPECT_EQ(d.cpu.logical_cores, 8);
  EXPECT_TRUE(d.cpu.smt);
  EXPECT_EQ(d.cpu.flags_hash.size(), 16u);
  ASSERT_EQ(d.cpu.caches.size(), 4u);
  EXPECT_EQ(d.cpu.caches[0].level, 1);
  EXPECT_EQ(d.cpu.caches[0].type, "Data");
  EXPECT_EQ(d.cpu.caches[0].size_bytes, 48u * 1024);
  EXPECT_EQ(d.cpu.caches[0].shared_cpus, "0,4");
  EXPECT_EQ(d.cpu.caches[1].type, "Instruction");
  EXPECT_EQ(d.cpu.caches[2].size_bytes, 1280u * 1024);
  EXPECT_EQ(d.cpu.caches[3].level, 3);
  EXPECT_EQ(d.cpu.caches[3].size_bytes, 12u << 20);
  EXPECT_EQ(d.cpu.caches[3].shared_cpus, "0-7");
  EXPECT_EQ(d.board, "LENOVO 20XW0055GE");
  ASSERT_TRUE(d.frequency.has_value());
  EXPECT_EQ(d.frequency->governor, "powersave");
  EXPECT_EQ(d.frequency->driver, "intel_pstate");
  EXPECT_EQ(d.frequency->min_khz, 400000u);
  EXPECT_EQ(d.frequency->max_khz, 4700000u);
  EXPECT_EQ(d.memory_bytes, 16089600ull * 1024);
  EXPECT_EQ(d.swap_bytes, 8388604ull * 1024);
  ASSERT_EQ(d.gpus.size(), 1u);  // connectors (card0-eDP-1) and render nodes are not cards
  EXPECT_EQ(d.gpus[0].card, "card0");
  EXPECT_EQ(d.gpus[0].vendor_id, "0x8086");
  EXPECT_EQ(d.gpus[0].device_id, "0x9a49");
  EXPECT_EQ(d.gpus[0].vendor, "Intel");
  EXPECT_EQ(d.gpus[0].driver, "i915");
  EXPECT_EQ(d.gpus[0].pci_slot, "0000:00:02.0");
  EXPECT_EQ(d.power.source, "battery");  // the mouse's battery (scope Device) does not count
  EXPECT_EQ(d.power.profile, "balance_power");
  EXPECT_EQ(d.power.profile_source, "energy_performance_preference");
  std::vector<std::pair<int, std::string>> zones;
  for (const auto& z : d.thermal_zones) zones.push_back({z.zone, z.type});
  EXPECT_EQ(zones, (std::vector<std::pair<int, std::string>>{{0, "acpitz"},
                                                             {1, "INT3400 Thermal"},
                                                             {2, "x86_pkg_temp"},
                                                             {3, "iwlwifi_1"},
                                                             {10, "TCPU_PCI"}}));
  EXPECT_FALSE(d.thermal_zones[0].celsius.has_value());  // types only in the fingerprint
  ASSERT_TRUE(d.virtualized.has_value());
  EXPECT_FALSE(*d.virtualized);
  EXPECT_EQ(d.machine_id, "4f1c2a9e7d3b48c6a05e91b2c7d8e3f0");
}

TEST(DeviceInfo, Arm64BigLittleBoard) {
  const DeviceInfo d = ReadDeviceInfo(Fixture("arm64_board"));
  EXPECT_EQ(d.os.arch, "aarch64");
  EXPECT_EQ(d.os.pretty_name, "Armbian 23.11.1 bookworm");
  EXPECT_EQ(d.cpu.model, "Hardkernel ODROID-N2 (Cortex-A53 x2 + Cortex-A73 x4)");
  EXPECT_EQ(d.cpu.vendor, "ARM");
  EXPECT_EQ(d.cpu.physical_cores, 6);
  EXPECT_FALSE(d.cpu.smt);
  EXPECT_EQ(d.cpu.flags_hash.size(), 16u);  // from "Features"
  ASSERT_EQ(d.cpu.caches.size(), 3u);
  EXPECT_EQ(d.cpu.caches[2].size_bytes, 512u * 1024);  // cpu0 is a LITTLE core
  EXPECT_EQ(d.board, "Hardkernel ODROID-N2");          // device tree, trailing NUL dropped
  ASSERT_TRUE(d.frequency.has_value());
  EXPECT_EQ(d.frequency->governor, "schedutil");
  EXPECT_EQ(d.frequency->min_khz, 1000000u);
  EXPECT_EQ(d.frequency->max_khz, 2208000u);  // the big cluster's
  EXPECT_EQ(d.memory_bytes, 3884040ull * 1024);
  EXPECT_EQ(d.swap_bytes, 0u);
  ASSERT_EQ(d.gpus.size(), 2u);
  EXPECT_EQ(d.gpus[0].driver, "meson-drm");
  EXPECT_EQ(d.gpus[1].driver, "panfrost");
  EXPECT_EQ(d.gpus[1].name, "amlogic,meson-g12a-mali");
  EXPECT_TRUE(d.gpus[1].vendor_id.empty());
  EXPECT_EQ(d.power.source, "unknown");
  EXPECT_TRUE(d.power.profile.empty());
  EXPECT_FALSE(d.virtualized.has_value());  // ARM has no hypervisor flag to read
  // One L2 per cluster: 512 KiB (cpu0-1) + 1 MiB (cpu2-5).
  EXPECT_EQ(TotalLastLevelCacheBytes(Fixture("arm64_board")), 1536u * 1024);
}

TEST(DeviceInfo, VmWithNvidiaGpuAndNoCpufreq) {
  const DeviceInfo d = ReadDeviceInfo(Fixture("x86_vm_nvidia"));
  EXPECT_EQ(d.cpu.model, "AMD EPYC 7J13 64-Core Processor");
  EXPECT_EQ(d.cpu.physical_cores, 2);
  EXPECT_EQ(d.cpu.logical_cores, 4);
  EXPECT_TRUE(d.cpu.caches.empty());
  EXPECT_FALSE(d.frequency.has_value());
  ASSERT_TRUE(d.virtualized.has_value());
  EXPECT_TRUE(*d.virtualized);
  EXPECT_EQ(d.board, "QEMU Standard PC (i440FX + PIIX, 1996)");
  ASSERT_EQ(d.gpus.size(), 2u);
  EXPECT_EQ(d.gpus[0].driver, "bochs-drm");
  EXPECT_EQ(d.gpus[0].vendor, "QEMU");
  const GpuInfo& nv = d.gpus[1];  // no DRM card: named by /proc/driver/nvidia alone
  EXPECT_TRUE(nv.card.empty());
  EXPECT_EQ(nv.vendor_id, "0x10de");
  EXPECT_EQ(nv.device_id, "0x2330");
  EXPECT_EQ(nv.vendor, "NVIDIA");
  EXPECT_EQ(nv.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(nv.driver, "nvidia");
  EXPECT_EQ(nv.pci_slot, "0000:00:05.0");
  // No cache folders in sysfs: cpuinfo's "cache size" stands in.
  EXPECT_EQ(TotalLastLevelCacheBytes(Fixture("x86_vm_nvidia")), 512u * 1024);

  const nlohmann::json j = DeviceJson(d, "vm");
  EXPECT_TRUE(j["frequency"].is_null());
  EXPECT_TRUE(j["governor"].is_null());
  EXPECT_EQ(j["virtualized"], true);
  EXPECT_EQ(j["gpus"][1]["card"], nullptr);
}

TEST(DeviceInfo, NvidiaProcFileNamesTheDrmCard) {
  const fs::path dir = CopyFixture("x86_vm_nvidia", "nvdrm");
  const fs::path card = dir / "sys/class/drm/card1/device";
  Write(card / "vendor", "0x10de\n");
  Write(card / "device", "0x2330\n");
  Write(card / "uevent", "DRIVER=nvidia\nPCI_SLOT_NAME=0000:00:05.0\n");
  const DeviceInfo d = ReadDeviceInfo(RootsAt(dir));
  ASSERT_EQ(d.gpus.size(), 2u);  // one entry per GPU, not one per source
  EXPECT_EQ(d.gpus[1].card, "card1");
  EXPECT_EQ(d.gpus[1].name, "NVIDIA H100 80GB HBM3");
}

// The facts the device's probe sends to the host (DESIGN.md 8a): clusters by maximum frequency
// (big.LITTLE), the system battery, and a round trip through the facts JSON that keeps the id.
TEST(DeviceFacts, ClustersBatteryAndTheTripToTheHost) {
  const DeviceInfo board = ReadDeviceInfo(Fixture("arm64_board"));
  ASSERT_EQ(board.clusters.size(), 2u);
  EXPECT_EQ(board.clusters[0].cpus, "0-1");
  EXPECT_EQ(board.clusters[0].max_khz, 1896000u);
  EXPECT_EQ(board.clusters[1].cpus, "2-5");
  EXPECT_EQ(board.clusters[1].max_khz, 2208000u);
  EXPECT_TRUE(board.emulated_on.empty()) << "fixtures are never judged against this machine";
  const DeviceInfo laptop = ReadDeviceInfo(Fixture("x86_laptop"));
  ASSERT_TRUE(laptop.battery.has_value());
  EXPECT_EQ(laptop.battery->name, "BAT0");
  EXPECT_EQ(laptop.battery->level_percent, 83);
  EXPECT_EQ(laptop.battery->status, "Discharging");
  EXPECT_FALSE(laptop.battery->celsius.has_value());
  for (const DeviceInfo& d : {board, laptop}) {
    const DeviceInfo back = DeviceFactsFromJson(DeviceFactsToJson(d));
    EXPECT_EQ(DeviceJson(back, "x"), DeviceJson(d, "x"));
    EXPECT_EQ(back.cpu.flags_hash, d.cpu.flags_hash);
  }
  const nlohmann::json block = DeviceJson(board, "");
  EXPECT_EQ(block["clusters"][1]["cpus"], "2-5");
  EXPECT_EQ(block["emulated"], false);
  EXPECT_TRUE(block["emulated_on"].is_null());
}

// Power and energy readers on fake sysfs trees in the kernel's documented formats: no machine here
// reports either (this VM has no RAPL and no battery), so no real device's energy was measured.
TEST(Energy, LaptopBatteryPowerNowWhileDischarging) {
  const EnergyReading r = ReadEnergy(Fixture("x86_laptop").sys);
  EXPECT_TRUE(r.rapl.empty());
  ASSERT_TRUE(r.battery_watts.has_value());
  EXPECT_DOUBLE_EQ(*r.battery_watts, 7.942);  // power_now 7942000 uW
  // Two readings 2 s apart: the draw averaged, times the time.
  EXPECT_DOUBLE_EQ(*EnergyBetween(r, r, 2.0), 2 * 7.942);
  // On a charger the battery's current is the charging current: no source.
  const fs::path dir = CopyFixture("x86_laptop", "charging");
  Write(dir / "sys/class/power_supply/BAT0/status", "Charging\n");
  EXPECT_FALSE(ReadEnergy((dir / "sys").string()).battery_watts.has_value());
}

TEST(Energy, PhoneBatteryCurrentTimesVoltage) {
  const fs::path dir = fs::path(testing::TempDir()) / "devfix-phone-battery";
  fs::remove_all(dir);
  const fs::path bat = dir / "sys/class/power_supply/battery";
  Write(bat / "type", "Battery\n");
  Write(bat / "status", "Discharging\n");
  Write(bat / "current_now", "-450000\n");  // microamps; negative while discharging on many phones
  Write(bat / "voltage_now", "3850000\n");  // microvolts
  Write(dir / "sys/class/power_supply/usb/type", "USB\n");
  Write(dir / "sys/class/power_supply/usb/online", "0\n");
  const EnergyReading r = ReadEnergy((dir / "sys").string());
  ASSERT_TRUE(r.battery_watts.has_value());
  EXPECT_NEAR(*r.battery_watts, 0.45 * 3.85, 1e-12);
  const EnergyReading back = EnergyFromJson(EnergyToJson(r));
  EXPECT_EQ(back.battery_watts, r.battery_watts);
}

TEST(Energy, RaplPackageCountersWithAWrap) {
  const fs::path dir = fs::path(testing::TempDir()) / "devfix-rapl";
  fs::remove_all(dir);
  const fs::path pkg = dir / "sys/class/powercap/intel-rapl:0";
  Write(pkg / "name", "package-0\n");
  Write(pkg / "energy_uj", "262143000000\n");
  Write(pkg / "max_energy_range_uj", "262143328850\n");
  Write(dir / "sys/class/powercap/intel-rapl:0:0/name", "core\n");  // a subzone: not counted
  Write(dir / "sys/class/powercap/intel-rapl:0:0/energy_uj", "5\n");
  const EnergyReading before = ReadEnergy((dir / "sys").string());
  ASSERT_EQ(before.rapl.size(), 1u);
  EXPECT_EQ(before.rapl[0].name, "package-0");
  Write(pkg / "energy_uj", "671150\n");  // wrapped: 328850 uJ to the top, then 671150
  const EnergyReading after = ReadEnergy((dir / "sys").string());
  EXPECT_DOUBLE_EQ(*EnergyBetween(before, after, 0.1), 1.0);  // 1,000,000 uJ
  // No source at all: nothing, never 0.
  EXPECT_FALSE(EnergyBetween(EnergyReading{}, EnergyReading{}, 1.0).has_value());
  const EnergyReading back = EnergyFromJson(EnergyToJson(after));
  ASSERT_EQ(back.rapl.size(), 1u);
  EXPECT_EQ(back.rapl[0].energy_uj, 671150u);
}

TEST(PowerInfo, SourceAndProfile) {
  const fs::path dir = CopyFixture("x86_laptop", "power");
  const fs::path ps = dir / "sys/class/power_supply";
  Write(ps / "AC/online", "1\n");
  Write(ps / "BAT0/status", "Charging\n");
  Write(dir / "sys/firmware/acpi/platform_profile", "performance\n");
  PowerInfo p = ReadDeviceInfo(RootsAt(dir)).power;
  EXPECT_EQ(p.source, "ac");
  EXPECT_EQ(p.profile, "performance");
  EXPECT_EQ(p.profile_source, "platform_profile");

  fs::remove(ps / "AC/online");  // some adapters have no online file
  Write(ps / "BAT0/status", "Full\n");
  EXPECT_EQ(ReadDeviceInfo(RootsAt(dir)).power.source, "ac");

  fs::remove_all(ps / "AC");
  fs::remove_all(ps / "BAT0");  // only the mouse's battery is left
  EXPECT_EQ(ReadDeviceInfo(RootsAt(dir)).power.source, "unknown");
}

TEST(ThermalZones, TemperaturesOnRequest) {
  const auto zones = ReadThermalZones(Fixture("x86_laptop").sys, true);
  ASSERT_EQ(zones.size(), 5u);
  ASSERT_TRUE(zones[0].celsius.has_value());
  EXPECT_DOUBLE_EQ(*zones[0].celsius, 48.0);
  EXPECT_DOUBLE_EQ(*zones[4].celsius, 52.05);
  EXPECT_TRUE(ReadThermalZones(Fixture("x86_vm_nvidia").sys, true).empty());
}

TEST(DeviceId, RoundsMemoryTo256MiB) {
  constexpr uint64_t kMiB = 1ull << 20;
  EXPECT_EQ(RoundedMemoryForId(0), 0u);
  EXPECT_EQ(RoundedMemoryForId(127 * kMiB), 0u);
  EXPECT_EQ(RoundedMemoryForId(128 * kMiB), 256 * kMiB);
  EXPECT_EQ(RoundedMemoryForId(1124 * kMiB), 1024 * kMiB);
  EXPECT_EQ(RoundedMemoryForId(16089600ull * 1024), 15616 * kMiB);  // 15712.5 MiB
}

TEST(DeviceId, StableAcrossVolatileFieldsAndLabels) {
  const DeviceRoots roots = Fixture("x86_laptop");
  const std::string id = DeviceJson(ReadDeviceInfo(roots), "bench-box")["id"];
  EXPECT_EQ(id.size(), 64u);
  EXPECT_EQ(DeviceJson(ReadDeviceInfo(roots), "other-label")["id"], id);

  const fs::path dir = CopyFixture("x86_laptop", "volatile");
  Edit(dir / "proc/meminfo", "MemFree:         9822136 kB", "MemFree:         1234567 kB");
  Edit(dir / "proc/meminfo", "MemTotal:       16089600 kB",
       "MemTotal:       16093696 kB");  // +4 MiB
  Edit(dir / "proc/meminfo", "SwapTotal:       8388604 kB", "SwapTotal:             0 kB");
  Edit(dir / "proc/cpuinfo", "cpu MHz\t\t: 1200.000", "cpu MHz\t\t: 4612.301");
  Edit(dir / "proc/sys/kernel/osrelease", "6.1.0-18-amd64", "6.12.9-amd64");
  Edit(dir / "etc/os-release", "VERSION_ID=\"12\"", "VERSION_ID=\"13\"");
  Edit(dir / "proc/cpuinfo", "flags\t\t: fpu", "flags\t\t: new_kernel_flag fpu");
  Write(dir / "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  Write(dir / "sys/class/power_supply/AC/online", "1\n");
  Write(dir / "sys/class/thermal/thermal_zone0/temp", "91000\n");
  Write(dir / "sys/class/thermal/thermal_zone11/type", "ucsi-source-psy\n");
  const DeviceInfo changed = ReadDeviceInfo(RootsAt(dir));
  EXPECT_EQ(changed.frequency->governor, "performance");  // the edits were read
  EXPECT_NE(changed.memory_bytes, ReadDeviceInfo(roots).memory_bytes);
  EXPECT_EQ(DeviceId(changed), id);
}

TEST(DeviceId, ChangesWithHardware) {
  const std::string id = DeviceId(ReadDeviceInfo(Fixture("x86_laptop")));
  const auto id_after = [](const std::string& as, auto&& change) {
    const fs::path dir = CopyFixture("x86_laptop", as);
    change(dir);
    return DeviceId(ReadDeviceInfo(RootsAt(dir)));
  };
  EXPECT_NE(id_after("l3",
                     [](const fs::path& d) {
                       Write(d / "sys/devices/system/cpu/cpu0/cache/index3/size", "8192K\n");
                     }),
            id);
  EXPECT_NE(id_after("mem",
                     [](const fs::path& d) {
                       Edit(d / "proc/meminfo", "MemTotal:       16089600 kB",
                            "MemTotal:       32536308 kB");
                     }),
            id);
  EXPECT_NE(id_after("machine",
                     [](const fs::path& d) {
                       Write(d / "etc/machine-id", "00000000000000000000000000000001\n");
                     }),
            id);
  EXPECT_NE(id_after("gpu",
                     [](const fs::path& d) {
                       Write(d / "sys/class/drm/card0/device/device", "0x9a40\n");
                     }),
            id);
  EXPECT_NE(id_after("smt",
                     [](const fs::path& d) {
                       for (int cpu = 4; cpu < 8; ++cpu) {
                         Write(d / ("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online"),
                               "0\n");
                       }
                     }),
            id);
  // Different machines, different ids.
  EXPECT_NE(DeviceId(ReadDeviceInfo(Fixture("arm64_board"))), id);
}

TEST(DeviceFingerprint, RecordBlockShape) {
  const nlohmann::json j = DeviceFingerprint("lab", Fixture("x86_laptop"));
  EXPECT_EQ(j["label"], "lab");
  EXPECT_EQ(j["os"]["version_id"], "12");
  EXPECT_EQ(j["cpu"]["physical_cores"], 4);
  EXPECT_EQ(j["cpu"]["smt"], true);
  EXPECT_EQ(
      j["cpu"]["caches"][3],
      (nlohmann::json{
          {"level", 3}, {"type", "Unified"}, {"size_bytes", 12582912}, {"shared_cpus", "0-7"}}));
  EXPECT_EQ(j["frequency"]["max_khz"], 4700000);
  EXPECT_EQ(j["governor"], "powersave");
  EXPECT_EQ(j["power"]["source"], "battery");
  EXPECT_EQ(j["thermal_zones"][2], (nlohmann::json{{"zone", 2}, {"type", "x86_pkg_temp"}}));
  EXPECT_EQ(j["gpus"][0]["memory_bytes"], nullptr);
  EXPECT_EQ(j["virtualized"], false);
  // The machine id feeds the id but is never printed.
  EXPECT_EQ(j.dump().find("4f1c2a9e7d3b48c6a05e91b2c7d8e3f0"), std::string::npos);
  EXPECT_FALSE(j.contains("machine_id"));

  // The (label, proc, sys) form the harness calls reads the same /proc and /sys.
  const DeviceRoots r = Fixture("x86_laptop");
  const nlohmann::json k = DeviceFingerprint("lab", r.proc, r.sys);
  EXPECT_EQ(k["cpu"], j["cpu"]);
}

TEST(DeviceFingerprint, RunningMachineHasStableId) {
  const auto a = DeviceFingerprint("bench-box");
  const auto b = DeviceFingerprint("other-label");
  EXPECT_EQ(a["id"].get<std::string>().size(), 64u);
  EXPECT_EQ(a["id"], b["id"]);  // the label is not part of the identity
  EXPECT_EQ(a["label"], "bench-box");
  EXPECT_GT(a["memory_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(a["cpu"]["logical_cores"].get<int>(), 0);
}

// ------------------------------------------------------------------------- bandwidth

constexpr uint64_t kMiB = 1ull << 20;

BandwidthOptions LaptopOptions() {
  BandwidthOptions o;
  o.proc_root = Fixture("x86_laptop").proc;
  o.sys_root = Fixture("x86_laptop").sys;
  o.allowed_cpus = {0, 1, 2, 3, 4, 5, 6, 7};
  return o;
}

TEST(Bandwidth, MinimumWorkingSet) {
  EXPECT_EQ(MinimumBandwidthBytes(0), 256 * kMiB);
  EXPECT_EQ(MinimumBandwidthBytes(12 * kMiB), 256 * kMiB);  // 3 x 48 MiB < 256 MiB
  EXPECT_EQ(MinimumBandwidthBytes(32 * kMiB), 384 * kMiB);  // 3 arrays x 4 x 32 MiB
}

TEST(Bandwidth, PlanOneThreadPerPhysicalCore) {
  auto plan = PlanBandwidth(LaptopOptions());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->threads, 4);
  EXPECT_EQ(plan->cpus, (std::vector<int>{0, 1, 2, 3}));  // not the SMT siblings 4..7
  EXPECT_EQ(plan->llc_bytes, 12 * kMiB);
  EXPECT_EQ(plan->minimum_total_bytes, 256 * kMiB);
  EXPECT_EQ(plan->elements % 32, 0u);  // whole cache lines per thread
  EXPECT_LE(3 * plan->array_bytes, 256 * kMiB);
  EXPECT_GT(3 * plan->array_bytes, 256 * kMiB - 3 * 8 * 32);

  BandwidthOptions o = LaptopOptions();
  o.allowed_cpus = {4, 5, 6, 7};  // e.g. taskset -c 4-7: still one CPU per core
  EXPECT_EQ(PlanBandwidth(o)->cpus, (std::vector<int>{4, 5, 6, 7}));
  o.allowed_cpus = {0, 4};  // one core, two hardware threads
  EXPECT_EQ(PlanBandwidth(o)->threads, 1);
  o.threads = 2;
  EXPECT_EQ(PlanBandwidth(o)->cpus, (std::vector<int>{0, 4}));
  o.pin_threads = false;
  EXPECT_TRUE(PlanBandwidth(o)->cpus.empty());
}

TEST(Bandwidth, PlanRefusesBadOptions) {
  const auto error_of = [](const BandwidthOptions& o) {
    auto plan = PlanBandwidth(o);
    return plan.ok() ? std::string("(accepted)") : plan.error().message;
  };
  BandwidthOptions o = LaptopOptions();
  o.runs = 0;
  EXPECT_NE(error_of(o).find("runs must be between 1 and 1000, not 0"), std::string::npos);
  o.runs = 1001;
  EXPECT_NE(error_of(o).find("not 1001"), std::string::npos);
  o = LaptopOptions();
  o.min_run_seconds = -1;
  EXPECT_NE(error_of(o).find("min_run_seconds must be between 0 and 60"), std::string::npos);
  o = LaptopOptions();
  o.threads = -1;
  EXPECT_NE(error_of(o).find("threads must be at least 1"), std::string::npos);
  o.threads = 9;
  EXPECT_NE(error_of(o).find("at most 8"), std::string::npos);
  o = LaptopOptions();
  o.total_bytes = 64 * kMiB;
  EXPECT_NE(error_of(o).find("64 MiB is below the minimum of 256 MiB"), std::string::npos);
  o.enforce_minimum = false;
  EXPECT_EQ(error_of(o), "(accepted)");
  o.total_bytes = 20ull << 30;  // the fixture has 12.2 GiB available
  EXPECT_NE(error_of(o).find("of available memory: it would swap"), std::string::npos);
}

TEST(Bandwidth, MeasuresATriad) {
  BandwidthOptions o;
  o.threads = 1;
  o.runs = 3;
  o.total_bytes = 6 * kMiB;  // small: the test checks the mechanics, not memory speed
  o.enforce_minimum = false;
  o.min_run_seconds = 0;  // one sweep per run
  auto r = MeasureBandwidth(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->threads, 1);
  EXPECT_EQ(r->runs, 3);
  ASSERT_EQ(r->run_bytes_per_s.size(), 3u);
  for (double v : r->run_bytes_per_s) {
    EXPECT_GT(v, 0);
    EXPECT_LE(v, r->bytes_per_s);
  }
  EXPECT_EQ(r->bytes_per_s,
            *std::max_element(r->run_bytes_per_s.begin(), r->run_bytes_per_s.end()));
  EXPECT_LE(3 * r->array_bytes, 6 * kMiB);
  EXPECT_EQ(r->method, "stream-triad/1");
  EXPECT_EQ(r->sweeps, 1);
  EXPECT_FALSE(r->measured_at.empty());

  o.min_run_seconds = 0.02;  // a 6 MiB sweep takes well under 20 ms: runs repeat it
  o.runs = 2;
  auto repeated = MeasureBandwidth(o);
  ASSERT_TRUE(repeated.ok()) << repeated.error().message;
  EXPECT_GT(repeated->sweeps, 1);

  o.threads = 2;
  if (PlanBandwidth(o).ok()) {  // a 1-CPU machine cannot run 2 pinned threads
    auto two = MeasureBandwidth(o);
    ASSERT_TRUE(two.ok()) << two.error().message;
    EXPECT_EQ(two->threads, 2);
  }
}

// Points the cache at a fresh folder for one test, restoring the environment afterwards.
class BandwidthCache : public testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"PIPETTE_CACHE", "XDG_CACHE_HOME", "HOME"}) {
      const char* v = getenv(name);
      saved_.push_back({name, v ? std::optional<std::string>(v) : std::nullopt});
    }
    // One folder per test: ctest may run these in parallel processes.
    dir_ =
        fs::path(testing::TempDir()) /
        ("bwcache-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    setenv("PIPETTE_CACHE", dir_.c_str(), 1);
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }
  static BandwidthResult Sample() {
    BandwidthResult r;
    r.bytes_per_s = 21.5e9;
    r.threads = 2;
    r.array_bytes = 89478400;
    r.runs = 3;
    r.sweeps = 7;
    r.run_bytes_per_s = {20.9e9, 21.5e9, 21.1e9};
    r.cpus = {0, 1};
    r.measured_at = "2026-01-02T03:04:05.678Z";
    return r;
  }
  fs::path dir_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

const std::string kId = std::string(64, 'a');

TEST_F(BandwidthCache, PathFollowsEnvironment) {
  EXPECT_EQ(BandwidthCachePath(kId), (dir_ / ("bandwidth-" + kId + ".json")).string());
  unsetenv("PIPETTE_CACHE");
  setenv("XDG_CACHE_HOME", "/var/cache/u", 1);
  EXPECT_EQ(BandwidthCachePath("ab12"), "/var/cache/u/pipette/bandwidth-ab12.json");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(BandwidthCachePath("ab12"), "/home/u/.cache/pipette/bandwidth-ab12.json");
  EXPECT_EQ(BandwidthCachePath("../../etc/passwd"), "");
  EXPECT_EQ(BandwidthCachePath(""), "");
  EXPECT_EQ(BandwidthCachePath("ABCD"), "");
}

TEST_F(BandwidthCache, StoresAndReadsBack) {
  EXPECT_FALSE(CachedBandwidth(kId).has_value());
  ASSERT_TRUE(StoreBandwidth(kId, Sample()).ok());
  const auto r = CachedBandwidth(kId);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->bytes_per_s, 21.5e9);
  EXPECT_EQ(r->threads, 2);
  EXPECT_EQ(r->array_bytes, 89478400u);
  EXPECT_EQ(r->runs, 3);
  EXPECT_EQ(r->sweeps, 7);
  EXPECT_EQ(r->run_bytes_per_s, Sample().run_bytes_per_s);
  EXPECT_EQ(r->cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(r->method, "stream-triad/1");
  EXPECT_EQ(r->measured_at, "2026-01-02T03:04:05.678Z");
  EXPECT_FALSE(CachedBandwidth(std::string(64, 'b')).has_value());  // another device
  ASSERT_TRUE(StoreBandwidth(kId, Sample()).ok());                  // replaced in place
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(BandwidthCache, AddsCachedValueToDeviceBlock) {
  nlohmann::json device = {{"id", kId}, {"label", "x"}};
  AddCachedBandwidth(device);
  EXPECT_TRUE(device["memory_bandwidth_bytes_per_s"].is_null());  // never probed
  ASSERT_TRUE(StoreBandwidth(kId, Sample()).ok());
  AddCachedBandwidth(device);
  EXPECT_EQ(device["memory_bandwidth_bytes_per_s"], 21.5e9);
}

TEST_F(BandwidthCache, BadFilesReadAsAbsent) {
  const std::string path = BandwidthCachePath(kId);
  ASSERT_TRUE(StoreBandwidth(kId, Sample()).ok());
  Edit(path, "stream-triad/1", "stream-triad/0");  // another method version
  EXPECT_FALSE(CachedBandwidth(kId).has_value());
  Write(path, "{\"schema\": \"pipette.bandwidth/1\", \"device_id\": \"" + kId + "\", \"meth");
  EXPECT_FALSE(CachedBandwidth(kId).has_value());
  Write(path, "");
  EXPECT_FALSE(CachedBandwidth(kId).has_value());
  // Copied from another device: the id inside must match too.
  ASSERT_TRUE(StoreBandwidth(kId, Sample()).ok());
  fs::copy_file(path, BandwidthCachePath(std::string(64, 'c')));
  EXPECT_FALSE(CachedBandwidth(std::string(64, 'c')).has_value());
}

TEST_F(BandwidthCache, WriteErrorsNameThePath) {
  const Status bad_id = StoreBandwidth("../x", Sample());
  ASSERT_FALSE(bad_id.ok());
  EXPECT_NE(bad_id.error().message.find("invalid device id '../x'"), std::string::npos);
  const fs::path file = dir_ / "a-file";
  Write(file, "x");
  setenv("PIPETTE_CACHE", (file / "sub").c_str(), 1);  // a folder under a regular file
  const Status s = StoreBandwidth(kId, Sample());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find((file / "sub").string()), std::string::npos);
}

TEST(DecodeRoofline, RatioOfStreamedBytesToBandwidth) {
  // 20 tokens/s x 1 GB of weights per token over 40 GB/s: half the physical limit.
  EXPECT_DOUBLE_EQ(*DecodeRooflineEfficiency(20, 1e9, 40e9), 0.5);
  EXPECT_DOUBLE_EQ(*DecodeRooflineEfficiency(50, 4.0e8, 20e9), 1.0);
  EXPECT_FALSE(DecodeRooflineEfficiency(20, 1e9, 0).has_value());
  EXPECT_FALSE(DecodeRooflineEfficiency(0, 1e9, 40e9).has_value());
  EXPECT_FALSE(DecodeRooflineEfficiency(std::nan(""), 1e9, 40e9).has_value());
  EXPECT_FALSE(DecodeRooflineEfficiency(20, 1e9, INFINITY).has_value());
}


// ---- The noise floor (platform/noise_floor.h) ------------------------------------------------

using nlohmann::json;

TEST(NoiseFloor, RobustSpreadIsTheSpreadOfTheBulkNotOfOutliers) {
  EXPECT_EQ(RobustSpread({}), 0);
  EXPECT_EQ(RobustSpread({5}), 0);
  EXPECT_EQ(RobustSpread({10, 10, 10, 10}), 0);
  // Median 10, absolute deviations {1, 0, 1, 0, 0.5}: MAD 0.5 -> 1.4826 x 0.5 / 10.
  EXPECT_NEAR(RobustSpread({9, 10, 11, 10, 10.5}), 0.07413, 1e-6);
  // One run 100x longer (a preempted run) leaves it under 10%, where the plain coefficient of
  // variation would be over 200%.
  EXPECT_LT(RobustSpread({9, 10, 11, 10, 10.5, 1000}), 0.1);
}

TEST(NoiseFloor, MeasuresBothModesAlternatingOnTheAllowedCpus) {
  NoiseFloorOptions o;
  o.runs = 12;
  o.run_ms = 2;
  auto r = MeasureNoiseFloor(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::vector<int> allowed = AllowedCpus();
  EXPECT_EQ(r->pinned.run_ms.size(), 12u);
  EXPECT_EQ(r->unpinned.run_ms.size(), 12u);
  EXPECT_EQ(r->memory.run_ms.size(), 12u);
  EXPECT_EQ(r->pinned.cpu, allowed.back());
  EXPECT_EQ(r->unpinned.cpu, -1);
  EXPECT_EQ(r->memory.cpu, allowed.back());  // streaming on the pinned mode's CPU
  EXPECT_EQ(r->cpus, FormatCpuList(allowed));
  for (const NoiseFloorMode* m : {&r->pinned, &r->unpinned, &r->memory}) {
    EXPECT_GT(m->median_ms, 0);
    EXPECT_TRUE(std::isfinite(m->spread));
    EXPECT_GE(m->spread, 0);
    EXPECT_DOUBLE_EQ(m->spread, RobustSpread(m->run_ms));
  }
  EXPECT_EQ(r->method, "fma-l1-stream-alternating/2");
  EXPECT_EQ(r->measured_at.size(), 24u) << r->measured_at;  // 2026-01-02T03:04:05.678Z
  // The caller's own affinity is left as it was.
  EXPECT_EQ(AllowedCpus(), allowed);
  // JSON and back.
  const NoiseFloorResult back = NoiseFloorFromJson(NoiseFloorJson(*r));
  EXPECT_EQ(back.pinned.run_ms, r->pinned.run_ms);
  EXPECT_EQ(back.unpinned.spread, r->unpinned.spread);
  EXPECT_EQ(back.memory.run_ms, r->memory.run_ms);
  EXPECT_EQ(back.measured_at, r->measured_at);
}

TEST(NoiseFloor, OptionsOutOfRangeAreOneLineErrors) {
  NoiseFloorOptions o;
  o.runs = 9;
  auto few = MeasureNoiseFloor(o);
  ASSERT_FALSE(few.ok());
  EXPECT_EQ(few.error().message, "noise floor runs must be from 10 to 10000, not 9");
  o.runs = 10;
  o.run_ms = 0;
  EXPECT_EQ(MeasureNoiseFloor(o).error().message, "noise floor run_ms must be from 1 to 1000");
  o.run_ms = 1;
  o.memory_bytes = 1000;
  EXPECT_EQ(MeasureNoiseFloor(o).error().message,
            "noise floor memory_bytes must be from 1 MiB to 4 GiB");
  o.memory_bytes = 1 << 20;
  o.allowed_cpus = {4095};
  auto absent = MeasureNoiseFloor(o);
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.error().message.find("CPU 4095 is not available here"), std::string::npos)
      << absent.error().message;
}

TEST(NoiseFloor, TheProbeMeasuresItAndRefusesWhatDoesNotFit) {
  auto measured =
      NoiseFloorFromProbe(AnswerProbe({{"noise_floor", {{"runs", 10}, {"run_ms", 1}}}}));
  ASSERT_TRUE(measured.ok()) << measured.error().message;
  EXPECT_EQ(measured->pinned.run_ms.size(), 10u);
  EXPECT_EQ(measured->memory.run_ms.size(), 10u);
  auto small = NoiseFloorFromProbe(
      AnswerProbe({{"noise_floor", {{"runs", 10}, {"run_ms", 1}, {"memory_bytes", 1 << 20}}}}));
  ASSERT_TRUE(small.ok()) << small.error().message;
  EXPECT_EQ(small->memory.run_ms.size(), 10u);
  auto huge = NoiseFloorFromProbe(
      AnswerProbe({{"noise_floor", {{"runs", 10}, {"memory_bytes", 1ull << 40}}}}));
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().message, "noise floor memory_bytes must be from 1 MiB to 4 GiB");
  auto refused = NoiseFloorFromProbe(AnswerProbe({{"noise_floor", {{"runs", 3}}}}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "noise floor runs must be from 10 to 10000, not 3");
  auto older = NoiseFloorFromProbe(AnswerProbe({{"thermal", true}}));
  ASSERT_FALSE(older.ok());
  EXPECT_NE(older.error().message.find("older build"), std::string::npos);
  // Mistyped members: defaults, never a throw.
  EXPECT_EQ(NoiseFloorFromJson({{"pinned", {{"spread", "wide"}}}}).pinned.spread, 0);
}

TEST_F(BandwidthCache, NoiseFloorIsCachedPerDeviceAndSummarizedInTheDeviceBlock) {
  const std::string id = "00aa11bb";
  json device = {{"id", id}};
  AddCachedNoiseFloor(device);
  EXPECT_TRUE(device["noise_floor"].is_null());  // never probed
  NoiseFloorResult r;
  r.pinned = {0.011, 40.2, {40.0, 40.2, 40.9}, 0};
  r.unpinned = {0.024, 40.6, {40.1, 40.6, 42.0}, -1};
  r.cpus = "0-1";
  r.measured_at = "2026-01-02T03:04:05.678Z";
  ASSERT_TRUE(StoreNoiseFloor(id, r).ok());
  EXPECT_EQ(NoiseFloorCachePath(id), (fs::path(dir_) / ("noise-floor-" + id + ".json")).string());
  auto cached = CachedNoiseFloor(id);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->unpinned.run_ms, r.unpinned.run_ms);
  AddCachedNoiseFloor(device);
  EXPECT_EQ(device["noise_floor"], json({{"pinned", 0.011}, {"unpinned", 0.024}, {"cpu", 0},
                                         {"measured_at", "2026-01-02T03:04:05.678Z"}}));
  // Another device's id, an id that would escape the folder, a file of another device: absent.
  EXPECT_FALSE(CachedNoiseFloor("00aa11bc").has_value());
  EXPECT_EQ(NoiseFloorCachePath("../x"), "");
  EXPECT_FALSE(StoreNoiseFloor("../x", r).ok());
  fs::copy_file(NoiseFloorCachePath(id), NoiseFloorCachePath("00aa11bc"));
  EXPECT_FALSE(CachedNoiseFloor("00aa11bc").has_value());
  // With the memory mode, the summary has its spread.
  r.memory = {0.06, 41.0, {39.0, 41.0, 44.0}, 0};
  ASSERT_TRUE(StoreNoiseFloor(id, r).ok());
  AddCachedNoiseFloor(device);
  EXPECT_EQ(device["noise_floor"]["memory"], 0.06);
  // A cache of the first method (no memory mode) is still read, without one.
  json v1 = NoiseFloorJson(r);
  v1.erase("memory");
  v1["method"] = "fma-l1-alternating/1";
  v1["schema"] = "pipette.noise_floor/1";
  v1["device_id"] = id;
  std::ofstream(NoiseFloorCachePath(id)) << v1.dump();
  ASSERT_TRUE(CachedNoiseFloor(id).has_value());
  EXPECT_TRUE(CachedNoiseFloor(id)->memory.run_ms.empty());
  v1["method"] = "something-else/9";
  std::ofstream(NoiseFloorCachePath(id)) << v1.dump();
  EXPECT_FALSE(CachedNoiseFloor(id).has_value());
  std::ofstream(NoiseFloorCachePath(id)) << "{not json";
  EXPECT_FALSE(CachedNoiseFloor(id).has_value());
}

}  // namespace
}  // namespace pipette
