// RunCell: DESIGN.md 4.2 steps 2-7 as one loop for every benchmark type and every runtime. The
// workload (workload.h) supplies the benchmark's input, repetition and stopping rule; the loop
// owns the runtime session, warm-up, the readiness gate, thermal snapshots, validation,
// statistics and the record.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "base/ids.h"
#include "harness/model_file.h"
#include "harness/readiness.h"
#include "harness/record.h"
#include "harness/workload.h"
#include "pipette/cell.h"
#include "pipette/stats.h"
#include "platform/bandwidth.h"
#include "platform/device_access.h"
#include "platform/file_tail.h"
#include "platform/interrupt.h"
#include "platform/thermal.h"

namespace pipette {
namespace {

using nlohmann::json;
using SteadyTime = std::chrono::steady_clock;

double MsSince(SteadyTime::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyTime::now() - t0).count();
}

// Step 5's validation: every value finite and positive; harness_overhead may be zero or less, and
// a KL divergence zero (a model against itself).
Status Validate(const Rep& rep) {
  for (const auto& [name, v] : rep.values) {
    const bool may_be_zero = name == "kl_divergence" && v == 0;
    if (!std::isfinite(v) || (v <= 0 && name != "harness_overhead" && !may_be_zero)) {
      return MakeError(name + " = " + std::to_string(v) + " is not a finite positive value",
                       "validate");
    }
  }
  return Status::Ok();
}

class CellLoop {
 public:
  CellLoop(const CellSpec& spec, const CellHooks& hooks, json record)
      : spec_(spec), hooks_(hooks), record_(std::move(record)), runtime_(*spec.runtime) {
    namespace fs = std::filesystem;
    log_path_ = spec_.log_path;
    readings_ = spec_.device ? static_cast<DeviceReadings*>(spec_.device.get()) : &host_readings_;
    if (log_path_.empty()) {
      log_path_ = (fs::temp_directory_path() /
                   ("pipette-runtime-" + record_["result_id"].get<std::string>() + ".log"))
                      .string();
    }
  }

  json Run();

 private:
  void Progress(const std::string& line) {
    if (hooks_.progress) hooks_.progress(line);
  }
  Result<std::unique_ptr<RuntimeSession>> StartSession(const std::string& model,
                                                       const std::string& log, bool sample_memory);
  Result<Rep> Measure(Workload& w);
  Status AwaitReadiness();
  json Finish(Workload* w, const std::vector<Rep>& reps, const Error* failure, bool ci_reached);
  void AddRoofline(const std::map<std::string, std::vector<double>>& series, json& metrics);
  // Energy is metered around each repetition of the timed benchmarks (prefill, decode, e2e) where
  // the device reports it (platform/energy.h); a device with no source is asked once.
  bool MetersEnergy() {
    const BenchmarkType t = spec_.benchmark.type;
    if (t != BenchmarkType::kPrefill && t != BenchmarkType::kDecode &&
        t != BenchmarkType::kEndToEnd) {
      return false;
    }
    if (!energy_source_) {
      const EnergyReading r = readings_->Energy();
      energy_source_ = !r.rapl.empty() || r.battery_watts.has_value();
    }
    return *energy_source_;
  }
  void KeepLogTail() {
    if (session_) runtime_stderr_tail_ = session_->LogTail();
  }

  const CellSpec& spec_;
  const CellHooks& hooks_;
  json record_;
  Runtime& runtime_;
  std::unique_ptr<RuntimeSession> session_;
  bool prepared_ = false;
  bool facts_recorded_ = false;
  std::string runtime_stderr_tail_;
  std::string log_path_;
  double load_ms_ = -1;         // one load per cell (not memory benchmarks), ms
  double measured_ms_ = 0;      // wall time of warm-ups and repetitions, ms
  double readiness_wait_s_ = 0; // time spent in the readiness gate
  SteadyClock clock_;
  SteadyTime::time_point cell_t0_ = SteadyTime::now();
  // The device's readings: this machine's files under the readiness roots, or the device's.
  HostReadings host_readings_{spec_.readiness.sys_root, spec_.readiness.proc_root};
  DeviceReadings* readings_ = nullptr;
  std::optional<bool> energy_source_;  // unknown until first asked
};

Result<std::unique_ptr<RuntimeSession>> CellLoop::StartSession(const std::string& model,
                                                              const std::string& log,
                                                              bool sample_memory) {
  SessionOptions o;
  o.model_path = RuntimeModelPath(model, spec_.device.get());
  if (model == spec_.model_path) o.model_sha256 = record_["model"].value("sha256", "");
  o.settings = record_["runtime"]["settings"];
  o.log_path = log;
  o.timeout = std::chrono::seconds(spec_.policy.request_timeout_s);
  o.sample_memory = sample_memory;
  o.context_tokens = spec_.benchmark.type == BenchmarkType::kEval
                         ? record_["runtime"]["settings"].value("n_ctx", 0)
                         : ContextNeed(spec_.benchmark);
  o.on_started = hooks_.on_runtime_started;
  if (spec_.benchmark.type == BenchmarkType::kEval && model == spec_.model_path) {
    o.parallel = spec_.eval.parallel;  // the eval's sequences decoded together
  }
  auto s = runtime_.Start(o);
  if (!s) runtime_stderr_tail_ = ReadFileTail(log);
  return s;
}

// One warm-up or measured repetition; adds its wall time to measured_ms_. Thermal zones are read
// right before and after (untimed). A workload with a fresh session per repetition gets one here.
Result<Rep> CellLoop::Measure(Workload& w) {
  if (Interrupted()) return MakeError("interrupted by the user", std::string(TypeName(spec_.benchmark.type)));
  std::unique_ptr<RuntimeSession> fresh;
  if (w.FreshSessionPerRep()) {
    auto s = StartSession(spec_.model_path, log_path_, true);
    if (!s) return s.error();
    fresh = std::move(*s);
  }
  RuntimeSession& session = fresh ? *fresh : *session_;
  if (!facts_recorded_) {
    RecordLoadFacts(session.Facts(), record_);
    facts_recorded_ = true;
  }
  if (!prepared_) {
    if (auto s = w.Prepare(session, record_); !s) {
      runtime_stderr_tail_ = session.LogTail();
      return s.error();
    }
    prepared_ = true;
  }
  const json before = ThermalSnapshotJson(readings_->Thermal());
  const bool metered = MetersEnergy();
  const EnergyReading energy_before = metered ? readings_->Energy() : EnergyReading{};
  const auto t0 = SteadyTime::now();
  auto rep = w.Once(session);
  const double rep_ms = MsSince(t0);
  measured_ms_ += rep_ms;
  if (rep && metered) {
    const int tokens = rep->tokens_in + rep->tokens_out;
    if (auto joules = EnergyBetween(energy_before, readings_->Energy(), rep_ms / 1000);
        joules && tokens > 0 && rep_ms > 0) {
      rep->values["average_power"] = *joules / (rep_ms / 1000);
      rep->values["energy_per_token"] = 1000 * *joules / tokens;
    }
  }
  if (fresh) {
    runtime_stderr_tail_ = fresh->LogTail();
    fresh->Stop();
  }
  if (!rep) {
    if (!fresh) KeepLogTail();
    return rep.error();
  }
  rep->thermal_before = before;
  rep->thermal_after = ThermalSnapshotJson(readings_->Thermal());
  if (auto s = Validate(*rep); !s) return s.error();
  return rep;
}

Status CellLoop::AwaitReadiness() {
  // Our own CPU time is not load, where we run on the device measured; there the runtime's pids
  // are the device's.
  std::vector<int> own;
  if (!spec_.device || spec_.device->IsHost()) own.push_back(static_cast<int>(getpid()));
  if (session_) {
    for (int pid : session_->Pids()) own.push_back(pid);
  }
  // Said on the first poll that is not ready and every 10th after it (30 s at the default poll
  // interval): a wait of minutes must not look like a hang.
  const auto waiting = [&](const ReadinessWait& w) {
    if (w.polls % 10 != 1) return;
    Progress(fmt::format("waiting for the device to be ready ({:.0f} s of {:g} s): {}",
                         w.waited_s, spec_.readiness.deadline_s, w.last.DescribeHeld()));
  };
  auto wait = WaitUntilReady(spec_.readiness, clock_, own, *readings_,
                             [] { return Interrupted(); }, waiting);
  if (Interrupted()) return MakeError("interrupted by the user", "readiness");
  if (!wait) return wait.error();
  json& r = record_["harness"]["readiness"];
  if (r.value("policy", json()).is_null()) {
    r = {{"policy", PolicyJson(spec_.readiness, wait->last)}, {"waits", json::array()}};
  }
  r["waits"].push_back(WaitJson(*wait));
  readiness_wait_s_ += wait->waited_s;
  return Status::Ok();
}

json CellLoop::Run() {
  const BenchmarkSpec& b = spec_.benchmark;
  WorkloadContext context{
      spec_,
      [this](const std::string& model, const std::string& log) {
        return StartSession(model, log, false);
      },
      [this](const std::string& line) { Progress(line); }};
  std::unique_ptr<Workload> w;
  if (b.type == BenchmarkType::kSoak) {
    w = MakeSoakWorkload(context);
  } else if (b.type == BenchmarkType::kKlDivergence) {
    w = MakeKlWorkload(context);
  } else if (b.type == BenchmarkType::kEval) {
    w = MakeEvalWorkload(context);
  } else {
    w = MakeTimedWorkload(b, runtime_.Capabilities());
  }
  std::vector<Rep> reps;
  bool ci_reached = false;
  auto fail = [&](const Error& e) {
    KeepLogTail();
    return Finish(w.get(), reps, &e, false);
  };
  if (auto s = w->BeforeStart(record_); !s) return fail(s.error());
  if (!w->FreshSessionPerRep()) {
    Progress("starting " + runtime_.Identity().name + " with " + spec_.model_path);
    auto started = StartSession(spec_.model_path, log_path_, false);
    if (!started) return fail(started.error());
    session_ = std::move(*started);
    load_ms_ = session_->Facts().load_ms;
  }
  const HarnessPolicy& policy = spec_.policy;
  const int warmups = w->WarmupRuns(policy);
  for (int i = 0; i < warmups; ++i) {
    Progress("warm-up " + std::to_string(i + 1) + "/" + std::to_string(warmups));
    auto rep = Measure(*w);
    if (!rep) return fail(rep.error());
  }
  while (!w->Done(reps, policy, &ci_reached)) {
    if (w->Gated()) {
      if (auto s = AwaitReadiness(); !s) return fail(s.error());
    }
    if (policy.spin_up_ms > 0 && session_) {
      if (auto s = w->SpinUp(*session_, policy.spin_up_ms); !s) {
        return fail(Error{s.error().message + " (spinning up before a repetition)", "spin_up"});
      }
    }
    auto rep = Measure(*w);
    if (!rep) return fail(rep.error());
    if (rep->restart_session && session_) {
      // The runtime may be dead (an eval attempt that crashed it): a fresh one for the next.
      KeepLogTail();
      session_->Stop();
      Progress("restarting " + runtime_.Identity().name + " after a failed attempt");
      auto started = StartSession(spec_.model_path, log_path_, false);
      if (!started) return fail(started.error());
      session_ = std::move(*started);
    }
    reps.push_back(std::move(*rep));
    if (const std::string line = w->RepLine(reps); !line.empty()) Progress(line);
  }
  if (session_) {
    RecordLoadFacts(session_->Facts(), record_);  // what the runtime learned while running
    // The split first, so that its parts stay within the peak read after it (timed_workloads.cc).
    const auto split = session_->ResidentAtPeak();
    if (const auto peak = session_->PeakHostBytes()) {
      json& logs = record_["logs"];
      logs["peak_host_bytes_during_cell"] = *peak;
      if (split) {
        logs["rss_anon_bytes_at_peak_during_cell"] = split->anon_bytes;
        logs["rss_file_bytes_at_peak_during_cell"] = split->file_bytes;
        logs["rss_shmem_bytes_at_peak_during_cell"] = split->shmem_bytes;
      }
    }
    KeepLogTail();
    session_->Stop();
  }
  return Finish(w.get(), reps, nullptr, ci_reached);
}

// decode_roofline_efficiency (DESIGN.md 4.3): decode tokens/s x weight bytes read per token /
// the device's measured memory bandwidth. A dense model reads all of its weights per token; the
// token-embedding table, of which one row is read, is counted whole, so the figure errs high by
// at most that table's share.
void CellLoop::AddRoofline(const std::map<std::string, std::vector<double>>& series,
                           json& metrics) {
  const auto it = series.find("decode_throughput");
  if (it == series.end()) return;
  const json& bw = record_["device"]["memory_bandwidth_bytes_per_s"];
  const double bandwidth = bw.is_number() ? bw.get<double>() : 0.0;
  const double bytes = record_["model"].value("tensor_bytes", 0.0);
  if (bandwidth <= 0) {
    AddWarning(record_, "no memory bandwidth measured for this device, so no "
                        "decode_roofline_efficiency; run `pipette device probe` once");
    return;
  }
  std::vector<double> ratios;
  json& samples = record_["samples"];
  for (size_t i = 0; i < it->second.size(); ++i) {
    if (auto r = DecodeRooflineEfficiency(it->second[i], bytes, bandwidth)) {
      ratios.push_back(*r);
      if (i < samples.size()) samples[i]["decode_roofline_efficiency"] = *r;
    }
  }
  if (!ratios.empty()) metrics["decode_roofline_efficiency"] = ToJson(Summarize(ratios), "ratio");
}

json CellLoop::Finish(Workload* w, const std::vector<Rep>& reps, const Error* failure,
                      bool ci_reached) {
  json samples = json::array();
  std::map<std::string, std::vector<double>> series;
  std::vector<double> itl;
  for (size_t i = 0; i < reps.size(); ++i) {
    const Rep& r = reps[i];
    json s = {{"rep", i + 1},
              {"started_at", r.started_at},
              {"tokens_in", r.tokens_in},
              {"tokens_out", r.tokens_out},
              {"thermal_before", r.thermal_before},
              {"thermal_after", r.thermal_after}};
    s.update(r.extra);
    for (const auto& [name, v] : r.values) {
      s[name] = v;
      series[name].push_back(v);
    }
    if (!r.inter_token_ms.empty()) s["inter_token_latency"] = r.inter_token_ms;
    itl.insert(itl.end(), r.inter_token_ms.begin(), r.inter_token_ms.end());
    samples.push_back(std::move(s));
  }
  record_["samples"] = samples;
  record_["harness"]["reps"] = reps.size();
  record_["harness"]["ci_reached"] = ci_reached;
  // Where the cell's time went: a cell loads its model once, so its wall time should be close to
  // the warm-up plus measured time (the rest is start-up, input construction and hashing).
  record_["harness"]["timing"] = {{"cell_wall_ms", MsSince(cell_t0_)},
                                  {"warmup_and_measured_ms", measured_ms_},
                                  {"readiness_wait_ms", 1000 * readiness_wait_s_},
                                  {"load_ms", load_ms_ > 0 ? load_ms_ : 0.0}};
  record_["finished_at"] = NowRfc3339();
  if (!record_["logs"].contains("runtime_stderr_tail")) {
    record_["logs"]["runtime_stderr_tail"] = runtime_stderr_tail_;
  }
  // A log asked for is kept; a temporary one too when the cell failed (messages may point at
  // it, and nothing about a failure is lost); an ok cell's temporary log goes, its tail kept.
  if (!spec_.log_path.empty() || failure) {
    std::error_code ec;
    if (std::filesystem::exists(log_path_, ec)) record_["logs"]["runtime_log_path"] = log_path_;
  } else {
    std::filesystem::remove(log_path_);
  }
  if (failure) {
    MarkFailed(record_, *failure, "run");  // the samples before the failure are kept
    return record_;
  }
  json metrics = json::object();
  for (const auto& [name, values] : series) {
    metrics[name] = ToJson(Summarize(values), MetricUnit(name));
  }
  if (!itl.empty()) metrics["inter_token_latency"] = ToJson(Summarize(itl, true), "ms");
  if (load_ms_ > 0) metrics["load_time"] = ToJson(Summarize(std::vector<double>{load_ms_}), "ms");
  AddRoofline(series, metrics);
  if (w) w->Finish(reps, record_, metrics);
  record_["status"] = "ok";
  record_["metrics"] = metrics;
  return record_;
}

}  // namespace

bool AdaptiveDone(const std::vector<Rep>& reps, const std::string& metric,
                  const HarnessPolicy& policy, bool* ci_reached) {
  const int n = static_cast<int>(reps.size());
  // A confidence interval from fewer than 3 samples says nothing; it never counts as reached.
  if (n >= std::max(policy.min_reps, 3)) {
    std::vector<double> h;
    for (const Rep& r : reps) h.push_back(r.values.at(metric));
    if (CiWithinTarget(Summarize(h), policy.ci_target)) {
      *ci_reached = true;  // also at max_reps: the last repetition may be the one that reached it
      return true;
    }
  }
  return n >= policy.max_reps;
}

std::string AdaptiveRepLine(const std::vector<Rep>& reps, const std::string& metric) {
  std::vector<double> h;
  for (const Rep& r : reps) h.push_back(r.values.at(metric));
  const Summary s = Summarize(h);
  const int rep = static_cast<int>(reps.size());
  const std::string unit = MetricUnit(metric);
  std::string line = unit == "bytes"
                         ? fmt::format("rep {}: {} median {:.2f} MiB", rep, metric,
                                       s.median / (1024.0 * 1024.0))
                         : fmt::format("rep {}: {} median {:.6g} {}", rep, metric, s.median, unit);
  if (s.n < 3) return line + " (n < 3: no interval)";
  // The wider side of the interval, as the stopping rule (CiWithinTarget) judges it.
  const double half_width =
      100.0 * std::max(s.ci95_high - s.median, s.median - s.ci95_low) / std::fabs(s.median);
  // Two significant digits below 0.1%, so that a tight interval does not read as +-0.0%.
  return line + (half_width >= 0.1 ? fmt::format(", 95% CI +-{:.1f}%", half_width)
                                   : fmt::format(", 95% CI +-{:.2g}%", half_width));
}

Result<nlohmann::json> RunCell(const CellSpec& spec, const CellHooks& hooks) {
  auto record = ResolveCell(spec, hooks);
  if (!record) return record.error();
  CellLoop loop(spec, hooks, std::move(*record));
  return loop.Run();
}

}  // namespace pipette
