// CPU time of the whole machine and of our own processes, from procfs (DESIGN.md 4.5: "the
// short-term CPU busy fraction of the other processes ... from /proc/stat deltas"). Linux
// implementation in cpu_load_linux.cc; reads under a root that tests point at fixture folders.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pipette {

// One reading. Times are in clock ticks (USER_HZ, normally 1/100 s), summed over all CPUs; only
// differences between two readings of the same machine mean anything.
struct CpuSample {
  bool available = false;    // the aggregate "cpu" line of <proc_root>/stat was read
  uint64_t busy_ticks = 0;   // user + nice + system + irq + softirq + steal
  uint64_t total_ticks = 0;  // busy_ticks + idle + iowait
  // utime + stime of each of our processes (all their threads), by pid. A pid whose
  // <proc_root>/<pid>/stat could not be read (the process is gone) is absent.
  std::map<int, uint64_t> own_ticks;
};

// Reads <proc_root>/stat and <proc_root>/<pid>/stat for each pid in `own_pids` (pass pipette's
// own pid and its runtime driver's: their CPU time is not "other" load). Never fails: missing
// files give available == false or an absent pid. Thread-safe.
CpuSample ReadCpuSample(const std::string& proc_root, const std::vector<int>& own_pids);

// Fraction of all CPUs' time, in [0, 1], that processes other than ours were busy between
// readings `a` and `b` (b taken after a): (Δbusy - Δown) / Δtotal, clamped to [0, 1]. On a 4-CPU
// machine one other process spinning on one core gives 0.25. A pid of ours counts only when it is
// in both readings. Returns 0 when either reading is unavailable or no time passed.
double BusyFractionOfOthers(const CpuSample& a, const CpuSample& b);

}  // namespace pipette
