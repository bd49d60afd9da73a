#include "driver/cpu_level.h"

#include <vector>

#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#ifndef PIPETTE_CPU_LEVEL
#define PIPETTE_CPU_LEVEL "native"
#endif
#ifndef PIPETTE_TARGET
#define PIPETTE_TARGET "host"
#endif

namespace pipette::driver {
namespace {

// The features of CpuLevel() this CPU lacks, by their /proc/cpuinfo names.
std::vector<std::string> Missing() {
  const std::string level = CpuLevel();
  std::vector<std::string> missing;
#if defined(__aarch64__)
  const unsigned long hw = getauxval(AT_HWCAP);
  if (level.find("dotprod") != std::string::npos && !(hw & HWCAP_ASIMDDP)) {
    missing.push_back("asimddp (dotprod)");
  }
  if (level.find("fp16") != std::string::npos && !(hw & HWCAP_ASIMDHP)) {
    missing.push_back("asimdhp (fp16)");
  }
#elif defined(__x86_64__)
  __builtin_cpu_init();
  if (level == "x86-64-v3") {
    if (!__builtin_cpu_supports("avx2")) missing.push_back("avx2");
    if (!__builtin_cpu_supports("fma")) missing.push_back("fma");
    if (!__builtin_cpu_supports("bmi2")) missing.push_back("bmi2");
  }
  if (level == "x86-64-v3" || level == "x86-64-v2") {
    if (!__builtin_cpu_supports("sse4.2")) missing.push_back("sse4_2");
    if (!__builtin_cpu_supports("popcnt")) missing.push_back("popcnt");
  }
#endif
  return missing;
}

std::string Baseline() {
  const std::string t = Target();
  if (t == "aarch64-linux") return "armv8-a";
  if (t == "x86_64-linux") return "x86-64-v2";
  return "";
}

}  // namespace

std::string CpuLevel() { return PIPETTE_CPU_LEVEL; }
std::string Target() { return PIPETTE_TARGET; }

std::string CpuLevelRefusal() {
  const std::vector<std::string> missing = Missing();
  if (missing.empty()) return "";
  std::string what;
  for (const auto& m : missing) what += (what.empty() ? "" : ", ") + m;
  return "pipette-llamacpp-driver: this driver is built for " + CpuLevel() +
         " but this CPU lacks " + what + "; use the " + Baseline() +
         " build (scripts/build-device.sh --target " + Target() + " --cpu " + Baseline() + ")";
}

}  // namespace pipette::driver
