#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "platform/proc_memory.h"

namespace pipette {
namespace {

// The value of the "<key>:  <n> kB" line, in kB; std::nullopt when the text has no such line.
std::optional<uint64_t> FieldKb(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream value(line.substr(key.size() + 1));
    uint64_t kb = 0;
    value >> kb;
    return kb;
  }
  return std::nullopt;
}

uint64_t FieldBytes(const std::string& text, const std::string& key) {
  return FieldKb(text, key).value_or(0) * 1024;
}

}  // namespace

ProcMemory ParseProcStatus(const std::string& text) {
  ProcMemory m;
  m.vm_hwm = FieldBytes(text, "VmHWM");
  m.vm_rss = FieldBytes(text, "VmRSS");
  m.vm_swap = FieldBytes(text, "VmSwap");
  m.rss_anon = FieldBytes(text, "RssAnon");
  m.rss_file = FieldBytes(text, "RssFile");
  m.rss_shmem = FieldBytes(text, "RssShmem");
  m.has_rss_split = FieldKb(text, "RssAnon").has_value();  // kernels before 4.5 have no split
  return m;
}

std::optional<ProcMemory> ReadProcMemory(pid_t pid, const std::string& proc_root) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/status");
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.empty()) return std::nullopt;
  return ParseProcStatus(text);
}

MemorySampler::MemorySampler(pid_t pid, int interval_ms) : pid_(pid), interval_ms_(interval_ms) {
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      Sample();
      std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms_));
    }
  });
}

MemorySampler::~MemorySampler() { Stop(); }

void MemorySampler::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void MemorySampler::Sample() {
  const auto m = ReadProcMemory(pid_);
  if (!m) return;
  std::lock_guard<std::mutex> lock(mu_);
  peak_ = std::max({peak_, m->vm_hwm, m->vm_rss + m->vm_swap});
  peak_swap_ = std::max(peak_swap_, m->vm_swap);
  if (!at_peak_ || m->Resident() > at_peak_->Resident()) at_peak_ = *m;
  ++readings_;
}

uint64_t MemorySampler::PeakBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}

uint64_t MemorySampler::PeakSwapBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_swap_;
}

std::optional<ProcMemory> MemorySampler::AtPeak() const {
  std::lock_guard<std::mutex> lock(mu_);
  return at_peak_;
}

int MemorySampler::Readings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return readings_;
}

}  // namespace pipette
