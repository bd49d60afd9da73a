// Device fingerprint from Linux /proc, /sys and /etc (see device.h). Every reader tolerates
// absent files: VMs, containers, ARM boards and laptops each lack a different subset.
#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "platform/cpu_affinity.h"
#include "platform/device.h"
#include "platform/sysfs_text.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<uint64_t> ParseU64(const std::string& s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return std::nullopt;
  try {
    return std::stoull(s);
  } catch (...) {
    return std::nullopt;
  }
}

// "32K", "1024 KB", "8M", "512" -> bytes (binary multiples, as sysfs and cpuinfo use them).
uint64_t ParseSizeBytes(const std::string& text) {
  std::istringstream in(text);
  uint64_t n = 0;
  std::string unit;
  if (!(in >> n)) return 0;
  in >> unit;
  const char u = unit.empty() ? ' ' : static_cast<char>(std::toupper(unit[0]));
  if (u == 'K') return n << 10;
  if (u == 'M') return n << 20;
  if (u == 'G') return n << 30;
  return n;
}

// Entries of `dir` named <prefix><digits>, ordered by that number.
std::vector<std::pair<int, fs::path>> NumberedEntries(const fs::path& dir,
                                                      const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(c); }))
      continue;
    out.push_back({std::stoi(digits), entry.path()});
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What /proc/cpuinfo says, both shapes: x86 ("model name", "vendor_id", "flags") and ARM
// ("CPU implementer", "CPU part" per processor, "Features", and on vendor kernels "Hardware").
struct Cpuinfo {
  std::string model_name, vendor_id, flags, features, hardware, board, cache_size;
  std::vector<std::pair<std::string, std::string>> arm_cores;  // (implementer, part) per CPU
};

Cpuinfo ParseCpuinfo(const std::string& text) {
  Cpuinfo c;
  // Fields that repeat per processor: the first occurrence is kept.
  const std::map<std::string, std::string*> first_of = {
      {"model name", &c.model_name}, {"vendor_id", &c.vendor_id}, {"flags", &c.flags},
      {"Features", &c.features},     {"Hardware", &c.hardware},   {"Model", &c.board},
      {"cache size", &c.cache_size}};
  std::istringstream in(text);
  std::string line, implementer;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = sysfs::Trim(line.substr(0, colon));
    const std::string value = sysfs::Trim(line.substr(colon + 1));
    if (const auto it = first_of.find(key); it != first_of.end()) {
      if (it->second->empty()) *it->second = value;
    } else if (key == "CPU implementer") {
      implementer = value;
    } else if (key == "CPU part") {
      c.arm_cores.push_back({implementer, value});
    }
  }
  return c;
}

std::string ArmImplementerName(const std::string& id) {
  static const std::map<std::string, std::string> kNames = {
      {"0x41", "ARM"},       {"0x42", "Broadcom"}, {"0x43", "Cavium"}, {"0x46", "Fujitsu"},
      {"0x48", "HiSilicon"}, {"0x4e", "NVIDIA"},   {"0x50", "APM"},    {"0x51", "Qualcomm"},
      {"0x53", "Samsung"},   {"0x56", "Marvell"},  {"0x61", "Apple"},  {"0x69", "Intel"},
      {"0xc0", "Ampere"}};
  const auto it = kNames.find(id);
  return it == kNames.end() ? id : it->second;
}

// Arm Ltd. core names by "CPU part" (implementer 0x41); other implementers print "<vendor> part".
std::string ArmCoreName(const std::string& implementer, const std::string& part) {
  static const std::map<std::string, std::string> kArm = {
      {"0xd03", "Cortex-A53"},  {"0xd04", "Cortex-A35"},  {"0xd05", "Cortex-A55"},
      {"0xd07", "Cortex-A57"},  {"0xd08", "Cortex-A72"},  {"0xd09", "Cortex-A73"},
      {"0xd0a", "Cortex-A75"},  {"0xd0b", "Cortex-A76"},  {"0xd0c", "Neoverse-N1"},
      {"0xd0d", "Cortex-A77"},  {"0xd40", "Neoverse-V1"}, {"0xd41", "Cortex-A78"},
      {"0xd44", "Cortex-X1"},   {"0xd46", "Cortex-A510"}, {"0xd47", "Cortex-A710"},
      {"0xd48", "Cortex-X2"},   {"0xd49", "Neoverse-N2"}, {"0xd4d", "Cortex-A715"},
      {"0xd4e", "Cortex-X3"},   {"0xd4f", "Neoverse-V2"}, {"0xd80", "Cortex-A520"},
      {"0xd81", "Cortex-A720"}, {"0xd82", "Cortex-X4"}};
  if (implementer == "0x41") {
    const auto it = kArm.find(part);
    if (it != kArm.end()) return it->second;
  }
  return ArmImplementerName(implementer) + " part " + part;
}

// "Cortex-A55 x4 + Cortex-A76 x4", core types in order of first appearance.
std::string ArmCoresSummary(const std::vector<std::pair<std::string, std::string>>& cores) {
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& [implementer, part] : cores) {
    const std::string name = ArmCoreName(implementer, part);
    auto it = std::find_if(counts.begin(), counts.end(), [&](auto& c) { return c.first == name; });
    if (it == counts.end()) {
      counts.push_back({name, 1});
    } else {
      ++it->second;
    }
  }
  std::string out;
  for (const auto& [name, n] : counts) {
    out += (out.empty() ? "" : " + ") + name + " x" + std::to_string(n);
  }
  return out;
}

// The distinct words of a cpuinfo "flags"/"Features" line, sorted, space-separated.
std::string SortedWords(const std::string& text) {
  std::istringstream in(text);
  const std::set<std::string> words{std::istream_iterator<std::string>(in), {}};
  std::string joined;
  for (const auto& w : words) joined += (joined.empty() ? "" : " ") + w;
  return joined;
}

CpuInfo ReadCpu(const Cpuinfo& ci, const DeviceRoots& roots) {
  CpuInfo cpu;
  const bool arm =
      !ci.arm_cores.empty() && (ci.model_name.empty() || ci.model_name.rfind("ARMv", 0) == 0);
  if (arm) {
    const std::string cores = ArmCoresSummary(ci.arm_cores);
    cpu.model = ci.hardware.empty() ? cores : ci.hardware + " (" + cores + ")";
    cpu.vendor = ArmImplementerName(ci.arm_cores.front().first);
  } else {
    cpu.model = ci.model_name.empty() ? ci.hardware : ci.model_name;
    cpu.vendor = ci.vendor_id;
  }
  const CpuTopology topo = ReadCpuTopology(roots.sys);
  cpu.physical_cores = topo.physical;
  cpu.logical_cores = topo.logical;
  cpu.smt = topo.logical > topo.physical;
  cpu.flags = SortedWords(ci.flags.empty() ? ci.features : ci.flags);
  const fs::path cache_dir = fs::path(roots.sys) / "devices/system/cpu/cpu0/cache";
  for (const auto& [index, dir] : NumberedEntries(cache_dir, "index")) {
    CacheInfo c;
    c.level = static_cast<int>(ParseU64(sysfs::ReadFirstLine(dir / "level")).value_or(0));
    c.type = sysfs::ReadFirstLine(dir / "type");
    c.size_bytes = ParseSizeBytes(sysfs::ReadFirstLine(dir / "size"));
    c.shared_cpus = sysfs::ReadFirstLine(dir / "shared_cpu_list");
    if (c.level > 0) cpu.caches.push_back(c);
  }
  std::stable_sort(cpu.caches.begin(), cpu.caches.end(), [](const auto& a, const auto& b) {
    return std::tie(a.level, a.type) < std::tie(b.level, b.type);
  });
  return cpu;
}

std::optional<CpuFrequency> ReadFrequency(const std::string& sys_root) {
  const fs::path cpu_dir = fs::path(sys_root) / "devices/system/cpu";
  std::optional<CpuFrequency> f;
  for (const auto& [n, dir] : NumberedEntries(cpu_dir, "cpu")) {
    const fs::path freq = dir / "cpufreq";
    const auto min = ParseU64(sysfs::ReadFirstLine(freq / "cpuinfo_min_freq"));
    const auto max = ParseU64(sysfs::ReadFirstLine(freq / "cpuinfo_max_freq"));
    const std::string governor = sysfs::ReadFirstLine(freq / "scaling_governor");
    if (!min && !max && governor.empty()) continue;
    if (!f) {
      f = CpuFrequency{governor, sysfs::ReadFirstLine(freq / "scaling_driver"), min.value_or(0), 0};
    }
    if (min && (f->min_khz == 0 || *min < f->min_khz)) f->min_khz = *min;
    if (max && *max > f->max_khz) f->max_khz = *max;
  }
  return f;
}

// "KEY=value" or KEY="value" lines of os-release(5).
std::map<std::string, std::string> ParseOsRelease(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos || line[0] == '#') continue;
    std::string v = sysfs::Trim(line.substr(eq + 1));
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
      v = v.substr(1, v.size() - 2);
    }
    kv[sysfs::Trim(line.substr(0, eq))] = v;
  }
  return kv;
}

OsInfo ReadOs(const DeviceRoots& roots) {
  utsname u{};
  uname(&u);
  std::string release = ReadAll(fs::path(roots.etc) / "os-release");
  if (release.empty()) {  // os-release(5): /usr/lib/os-release when /etc has none
    release = ReadAll(fs::path(roots.etc).parent_path() / "usr/lib/os-release");
  }
  auto kv = ParseOsRelease(release);
  OsInfo os;
  os.name = kv.count("NAME") ? kv["NAME"] : "unknown";
  os.version_id = kv["VERSION_ID"];
  os.pretty_name = kv.count("PRETTY_NAME") ? kv["PRETTY_NAME"] : os.name;
  os.kernel = sysfs::ReadFirstLine(fs::path(roots.proc) / "sys/kernel/osrelease");
  if (os.kernel.empty()) os.kernel = u.release;
  os.arch = sysfs::ReadFirstLine(fs::path(roots.proc) / "sys/kernel/arch");
  if (os.arch.empty()) os.arch = u.machine;
  return os;
}

std::string ReadBoard(const DeviceRoots& roots, const Cpuinfo& ci) {
  const fs::path dmi = fs::path(roots.sys) / "class/dmi/id";
  const std::string vendor = sysfs::ReadFirstLine(dmi / "sys_vendor");
  const std::string product = sysfs::ReadFirstLine(dmi / "product_name");
  if (!product.empty()) return vendor.empty() ? product : vendor + " " + product;
  const std::string dt =
      sysfs::ReadFirstLine(fs::path(roots.sys) / "firmware/devicetree/base/model");
  return dt.empty() ? ci.board : dt;
}

std::string PciVendorName(const std::string& id) {
  static const std::map<std::string, std::string> kNames = {
      {"0x10de", "NVIDIA"},   {"0x1002", "AMD"},       {"0x8086", "Intel"},  {"0x13b5", "ARM"},
      {"0x5143", "Qualcomm"}, {"0x1af4", "virtio"},    {"0x1234", "QEMU"},   {"0x15ad", "VMware"},
      {"0x1b36", "Red Hat"},  {"0x1414", "Microsoft"}, {"0x1a03", "ASPEED"}, {"0x102b", "Matrox"}};
  const auto it = kNames.find(id);
  return it == kNames.end() ? std::string() : it->second;
}

std::map<std::string, std::string> ParseUevent(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = sysfs::Trim(line.substr(eq + 1));
  }
  return kv;
}

std::vector<GpuInfo> ReadGpus(const DeviceRoots& roots) {
  std::vector<GpuInfo> gpus;
  for (const auto& [n, card] : NumberedEntries(fs::path(roots.sys) / "class/drm", "card")) {
    const fs::path dev = card / "device";
    auto uevent = ParseUevent(ReadAll(dev / "uevent"));
    GpuInfo g;
    g.card = card.filename().string();
    g.vendor_id = sysfs::Lower(sysfs::ReadFirstLine(dev / "vendor"));
    g.device_id = sysfs::Lower(sysfs::ReadFirstLine(dev / "device"));
    g.vendor = PciVendorName(g.vendor_id);
    g.driver = uevent["DRIVER"];
    g.pci_slot = sysfs::Lower(uevent["PCI_SLOT_NAME"]);
    g.name = uevent["OF_COMPATIBLE_0"];
    g.memory_bytes = ParseU64(sysfs::ReadFirstLine(dev / "mem_info_vram_total")).value_or(0);
    // The firmware framebuffer is replaced by the real driver during boot: not a device.
    if (g.driver == "simpledrm" || (g.vendor_id.empty() && g.driver.empty())) continue;
    gpus.push_back(g);
  }
  // NVIDIA's proprietary driver names its GPUs in procfs, with or without a DRM card.
  const fs::path nv = fs::path(roots.proc) / "driver/nvidia/gpus";
  std::error_code ec;
  std::vector<fs::path> nv_dirs;
  for (const auto& entry : fs::directory_iterator(nv, ec)) nv_dirs.push_back(entry.path());
  std::sort(nv_dirs.begin(), nv_dirs.end());
  for (const auto& dir : nv_dirs) {
    std::string model, bus;
    std::istringstream in(ReadAll(dir / "information"));
    std::string line;
    while (std::getline(in, line)) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = sysfs::Trim(line.substr(0, colon));
      if (key == "Model") model = sysfs::Trim(line.substr(colon + 1));
      if (key == "Bus Location") bus = sysfs::Lower(sysfs::Trim(line.substr(colon + 1)));
    }
    if (bus.empty()) bus = sysfs::Lower(dir.filename().string());
    auto it = std::find_if(gpus.begin(), gpus.end(), [&](auto& g) { return g.pci_slot == bus; });
    if (it == gpus.end()) {
      GpuInfo g;
      g.pci_slot = bus;
      const fs::path pci = fs::path(roots.sys) / "bus/pci/devices" / bus;
      g.vendor_id = sysfs::Lower(sysfs::ReadFirstLine(pci / "vendor"));
      if (g.vendor_id.empty()) g.vendor_id = "0x10de";
      g.device_id = sysfs::Lower(sysfs::ReadFirstLine(pci / "device"));
      g.vendor = PciVendorName(g.vendor_id);
      gpus.push_back(g);
      it = gpus.end() - 1;
    }
    if (!model.empty()) it->name = model;
    if (it->driver.empty()) it->driver = "nvidia";
  }
  return gpus;
}

PowerInfo ReadPower(const std::string& sys_root) {
  PowerInfo p;
  bool supply_online = false, discharging = false, battery_on_ac = false;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(sys_root) / "class/power_supply", ec)) {
    const fs::path d = entry.path();
    const std::string type = sysfs::ReadFirstLine(d / "type");
    if (sysfs::ReadFirstLine(d / "scope") == "Device") continue;  // a mouse's or headset's battery
    if (type == "Mains" || type == "USB" || type == "USB_C" || type == "USB_PD") {
      if (sysfs::ReadFirstLine(d / "online") == "1") supply_online = true;
    } else if (type == "Battery") {
      const std::string status = sysfs::ReadFirstLine(d / "status");
      if (status == "Discharging") discharging = true;
      if (status == "Charging" || status == "Full" || status == "Not charging") {
        battery_on_ac = true;
      }
    }
  }
  if (supply_online || (!discharging && battery_on_ac)) {
    p.source = "ac";
  } else if (discharging) {
    p.source = "battery";
  }
  p.profile = sysfs::ReadFirstLine(fs::path(sys_root) / "firmware/acpi/platform_profile");
  if (!p.profile.empty()) {
    p.profile_source = "platform_profile";
  } else {
    p.profile = sysfs::ReadFirstLine(fs::path(sys_root) /
                              "devices/system/cpu/cpu0/cpufreq/energy_performance_preference");
    if (!p.profile.empty()) p.profile_source = "energy_performance_preference";
  }
  return p;
}

std::vector<CpuCluster> ReadClusters(const std::string& sys_root) {
  std::map<uint64_t, std::vector<int>> by_khz;
  for (const auto& [cpu, dir] : NumberedEntries(fs::path(sys_root) / "devices/system/cpu", "cpu")) {
    if (const auto khz = ParseU64(sysfs::ReadFirstLine(dir / "cpufreq/cpuinfo_max_freq"))) {
      by_khz[*khz].push_back(cpu);
    }
  }
  std::vector<CpuCluster> out;
  for (const auto& [khz, cpus] : by_khz) out.push_back({FormatCpuList(cpus), khz});
  return out;
}

std::optional<BatteryInfo> ReadBattery(const std::string& sys_root) {
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(fs::path(sys_root) / "class/power_supply", ec)) {
    dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& d : dirs) {
    if (sysfs::ReadFirstLine(d / "type") != "Battery" ||
        sysfs::ReadFirstLine(d / "scope") == "Device") {
      continue;
    }
    BatteryInfo b;
    b.name = d.filename().string();
    if (const auto c = ParseU64(sysfs::ReadFirstLine(d / "capacity"))) {
      b.level_percent = static_cast<int>(*c);
    }
    b.status = sysfs::ReadFirstLine(d / "status");
    // Tenths of a degree C, may be negative.
    const std::string temp = sysfs::ReadFirstLine(d / "temp");
    if (!temp.empty()) {
      try {
        b.celsius = std::stod(temp) / 10.0;
      } catch (...) {
      }
    }
    return b;
  }
  return std::nullopt;
}

uint64_t MeminfoBytes(const std::string& meminfo, const std::string& key) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      return ParseSizeBytes(sysfs::Trim(line.substr(key.size() + 1)));
    }
  }
  return 0;
}

}  // namespace

CpuTopology ReadCpuTopology(const std::string& sys_root) {
  CpuTopology t;
  std::map<std::string, std::vector<int>> cores;  // core key -> its logical CPUs
  for (const auto& [cpu, dir] : NumberedEntries(fs::path(sys_root) / "devices/system/cpu", "cpu")) {
    if (sysfs::ReadFirstLine(dir / "online") == "0") continue;
    ++t.logical;
    std::string key = sysfs::ReadFirstLine(dir / "topology/thread_siblings_list");
    if (key.empty()) key = sysfs::ReadFirstLine(dir / "topology/core_cpus_list");
    if (key.empty()) {
      const std::string core = sysfs::ReadFirstLine(dir / "topology/core_id");
      if (core.empty()) continue;
      key = sysfs::ReadFirstLine(dir / "topology/physical_package_id") + ":" + core;
    }
    cores[key].push_back(cpu);
  }
  if (t.logical == 0) t.logical = static_cast<int>(std::thread::hardware_concurrency());
  for (auto& [key, cpus] : cores) t.cores.push_back(cpus);
  std::sort(t.cores.begin(), t.cores.end());
  t.physical = t.cores.empty() ? t.logical : static_cast<int>(t.cores.size());
  return t;
}

uint64_t TotalLastLevelCacheBytes(const DeviceRoots& roots) {
  int top_level = 0;
  std::map<std::pair<int, std::string>, uint64_t> caches;  // (level, shared cpus) -> size
  for (const auto& [cpu, dir] :
       NumberedEntries(fs::path(roots.sys) / "devices/system/cpu", "cpu")) {
    for (const auto& [index, c] : NumberedEntries(dir / "cache", "index")) {
      if (sysfs::ReadFirstLine(c / "type") == "Instruction") continue;
      const int level = static_cast<int>(ParseU64(sysfs::ReadFirstLine(c / "level")).value_or(0));
      std::string shared = sysfs::ReadFirstLine(c / "shared_cpu_list");
      if (shared.empty()) shared = "cpu" + std::to_string(cpu);
      caches[{level, shared}] = ParseSizeBytes(sysfs::ReadFirstLine(c / "size"));
      top_level = std::max(top_level, level);
    }
  }
  uint64_t total = 0;
  for (const auto& [key, size] : caches) {
    if (key.first == top_level) total += size;
  }
  if (total > 0) return total;
  return ParseSizeBytes(ParseCpuinfo(ReadAll(fs::path(roots.proc) / "cpuinfo")).cache_size);
}

std::vector<ThermalZone> ReadThermalZones(const std::string& sys_root, bool with_temperature) {
  std::vector<ThermalZone> zones;
  for (const auto& [n, dir] :
       NumberedEntries(fs::path(sys_root) / "class/thermal", "thermal_zone")) {
    ThermalZone z{n, sysfs::ReadFirstLine(dir / "type"), std::nullopt};
    if (with_temperature) {
      const std::string t = sysfs::ReadFirstLine(dir / "temp");
      try {
        if (!t.empty()) z.celsius = std::stod(t) / 1000.0;
      } catch (...) {
      }
    }
    zones.push_back(z);
  }
  return zones;
}

DeviceInfo ReadDeviceFacts(const DeviceRoots& roots) {
  DeviceInfo d;
  const Cpuinfo ci = ParseCpuinfo(ReadAll(fs::path(roots.proc) / "cpuinfo"));
  d.os = ReadOs(roots);
  d.cpu = ReadCpu(ci, roots);
  d.board = ReadBoard(roots, ci);
  d.frequency = ReadFrequency(roots.sys);
  const std::string meminfo = ReadAll(fs::path(roots.proc) / "meminfo");
  d.memory_bytes = MeminfoBytes(meminfo, "MemTotal");
  d.swap_bytes = MeminfoBytes(meminfo, "SwapTotal");
  d.gpus = ReadGpus(roots);
  d.power = ReadPower(roots.sys);
  d.thermal_zones = ReadThermalZones(roots.sys, false);
  if (!ci.flags.empty()) {
    std::istringstream in(ci.flags);
    const std::set<std::string> flags{std::istream_iterator<std::string>(in), {}};
    d.virtualized = flags.count("hypervisor") > 0;
  }
  d.machine_id = sysfs::ReadFirstLine(fs::path(roots.etc) / "machine-id");
  d.clusters = ReadClusters(roots.sys);
  d.battery = ReadBattery(roots.sys);
  // Live only (fixtures describe another machine than the one reading them): a program run by
  // qemu-user sees uname(2) say "aarch64" while the kernel's own file says "x86_64".
  if (roots.proc == "/proc") {
    utsname u{};
    if (uname(&u) == 0 && !d.os.arch.empty() && d.os.arch != u.machine) {
      d.emulated_on = d.os.arch;
      d.os.arch = u.machine;
    }
    // Kernels before 6.1 have no kernel/arch file; cpuinfo's layout still tells the family.
    const bool runs_arm = d.os.arch.rfind("aarch64", 0) == 0 || d.os.arch.rfind("arm", 0) == 0;
    const bool runs_x86 = d.os.arch == "x86_64" || d.os.arch == "i686" || d.os.arch == "i386";
    if (d.emulated_on.empty() && runs_arm && !ci.vendor_id.empty() && ci.arm_cores.empty()) {
      d.emulated_on = "x86_64";
    } else if (d.emulated_on.empty() && runs_x86 && !ci.arm_cores.empty()) {
      d.emulated_on = "aarch64";
    }
  }
  return d;
}

}  // namespace pipette
