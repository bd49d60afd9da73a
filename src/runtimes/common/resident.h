// RuntimeSession::ResidentAtPeak() from /proc readings (platform/proc_memory.h): the same rule for
// every runtime whose processes are pipette's.
#pragma once

#include <sys/types.h>

#include <optional>

#include "pipette/runtime.h"
#include "platform/proc_memory.h"

namespace pipette {

// The split of one reading; nullopt without a reading or when the kernel does not split VmRSS.
inline std::optional<ResidentSplit> SplitOf(const std::optional<ProcMemory>& m) {
  if (!m || !m->has_rss_split) return std::nullopt;
  return ResidentSplit{m->Resident(), m->rss_anon, m->rss_file, m->rss_shmem};
}

// A sampled process: its reading with the largest resident set (a last reading taken first, as
// PeakHostBytes does); not sampled: one reading of `pid` now.
inline std::optional<ResidentSplit> ResidentAtPeakOf(MemorySampler* sampler, pid_t pid) {
  if (sampler) {
    sampler->Sample();
    return SplitOf(sampler->AtPeak());
  }
  return SplitOf(ReadProcMemory(pid));
}

// Of two processes' splits, the one with the larger resident set (`a` on a tie).
inline std::optional<ResidentSplit> LargerResident(const std::optional<ResidentSplit>& a,
                                                   const std::optional<ResidentSplit>& b) {
  if (!a) return b;
  if (!b) return a;
  return b->resident_bytes > a->resident_bytes ? b : a;
}

}  // namespace pipette
