// Device builds of pipette-llamacpp-driver (DESIGN.md 8a): one statically linked binary per
// target and CPU level, made on request by scripts/build-device.sh and kept in
//   <folder>/<target>/<cpu_level>/pipette-llamacpp-driver
// where <folder> is $PIPETTE_DEVICE_DRIVERS, else $PIPETTE_CACHE/device-drivers, else
// ~/.cache/pipette/device-drivers (the script writes there). Targets and levels:
//   aarch64-linux  armv8.2-a+dotprod+fp16   recent phones, the Raspberry Pi 5 (needs asimddp and
//                                            asimdhp in /proc/cpuinfo's Features)
//                  armv8-a                   any 64-bit ARM (the baseline)
//   x86_64-linux   x86-64-v3                 AVX2, FMA, F16C (most x86 since 2015)
//                  x86-64-v2                 SSE4.2, POPCNT (the baseline)
#pragma once

#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette {

struct DriverBuild {
  std::string target;     // "aarch64-linux"
  std::string cpu_level;  // "armv8.2-a+dotprod+fp16"
  std::string path;       // the binary on this machine
};

// The folder described above.
std::string DeviceDriverFolder();

// "aarch64" -> "aarch64-linux", "x86_64" -> "x86_64-linux"; "" for an architecture pipette has
// no device build for ("armv7l", "riscv64").
std::string TargetForArch(const std::string& uname_machine);

// The CPU levels of `target`, best first, and whether a CPU with these /proc/cpuinfo
// flags/Features words (space-separated) can run each.
std::vector<std::string> CpuLevels(const std::string& target);
bool CpuRunsLevel(const std::string& cpu_level, const std::string& cpu_words);

// The best build in `folder` for a device of this architecture and CPU words. Errors, one line
// each naming what to run: an architecture with no device build ("no driver for armv7l; pipette
// builds drivers for aarch64-linux and x86_64-linux ..."), no build made yet for the target, or
// only builds this CPU cannot run.
Result<DriverBuild> ChooseDriverBuild(const std::string& folder, const std::string& uname_machine,
                                      const std::string& cpu_words);

}  // namespace pipette
