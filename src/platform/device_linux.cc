#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "base/sha256.h"
#include "platform/device.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Value of "key<spaces>: value" in a /proc file such as cpuinfo or meminfo.
std::string ProcField(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return {};
}

uint64_t MeminfoBytes(const std::string& proc_root, const std::string& key) {
  std::istringstream in(ProcField(proc_root + "/meminfo", key));
  uint64_t kb = 0;
  in >> kb;
  return kb * 1024;
}

std::string OsName() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  }
  return "unknown";
}

}  // namespace

CpuTopology ReadCpuTopology(const std::string& sys_root) {
  CpuTopology t;
  std::set<std::pair<std::string, std::string>> cores;
  std::error_code ec;
  const fs::path cpu_dir = fs::path(sys_root) / "devices/system/cpu";
  for (const auto& entry : fs::directory_iterator(cpu_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() < 4 || !isdigit(name[3])) continue;
    const std::string online = ReadFirstLine((entry.path() / "online").string());
    if (online == "0") continue;
    ++t.logical;
    const std::string core = ReadFirstLine((entry.path() / "topology/core_id").string());
    const std::string pkg = ReadFirstLine((entry.path() / "topology/physical_package_id").string());
    if (!core.empty()) cores.insert({pkg, core});
  }
  if (t.logical == 0) t.logical = static_cast<int>(std::thread::hardware_concurrency());
  t.physical = cores.empty() ? t.logical : static_cast<int>(cores.size());
  return t;
}

nlohmann::json DeviceFingerprint(const std::string& label, const std::string& proc_root,
                                 const std::string& sys_root) {
  utsname u{};
  uname(&u);
  const CpuTopology topo = ReadCpuTopology(sys_root);
  std::string cpu_model = ProcField(proc_root + "/cpuinfo", "model name");
  if (cpu_model.empty()) cpu_model = ProcField(proc_root + "/cpuinfo", "Hardware");
  const uint64_t mem = MeminfoBytes(proc_root, "MemTotal");
  const uint64_t swap = MeminfoBytes(proc_root, "SwapTotal");
  const std::string machine_id = ReadFirstLine("/etc/machine-id");
  std::string governor =
      ReadFirstLine(sys_root + "/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  const std::string stable = cpu_model + "|" + std::to_string(topo.physical) + "|" +
                             std::to_string(topo.logical) + "|" + std::to_string(mem) + "|" +
                             u.machine + "|" + machine_id;
  return {{"id", Sha256Hex(stable)},
          {"label", label},
          {"os", {{"name", OsName()}, {"kernel", u.release}, {"arch", u.machine}}},
          {"cpu",
           {{"model", cpu_model},
            {"physical_cores", topo.physical},
            {"logical_cores", topo.logical},
            {"smt", topo.logical > topo.physical}}},
          {"memory_bytes", mem},
          {"swap_bytes", swap},
          {"governor", governor.empty() ? nlohmann::json(nullptr) : nlohmann::json(governor)},
          {"gpus", nlohmann::json::array()}};
}

}  // namespace pipette
