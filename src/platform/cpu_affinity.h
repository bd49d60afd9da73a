// CPU lists and affinity (Linux): which CPUs a runtime may run on, in the list syntax of
// taskset -c and /sys/devices/system/cpu/online ("0", "0-3", "0,2,4-5").
#pragma once

#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette {

// Parses a CPU list into sorted, distinct CPU numbers. Errors name the list and what is wrong:
// empty, not a number, a range whose end is below its start, a CPU above 4095.
Result<std::vector<int>> ParseCpuList(const std::string& list);

// The canonical list of `cpus` (sorted, ranges folded): {0, 1, 2, 5} -> "0-2,5".
std::string FormatCpuList(std::vector<int> cpus);

// The CPUs this process may run on now (sched_getaffinity(2)), sorted.
std::vector<int> AllowedCpus();

// OK when every CPU of `cpus` is among AllowedCpus(); otherwise an Error naming the first one
// that is not and listing those that are ("CPU 7 is not available here (this process may run on
// 0-1)").
Status CheckCpusAvailable(const std::vector<int>& cpus);

// Restricts this process (its calling thread, and every thread it creates afterwards) to `cpus`
// (sched_setaffinity(2)). Errors: no CPUs, CheckCpusAvailable's, or the kernel refusing the mask.
Status RestrictToCpus(const std::vector<int>& cpus);

}  // namespace pipette
