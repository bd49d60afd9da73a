#include <algorithm>
#include <fstream>
#include <sstream>

#include "platform/cpu_load.h"

namespace pipette {
namespace {

// Fills busy/total ticks from the aggregate "cpu  user nice system idle iowait irq softirq steal
// guest guest_nice" line. Guest time is already part of user, so it is not added again.
bool ParseAggregateCpuLine(const std::string& line, CpuSample* sample) {
  std::istringstream in(line);
  std::string label;
  in >> label;
  if (label != "cpu") return false;
  uint64_t v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int n = 0;
  while (n < 8 && in >> v[n]) ++n;
  if (n < 4) return false;  // at least user, nice, system and idle
  const uint64_t busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  sample->busy_ticks = busy;
  sample->total_ticks = busy + v[3] + v[4];
  return true;
}

// utime + stime from the text of /proc/<pid>/stat: fields 14 and 15, counted after the ")" that
// ends the command name (which may itself contain spaces and parentheses).
bool ParsePidStatTicks(const std::string& text, uint64_t* ticks) {
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(text.substr(close + 1));
  std::string field;
  for (int i = 0; i < 11; ++i) {  // state (field 3) .. cmajflt (field 13)
    if (!(in >> field)) return false;
  }
  uint64_t utime = 0, stime = 0;
  if (!(in >> utime >> stime)) return false;
  *ticks = utime + stime;
  return true;
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

CpuSample ReadCpuSample(const std::string& proc_root, const std::vector<int>& own_pids) {
  CpuSample sample;
  std::ifstream stat(proc_root + "/stat");
  std::string first_line;
  if (stat && std::getline(stat, first_line)) {
    sample.available = ParseAggregateCpuLine(first_line, &sample);
  }
  for (const int pid : own_pids) {
    uint64_t ticks = 0;
    if (ParsePidStatTicks(ReadWhole(proc_root + "/" + std::to_string(pid) + "/stat"), &ticks)) {
      sample.own_ticks[pid] = ticks;
    }
  }
  return sample;
}

double BusyFractionOfOthers(const CpuSample& a, const CpuSample& b) {
  if (!a.available || !b.available || b.total_ticks <= a.total_ticks) return 0;
  const double total = static_cast<double>(b.total_ticks - a.total_ticks);
  double busy = b.busy_ticks > a.busy_ticks ? static_cast<double>(b.busy_ticks - a.busy_ticks) : 0;
  for (const auto& [pid, after] : b.own_ticks) {
    const auto before = a.own_ticks.find(pid);
    // A pid reused by a new process can show less time than before: it then counts as others'.
    if (before != a.own_ticks.end() && after >= before->second) {
      busy -= static_cast<double>(after - before->second);
    }
  }
  return std::clamp(busy / total, 0.0, 1.0);
}

}  // namespace pipette
