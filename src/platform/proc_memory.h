// Peak memory of a child process from /proc/<pid>/status (Linux), DESIGN.md 4.3 `max_host_usage`:
// the peak over samples of max(VmHWM, VmRSS + VmSwap), sampled every 10 ms from the parent, so the
// measured process runs no probe code of its own.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace pipette {

// One reading of /proc/<pid>/status, in bytes.
struct ProcMemory {
  uint64_t vm_hwm = 0;   // peak resident set size
  uint64_t vm_rss = 0;   // current resident set size
  uint64_t vm_swap = 0;  // swapped-out anonymous memory
};

// Parses the text of a /proc/<pid>/status file ("VmHWM:   1234 kB" lines). Missing fields are 0.
ProcMemory ParseProcStatus(const std::string& text);

// Reads /proc/<pid>/status under `proc_root` (default "/proc"). std::nullopt if the process is
// gone or the file is unreadable.
std::optional<ProcMemory> ReadProcMemory(pid_t pid, const std::string& proc_root = "/proc");

// Samples a process in a background thread every `interval_ms` until Stop() or destruction.
// Thread-safe: Peak()/Sample() may be called from any thread while sampling runs.
class MemorySampler {
 public:
  explicit MemorySampler(pid_t pid, int interval_ms = 10);
  ~MemorySampler();
  MemorySampler(const MemorySampler&) = delete;
  MemorySampler& operator=(const MemorySampler&) = delete;

  // Takes one reading now (call it right before the process ends, to catch the final VmHWM).
  void Sample();
  void Stop();

  uint64_t PeakBytes() const;      // max over readings of max(VmHWM, VmRSS + VmSwap)
  uint64_t PeakSwapBytes() const;  // max VmSwap seen (non-zero means the figure is flagged)
  int Readings() const;

 private:
  pid_t pid_;
  int interval_ms_;
  mutable std::mutex mu_;
  uint64_t peak_ = 0;
  uint64_t peak_swap_ = 0;
  int readings_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace pipette
