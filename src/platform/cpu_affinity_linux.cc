// CPU lists and affinity on Linux (see cpu_affinity.h).
#include "platform/cpu_affinity.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pipette {
namespace {

constexpr int kMaxCpu = 4095;

Result<int> CpuNumber(const std::string& list, const std::string& text) {
  if (text.empty() || text.size() > 4 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return MakeError("CPU list '" + list + "': '" + text +
                     "' is not a CPU number; write it as taskset -c does, e.g. 0-3 or 0,2");
  }
  const int cpu = std::stoi(text);
  if (cpu > kMaxCpu) {
    return MakeError("CPU list '" + list + "': CPU " + text + " is above " +
                     std::to_string(kMaxCpu));
  }
  return cpu;
}

}  // namespace

Result<std::vector<int>> ParseCpuList(const std::string& list) {
  if (list.empty()) return MakeError("the CPU list is empty; give CPUs such as 0-3 or 0,2");
  std::vector<int> cpus;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string part = list.substr(start, comma - start);
    const size_t dash = part.find('-');
    auto first = CpuNumber(list, part.substr(0, dash));
    if (!first) return first.error();
    int last = *first;
    if (dash != std::string::npos) {
      auto end = CpuNumber(list, part.substr(dash + 1));
      if (!end) return end.error();
      if (*end < *first) {
        return MakeError("CPU list '" + list + "': range " + part + " ends below its start");
      }
      last = *end;
    }
    for (int c = *first; c <= last; ++c) cpus.push_back(c);
    start = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(cpus[j]);
    }
    i = j + 1;
  }
  return out;
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

Status CheckCpusAvailable(const std::vector<int>& cpus) {
  const std::vector<int> allowed = AllowedCpus();
  for (int c : cpus) {
    if (!std::binary_search(allowed.begin(), allowed.end(), c)) {
      return MakeError("CPU " + std::to_string(c) + " is not available here (this process may " +
                       "run on " + FormatCpuList(allowed) + ")");
    }
  }
  return {};
}

Status RestrictToCpus(const std::vector<int>& cpus) {
  if (cpus.empty()) return MakeError("no CPUs to run on; give CPUs such as 0-3 or 0,2");
  if (auto s = CheckCpusAvailable(cpus); !s) return s;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    return MakeError(std::string("sched_setaffinity failed: ") + std::strerror(errno));
  }
  return {};
}

}  // namespace pipette
