#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "platform/proc_memory.h"

namespace pipette {
namespace {

uint64_t FieldKb(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream value(line.substr(key.size() + 1));
    uint64_t kb = 0;
    value >> kb;
    return kb;
  }
  return 0;
}

}  // namespace

ProcMemory ParseProcStatus(const std::string& text) {
  return {FieldKb(text, "VmHWM") * 1024, FieldKb(text, "VmRSS") * 1024,
          FieldKb(text, "VmSwap") * 1024};
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

int MemorySampler::Readings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return readings_;
}

}  // namespace pipette
