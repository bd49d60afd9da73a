// The noise-floor kernel (platform/noise_floor.h): runs on the measured device, in pipette and in
// pipette-llamacpp-driver's probe (`{"noise_floor": {...}}`). The per-device cache is the
// host's: noise_floor.cc.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>

#include "base/ids.h"
#include "platform/cpu_affinity.h"
#include "platform/noise_floor.h"

namespace pipette {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr size_t kFloats = 4096;  // 16 KiB: inside every L1 data cache pipette runs on

// `sweeps` passes of a[i] = a[i] * m + k over the array: independent multiply-adds the compiler
// vectorizes, no memory traffic beyond L1. The values stay bounded (m < 1), so no denormals or
// infinities change the speed between runs.
float Sweep(float* a, long sweeps) {
  for (long s = 0; s < sweeps; ++s) {
    for (size_t i = 0; i < kFloats; ++i) a[i] = a[i] * 0.9999f + 0.0001f;
  }
  return a[kFloats / 2];
}

// One pass of streaming reads over `n` words: what decode does to its weights, bound by the
// memory bandwidth the CPU gets, not by its arithmetic.
uint64_t Stream(const uint64_t* words, size_t n) {
  uint64_t sums[4] = {0, 0, 0, 0};
  for (size_t i = 0; i + 4 <= n; i += 4) {
    sums[0] += words[i];
    sums[1] += words[i + 1];
    sums[2] += words[i + 2];
    sums[3] += words[i + 3];
  }
  return sums[0] ^ sums[1] ^ sums[2] ^ sums[3];
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  return (*std::max_element(v.begin(), v.begin() + static_cast<long>(mid)) + hi) / 2;
}

Status SetOwnAffinity(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
    return MakeError("the kernel refused to pin the noise-floor thread to CPUs " +
                     FormatCpuList(cpus));
  }
  return Status::Ok();
}

void Summarize(NoiseFloorMode& m) {
  m.median_ms = Median(m.run_ms);
  m.spread = RobustSpread(m.run_ms);
}

}  // namespace

double RobustSpread(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double median = Median(values);
  if (!(median > 0)) return 0;
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - median));
  return 1.4826 * Median(std::move(deviations)) / median;
}

Result<NoiseFloorResult> MeasureNoiseFloor(const NoiseFloorOptions& options) {
  if (options.runs < 10 || options.runs > 10000) {
    return MakeError("noise floor runs must be from 10 to 10000, not " +
                     std::to_string(options.runs));
  }
  if (!(options.run_ms >= 1 && options.run_ms <= 1000)) {
    return MakeError("noise floor run_ms must be from 1 to 1000");
  }
  if (options.memory_bytes < (1u << 20) || options.memory_bytes > (1ull << 32)) {
    return MakeError("noise floor memory_bytes must be from 1 MiB to 4 GiB");
  }
  std::vector<int> cpus = options.allowed_cpus.empty() ? AllowedCpus() : options.allowed_cpus;
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  if (cpus.empty()) return MakeError("no CPU to measure the noise floor on");
  if (auto s = CheckCpusAvailable(cpus); !s) return s.error();

  // In its own thread: the caller's affinity (a CLI's, a driver's) is never changed.
  Result<NoiseFloorResult> out = MakeError("the noise-floor thread did not run");
  std::thread worker([&] {
    NoiseFloorResult r;
    r.cpus = FormatCpuList(cpus);
    r.pinned.cpu = cpus.back();
    std::vector<float> a(kFloats, 1.0f);
    volatile float sink = 0;
    // Calibration: double the sweeps until one run lasts 5 ms, then scale to run_ms.
    long sweeps = 16;
    for (;;) {
      const auto t0 = Clock::now();
      sink = sink + Sweep(a.data(), sweeps);
      const double ms = Ms(Clock::now() - t0);
      if (ms >= 5 || sweeps > (1L << 40)) {
        sweeps = std::max(1L, static_cast<long>(static_cast<double>(sweeps) * options.run_ms /
                                                std::max(ms, 1e-3)));
        break;
      }
      sweeps *= 2;
    }
    const std::vector<int> one = {cpus.back()};
    // The memory mode's buffer, written first so every page is resident before it is timed, and
    // its passes per run from one timed pass.
    std::vector<uint64_t> words(options.memory_bytes / sizeof(uint64_t));
    for (size_t i = 0; i < words.size(); ++i) words[i] = i * 0x9E3779B97F4A7C15ull;
    volatile uint64_t stream_sink = 0;
    if (auto s = SetOwnAffinity(one); !s) {
      out = s.error();
      return;
    }
    const auto p0 = Clock::now();
    stream_sink = stream_sink + Stream(words.data(), words.size());
    const double pass_ms = std::max(Ms(Clock::now() - p0), 1e-3);
    const long passes = std::max(1L, std::lround(options.run_ms / pass_ms));
    r.memory.cpu = cpus.back();
    enum Mode { kPinned, kUnpinned, kMemory };
    for (int i = -2; i < options.runs; ++i) {  // two untimed rounds first
      for (const Mode mode : {kPinned, kUnpinned, kMemory}) {
        if (auto s = SetOwnAffinity(mode == kUnpinned ? cpus : one); !s) {
          out = s.error();
          return;
        }
        const auto t0 = Clock::now();
        if (mode == kMemory) {
          for (long p = 0; p < passes; ++p) {
            stream_sink = stream_sink + Stream(words.data(), words.size());
          }
        } else {
          sink = sink + Sweep(a.data(), sweeps);
        }
        const double ms = Ms(Clock::now() - t0);
        if (i >= 0) {
          (mode == kPinned ? r.pinned : mode == kUnpinned ? r.unpinned : r.memory)
              .run_ms.push_back(ms);
        }
      }
    }
    Summarize(r.pinned);
    Summarize(r.unpinned);
    Summarize(r.memory);
    r.measured_at = NowRfc3339();
    out = std::move(r);
  });
  worker.join();
  return out;
}

json NoiseFloorJson(const NoiseFloorResult& r) {
  const auto mode = [](const NoiseFloorMode& m) {
    return json{{"spread", m.spread}, {"median_ms", m.median_ms}, {"run_ms", m.run_ms},
                {"cpu", m.cpu}};
  };
  json j = {{"pinned", mode(r.pinned)}, {"unpinned", mode(r.unpinned)}, {"cpus", r.cpus},
            {"method", r.method}, {"measured_at", r.measured_at}};
  if (!r.memory.run_ms.empty()) j["memory"] = mode(r.memory);
  return j;
}

NoiseFloorResult NoiseFloorFromJson(const json& j) {
  NoiseFloorResult r;
  if (!j.is_object()) return r;
  const auto mode = [&](const char* key, NoiseFloorMode& m) {
    if (!j.contains(key) || !j[key].is_object()) return;
    const json& x = j[key];
    m.spread = x.value("spread", 0.0);
    m.median_ms = x.value("median_ms", 0.0);
    m.cpu = x.value("cpu", -1);
    if (x.contains("run_ms") && x["run_ms"].is_array()) {
      for (const json& v : x["run_ms"]) {
        if (v.is_number()) m.run_ms.push_back(v.get<double>());
      }
    }
  };
  try {  // a device's reply: a mistyped member leaves the rest at their defaults
    mode("pinned", r.pinned);
    mode("unpinned", r.unpinned);
    mode("memory", r.memory);
    r.cpus = j.value("cpus", "");
    r.method = j.value("method", r.method);
    r.measured_at = j.value("measured_at", "");
  } catch (const json::exception&) {
  }
  return r;
}

}  // namespace pipette
