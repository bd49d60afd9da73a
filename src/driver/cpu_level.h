// The CPU level a driver was built for (DESIGN.md 8a: one static binary per architecture and
// CPU level) and the check that this CPU has what that level needs. A device build that starts
// on a CPU without the instructions it was compiled for would die of SIGILL somewhere inside
// llama.cpp; the driver refuses at once instead, naming the build to use.
#pragma once

#include <string>

namespace pipette::driver {

// The level compiled in (-DPIPETTE_CPU_LEVEL): "armv8.2-a+dotprod+fp16", "armv8-a",
// "x86-64-v3", "x86-64-v2", or "native" for the host build.
std::string CpuLevel();
// The target compiled in (-DPIPETTE_TARGET): "aarch64-linux", "x86_64-linux", or "host".
std::string Target();

// "" when this CPU runs CpuLevel(); otherwise one line: what it lacks and which build to use.
std::string CpuLevelRefusal();

}  // namespace pipette::driver
