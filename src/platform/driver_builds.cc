#include "platform/driver_builds.h"

#include <unistd.h>

#include <cstdlib>
#include <set>
#include <sstream>

#include "platform/cache_dir.h"

namespace pipette {
namespace {

std::set<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::set<std::string> out;
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

// The /proc/cpuinfo words each level needs (aarch64 "Features", x86 "flags").
std::vector<std::string> Needs(const std::string& level) {
  if (level == "armv8.2-a+dotprod+fp16") return {"asimddp", "asimdhp"};
  if (level == "armv8-a") return {"asimd"};
  if (level == "x86-64-v3") return {"avx2", "fma", "f16c", "bmi2", "sse4_2", "popcnt"};
  if (level == "x86-64-v2") return {"sse4_2", "popcnt"};
  return {"(unknown level)"};
}

}  // namespace

std::string DeviceDriverFolder() {
  if (const char* d = std::getenv("PIPETTE_DEVICE_DRIVERS"); d && *d) return d;
  return PipetteCacheDir() + "/device-drivers";
}

std::string TargetForArch(const std::string& m) {
  if (m == "aarch64" || m == "arm64" || m == "armv8l") return m == "armv8l" ? "" : "aarch64-linux";
  if (m == "x86_64" || m == "amd64") return "x86_64-linux";
  return "";
}

std::vector<std::string> CpuLevels(const std::string& target) {
  if (target == "aarch64-linux") return {"armv8.2-a+dotprod+fp16", "armv8-a"};
  if (target == "x86_64-linux") return {"x86-64-v3", "x86-64-v2"};
  return {};
}

bool CpuRunsLevel(const std::string& level, const std::string& cpu_words) {
  // Every 64-bit ARM CPU runs the baseline (old kernels say "neon" for asimd; an emulator may
  // show its host's words).
  if (level == "armv8-a") return true;
  const std::set<std::string> have = Words(cpu_words);
  for (const std::string& need : Needs(level)) {
    if (!have.count(need)) return false;
  }
  return true;
}

Result<DriverBuild> ChooseDriverBuild(const std::string& folder, const std::string& machine,
                                      const std::string& cpu_words) {
  const std::string target = TargetForArch(machine);
  if (target.empty()) {
    return MakeError("no driver for " + machine +
                     "; pipette builds drivers for aarch64-linux and x86_64-linux "
                     "(scripts/build-device.sh --target aarch64-linux|x86_64-linux)");
  }
  std::vector<std::string> built, refused;
  for (const std::string& level : CpuLevels(target)) {
    const std::string path = folder + "/" + target + "/" + level + "/pipette-llamacpp-driver";
    if (access(path.c_str(), R_OK) != 0) continue;
    built.push_back(level);
    if (CpuRunsLevel(level, cpu_words)) return DriverBuild{target, level, path};
    refused.push_back(level);
  }
  const std::string baseline = CpuLevels(target).back();
  if (built.empty()) {
    return MakeError("no driver built for " + target + " yet; build it with "
                     "scripts/build-device.sh --target " + target + " (looked in " + folder + ")");
  }
  return MakeError("this " + machine + " CPU cannot run the " + refused.front() +
                   " driver build; build the baseline with scripts/build-device.sh --target " +
                   target + " --cpu " + baseline);
}

}  // namespace pipette
