// Peak memory of a child process from /proc/<pid>/status (Linux), DESIGN.md 4.3 `max_host_usage`:
// the peak over samples of max(VmHWM, VmRSS + VmSwap), sampled every 10 ms from the parent, so the
// measured process runs no probe code of its own. Beside the peak, the split of the resident set
// into anonymous, file-backed and shared-memory pages at the reading with the largest resident
// set, so mmapped weights (file-backed) can be told apart from copies of them (anonymous).
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
  uint64_t vm_rss = 0;   // current resident set size (= rss_anon + rss_file + rss_shmem)
  uint64_t vm_swap = 0;  // swapped-out anonymous memory
  // The kernel's split of VmRSS (Linux 4.5 and later; all 0 and has_rss_split false before).
  uint64_t rss_anon = 0;   // RssAnon: private and anonymous pages (heap, copied weights, KV cache)
  uint64_t rss_file = 0;   // RssFile: pages of mapped files (mmapped weights, binaries, libraries)
  uint64_t rss_shmem = 0;  // RssShmem: shared memory (SysV, POSIX shm, tmpfs, shared anonymous)
  bool has_rss_split = false;  // the text had an RssAnon line

  uint64_t Resident() const { return vm_rss + vm_swap; }
};

// Parses the text of a /proc/<pid>/status file ("VmHWM:   1234 kB" lines). Missing fields are 0.
ProcMemory ParseProcStatus(const std::string& text);

// Reads /proc/<pid>/status under `proc_root` (default "/proc"). std::nullopt if the process is
// gone or the file is unreadable.
std::optional<ProcMemory> ReadProcMemory(pid_t pid, const std::string& proc_root = "/proc");

// Samples a process in a background thread every `interval_ms` until Stop() or destruction.
// Thread-safe: every method may be called from any thread while sampling runs.
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
  // "At the peak": the whole reading whose VmRSS + VmSwap was the largest seen (the first of
  // equal ones); its rss_* fields split that resident set. VmHWM can rise and fall back between
  // two readings, so PeakBytes() may exceed this reading's Resident(): the split is that of the
  // largest resident set observed, never a guess at pages between readings. std::nullopt before
  // the first reading.
  std::optional<ProcMemory> AtPeak() const;
  int Readings() const;

 private:
  pid_t pid_;
  int interval_ms_;
  mutable std::mutex mu_;
  uint64_t peak_ = 0;
  uint64_t peak_swap_ = 0;
  std::optional<ProcMemory> at_peak_;
  int readings_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace pipette
