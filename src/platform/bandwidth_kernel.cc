// The bandwidth kernel (platform/bandwidth.h): runs on the measured device, in pipette and in
// pipette-llamacpp-driver's probe (`{"bandwidth": {...}}`, DESIGN.md 8a). The per-device cache is
// the host's: bandwidth.cc.
#include "platform/bandwidth.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "base/ids.h"
#include "platform/cpu_affinity.h"
#include "platform/device.h"

namespace pipette {
namespace {

using nlohmann::json;

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kMinimumTotalBytes = 256 * kMiB;
constexpr int kMaxRuns = 1000;
constexpr double kScalar = 3.0;
// Initial values: b = 1, c = 2, so every a[i] is 1 + 3 x 2 = 7 after any pass.
constexpr double kB = 1.0, kC = 2.0, kExpected = kB + kScalar * kC;

std::string Mib(uint64_t bytes) {
  std::ostringstream out;
  out.precision(bytes % kMiB == 0 ? 0 : 1);
  out << std::fixed << static_cast<double>(bytes) / kMiB << " MiB";
  return out.str();
}

uint64_t MemAvailableBytes(const std::string& proc_root) {
  std::ifstream in(proc_root + "/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

// CPUs in the order threads take them: the first allowed CPU of each physical core, then the
// remaining allowed CPUs (SMT siblings). `cores` is the count of the first kind.
std::vector<int> PinOrder(const CpuTopology& topo, const std::vector<int>& allowed, int* cores) {
  const std::set<int> ok(allowed.begin(), allowed.end());
  std::vector<int> order;
  for (const auto& core : topo.cores) {
    for (int cpu : core) {
      if (ok.count(cpu)) {
        order.push_back(cpu);
        break;
      }
    }
  }
  *cores = static_cast<int>(order.size());
  if (order.empty()) *cores = static_cast<int>(allowed.size());
  for (int cpu : allowed) {
    if (std::find(order.begin(), order.end(), cpu) == order.end()) order.push_back(cpu);
  }
  return order;
}

// The kernel, out of line so that the compiler sees one plain loop over restrict pointers.
[[gnu::noinline]] void Triad(double* __restrict a, const double* __restrict b,
                             const double* __restrict c, double s, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

// A barrier that spins instead of sleeping: a thread woken from a futex (or a VM's halted vCPU)
// starts its sweep late, and that lateness would count as time spent moving memory.
class SpinBarrier {
 public:
  explicit SpinBarrier(int n) : n_(n) {}
  void Wait() {
    const int generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      return;
    }
    for (uint64_t spins = 1; generation_.load(std::memory_order_acquire) == generation; ++spins) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
      if (spins % 65536 == 0) std::this_thread::yield();  // more threads than CPUs (quotas)
    }
  }

 private:
  const int n_;
  std::atomic<int> arrived_{0};
  std::atomic<int> generation_{0};
};

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

// Untouched memory: aligned_alloc of this size maps fresh pages, so the first write decides
// which NUMA node each page lives on.
Array AllocateUntouched(uint64_t bytes) {
  constexpr size_t kAlign = 4096;
  const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  return Array(static_cast<double*>(std::aligned_alloc(kAlign, rounded)));
}

}  // namespace

uint64_t MinimumBandwidthBytes(uint64_t llc_bytes) {
  return std::max(kMinimumTotalBytes, 3 * 4 * llc_bytes);
}

Result<BandwidthPlan> PlanBandwidth(const BandwidthOptions& o) {
  if (o.runs < 1 || o.runs > kMaxRuns) {
    return MakeError("runs must be between 1 and " + std::to_string(kMaxRuns) + ", not " +
                     std::to_string(o.runs));
  }
  if (!(o.min_run_seconds >= 0 && o.min_run_seconds <= 60)) {
    return MakeError("min_run_seconds must be between 0 and 60, not " +
                     std::to_string(o.min_run_seconds));
  }
  if (o.threads < 0) {
    return MakeError("threads must be at least 1 (or 0 for one per physical core), not " +
                     std::to_string(o.threads));
  }
  BandwidthPlan plan;
  const CpuTopology topo = ReadCpuTopology(o.sys_root);
  std::vector<int> allowed = o.allowed_cpus.empty() ? AllowedCpus() : o.allowed_cpus;
  if (allowed.empty()) {
    for (int c = 0; c < topo.logical; ++c) allowed.push_back(c);
  }
  int cores = 0;
  const std::vector<int> order = PinOrder(topo, allowed, &cores);
  if (o.threads > static_cast<int>(order.size())) {
    return MakeError("threads must be at most " + std::to_string(order.size()) +
                     " (the CPUs this process may use), not " + std::to_string(o.threads));
  }
  plan.threads = o.threads > 0 ? o.threads : std::max(1, cores);
  if (o.pin_threads) plan.cpus.assign(order.begin(), order.begin() + plan.threads);

  plan.llc_bytes = TotalLastLevelCacheBytes(DeviceRoots{o.proc_root, o.sys_root, "/etc"});
  plan.minimum_total_bytes = MinimumBandwidthBytes(plan.llc_bytes);
  const uint64_t total = o.total_bytes > 0 ? o.total_bytes : plan.minimum_total_bytes;
  if (o.enforce_minimum && total < plan.minimum_total_bytes) {
    return MakeError("a working set of " + Mib(total) + " is below the minimum of " +
                     Mib(plan.minimum_total_bytes) +
                     " (3 arrays, each at least 4x the last-level cache of " + Mib(plan.llc_bytes) +
                     ", 256 MiB in all): it would measure caches");
  }
  const uint64_t available = MemAvailableBytes(o.proc_root);
  if (available > 0 && total > available / 10 * 8) {
    return MakeError("a working set of " + Mib(total) + " is more than 80% of the " +
                     Mib(available) + " of available memory: it would swap");
  }
  const uint64_t granule = 8ull * plan.threads;  // one 64-byte line of doubles per thread
  plan.elements = total / 3 / 8 / granule * granule;
  if (plan.elements == 0) {
    return MakeError("a working set of " + std::to_string(total) + " bytes is too small for " +
                     std::to_string(plan.threads) + " threads");
  }
  plan.array_bytes = plan.elements * 8;
  return plan;
}

Result<BandwidthResult> MeasureBandwidth(const BandwidthOptions& options) {
  auto plan = PlanBandwidth(options);
  if (!plan) return plan.error();
  const int threads = plan->threads;
  const uint64_t n = plan->elements;
  Array a = AllocateUntouched(plan->array_bytes), b = AllocateUntouched(plan->array_bytes),
        c = AllocateUntouched(plan->array_bytes);
  if (!a || !b || !c) {
    return MakeError("cannot allocate 3 arrays of " + Mib(plan->array_bytes) +
                     " for the bandwidth probe");
  }
  const int passes = options.runs + 1;  // pass 0: one untimed sweep that sizes the runs
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> start(passes * threads), end(passes * threads);
  std::vector<char> pinned(threads, 0);
  const auto pass_seconds = [&](int p) {
    const auto first =
        *std::min_element(start.begin() + p * threads, start.begin() + (p + 1) * threads);
    const auto last = *std::max_element(end.begin() + p * threads, end.begin() + (p + 1) * threads);
    return std::chrono::duration<double>(last - first).count();
  };
  SpinBarrier sync(threads);
  int sweeps = 1;  // written by thread 0 between two barriers, read after the next one
  const uint64_t slice = n / threads;
  auto worker = [&](int t) {
    if (!plan->cpus.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(plan->cpus[t], &set);
      pinned[t] = pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
    }
    const uint64_t lo = t * slice, hi = t == threads - 1 ? n : lo + slice;
    for (uint64_t i = lo; i < hi; ++i) {  // first touch by the owning thread
      a[i] = 0.0;
      b[i] = kB;
      c[i] = kC;
    }
    for (int p = 0; p < passes; ++p) {
      sync.Wait();
      const int repeat = p == 0 ? 1 : sweeps;
      start[p * threads + t] = Clock::now();
      for (int s = 0; s < repeat; ++s) {
        Triad(a.get() + lo, b.get() + lo, c.get() + lo, kScalar, hi - lo);
      }
      end[p * threads + t] = Clock::now();
      sync.Wait();
      if (p == 0 && t == 0) {
        const double one = std::max(pass_seconds(0), 1e-6);
        sweeps = static_cast<int>(std::clamp(std::ceil(options.min_run_seconds / one), 1.0, 1e5));
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  for (auto& th : pool) th.join();

  for (uint64_t i : {uint64_t{0}, n / 2, n - 1}) {
    if (a[i] != kExpected) {
      return MakeError("the bandwidth probe computed a wrong triad result (a[" + std::to_string(i) +
                       "] = " + std::to_string(a[i]) + "): a broken build?");
    }
  }
  BandwidthResult r;
  r.threads = threads;
  r.array_bytes = plan->array_bytes;
  r.runs = options.runs;
  r.sweeps = sweeps;
  const bool all_pinned = std::all_of(pinned.begin(), pinned.end(), [](char p) { return p; });
  if (!plan->cpus.empty() && all_pinned) r.cpus = plan->cpus;
  const double bytes = 3.0 * 8.0 * static_cast<double>(n) * sweeps;
  for (int p = 1; p < passes; ++p) {
    const double seconds = pass_seconds(p);
    r.run_bytes_per_s.push_back(seconds > 0 ? bytes / seconds : 0.0);
  }
  r.bytes_per_s = *std::max_element(r.run_bytes_per_s.begin(), r.run_bytes_per_s.end());
  r.measured_at = NowRfc3339();
  return r;
}

json BandwidthJson(const BandwidthResult& r) {
  return {
      {"bytes_per_s", r.bytes_per_s},         {"method", r.method}, {"threads", r.threads},
      {"array_bytes", r.array_bytes},         {"runs", r.runs},     {"sweeps", r.sweeps},
      {"run_bytes_per_s", r.run_bytes_per_s}, {"cpus", r.cpus},     {"measured_at", r.measured_at}};
}

BandwidthResult BandwidthFromJson(const json& j) {
  BandwidthResult r;
  if (!j.is_object()) return r;
  r.bytes_per_s = j.value("bytes_per_s", 0.0);
  r.method = j.value("method", r.method);
  r.threads = j.value("threads", 0);
  r.array_bytes = j.value("array_bytes", size_t{0});
  r.runs = j.value("runs", 0);
  r.sweeps = j.value("sweeps", 1);
  r.run_bytes_per_s = j.value("run_bytes_per_s", std::vector<double>{});
  r.cpus = j.value("cpus", std::vector<int>{});
  r.measured_at = j.value("measured_at", "");
  return r;
}

}  // namespace pipette
