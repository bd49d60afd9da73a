// RunCell: DESIGN.md 4.2 steps 1-7 for prefill, decode, end-to-end and memory benchmarks.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "base/ids.h"
#include "base/sha256.h"
#include "harness/kl_runner.h"
#include "harness/soak_runner.h"
#include "harness/prompt.h"
#include "harness/record.h"
#include "pipette/cell.h"
#include "pipette/gguf.h"
#include "pipette/stats.h"
#include "platform/bandwidth.h"
#include "platform/device.h"
#include "platform/interrupt.h"
#include "platform/proc_memory.h"
#include "platform/thermal.h"
#include "runtimes/llamacpp/driver_client.h"

namespace pipette {
namespace {

using nlohmann::json;
using SteadyTime = std::chrono::steady_clock;

double MsSince(SteadyTime::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyTime::now() - t0).count();
}

// One repetition's values: metric name -> value (units per DESIGN.md 4.3), plus per-token
// latencies (ms) pooled into inter_token_latency.
struct Rep {
  std::map<std::string, double> values;
  std::vector<double> inter_token_ms;
  nlohmann::json thermal_before, thermal_after;  // zones around the timed work (DESIGN.md 4.2)
  int tokens_in = 0;
  int tokens_out = 0;
  std::string started_at;
};

// "rep 4: decode_throughput median 1602.3 tokens/s, 95% CI +-1.2%"; before the third repetition
// "rep 1: ... (n < 3: no interval)", as an interval of one or two samples says nothing.
std::string RepLine(int rep, const std::string& metric, const Summary& s) {
  const std::string unit = MetricUnit(metric);
  std::string line = unit == "bytes"
                         ? fmt::format("rep {}: {} median {:.2f} MiB", rep, metric,
                                       s.median / (1024.0 * 1024.0))
                         : fmt::format("rep {}: {} median {:.6g} {}", rep, metric, s.median, unit);
  if (s.n < 3) return line + " (n < 3: no interval)";
  const double half_width = 100.0 * (s.ci95_high - s.ci95_low) / 2 / s.median;
  // Two significant digits below 0.1%, so that a tight interval does not read as +-0.0%.
  return line + (half_width >= 0.1 ? fmt::format(", 95% CI +-{:.1f}%", half_width)
                                   : fmt::format(", 95% CI +-{:.2g}%", half_width));
}

Status Validate(const Rep& rep) {
  for (const auto& [name, v] : rep.values) {
    if (!std::isfinite(v) || (v <= 0 && name != "harness_overhead")) {
      return MakeError(name + " = " + std::to_string(v) + " is not a finite positive value",
                       "validate");
    }
  }
  return Status::Ok();
}

// A started driver with the model loaded. Its memory is sampled (every 10 ms, from a thread of
// ours) only for memory benchmarks: elsewhere the sampler would take CPU time from the driver's
// threads inside timed regions, and the kernel's own high-water mark (VmHWM) read once at the end
// is enough.
struct Runtime {
  std::unique_ptr<LlamaCppDriver> driver;
  std::unique_ptr<MemorySampler> memory;
  json load_reply;
  double load_ms = 0;
};

class CellRun {
 public:
  CellRun(const CellSpec& spec, const CellHooks& hooks, json record)
      : spec_(spec), hooks_(hooks), record_(std::move(record)), b_(spec.benchmark) {}

  json Run();

 private:
  void Progress(const std::string& line) {
    if (hooks_.progress) hooks_.progress(line);
  }
  Result<Runtime> StartRuntime();
  Status BuildInput(Runtime& rt);
  Result<Rep> MeasureOnce(Runtime& rt);
  Result<Rep> MeasureMemory();
  // One warm-up or measured repetition; adds its wall time to measured_ms_. Thermal zones are
  // read right before and after (untimed).
  Result<Rep> Measure(Runtime* rt) {
    if (Interrupted()) return MakeError("interrupted by the user", std::string(TypeName(b_.type)));
    const json before = ThermalSnapshotJson(ReadThermalSnapshot(spec_.readiness.sys_root));
    const auto t0 = SteadyTime::now();
    auto rep = b_.type == BenchmarkType::kMemory ? MeasureMemory() : MeasureOnce(*rt);
    measured_ms_ += MsSince(t0);
    if (rep) {
      rep->thermal_before = before;
      rep->thermal_after = ThermalSnapshotJson(ReadThermalSnapshot(spec_.readiness.sys_root));
    }
    return rep;
  }
  // The readiness gate before a measured repetition; records the policy and every wait.
  Status AwaitReadiness(const Runtime& rt);
  json Finish(const std::vector<Rep>& reps, const Error* failure, bool ci_reached);
  void AddRoofline(const std::map<std::string, std::vector<double>>& series, json& metrics);

  const CellSpec& spec_;
  const CellHooks& hooks_;
  json record_;
  const BenchmarkSpec& b_;
  json settings_;  // as sent to the driver
  std::vector<int32_t> prompt_tokens_;
  std::string prompt_text_;
  std::string runtime_stderr_tail_;
  std::string log_path_;
  double load_ms_ = -1;  // one load per cell (non-memory benchmarks), ms
  double measured_ms_ = 0;  // wall time of warm-ups and repetitions, ms
  double readiness_wait_s_ = 0;  // time spent in the readiness gate
  SteadyClock clock_;
  SteadyTime::time_point cell_t0_ = SteadyTime::now();
};

Result<Runtime> CellRun::StartRuntime() {
  const std::string path = spec_.driver_path.empty() ? DefaultDriverPath() : spec_.driver_path;
  Runtime rt;
  auto loaded = StartAndLoad(path, log_path_, std::chrono::seconds(spec_.policy.request_timeout_s),
                             spec_.model_path, settings_, [&](int pid) {
                               if (b_.type == BenchmarkType::kMemory) {
                                 rt.memory = std::make_unique<MemorySampler>(pid, 10);
                               }
                               if (hooks_.on_driver_started) hooks_.on_driver_started(pid);
                             });
  if (!loaded) {
    runtime_stderr_tail_ = ReadFileTail(log_path_);
    return loaded.error();
  }
  rt.driver = std::move(loaded->driver);
  rt.load_reply = std::move(loaded->load_reply);
  rt.load_ms = loaded->load_ms;
  RecordRuntime(rt.load_reply, record_);
  return rt;
}

Status CellRun::BuildInput(Runtime& rt) {
  Tokenizer tokenize = [&rt](const std::string& text) { return rt.driver->Tokenize(text); };
  json input;
  if (b_.type == BenchmarkType::kEndToEnd) {
    auto p = BuildTextPrompt(tokenize, b_.prefill_tokens);
    if (!p) return p.error();
    prompt_text_ = p->text;
    prompt_tokens_ = p->tokens;
    input = {{"prompt_tokens", p->tokens.size()}, {"prompt_sha256", p->sha256},
             {"text_sha256", p->text_sha256}, {"text_chars", p->text.size()}};
  } else {
    auto p = BuildTokenPrompt(tokenize, b_.prefill_tokens);
    if (!p) return p.error();
    prompt_tokens_ = p->tokens;
    input = {{"prompt_tokens", p->tokens.size()}, {"prompt_sha256", p->sha256},
             {"text_sha256", p->text_sha256}};
  }
  record_["input"] = input;
  return Status::Ok();
}

Result<Rep> CellRun::MeasureOnce(Runtime& rt) {
  Rep rep;
  rep.started_at = NowRfc3339();
  const int P = b_.prefill_tokens, D = b_.decode_tokens;
  const auto t0 = SteadyTime::now();
  if (b_.type == BenchmarkType::kPrefill) {
    auto r = rt.driver->Call({{"cmd", "prefill"}, {"tokens", prompt_tokens_}}, "prefill");
    const double outside_ms = MsSince(t0);
    if (!r) return r.error();
    const double ms = (*r)["prefill_ns"].get<double>() / 1e6;
    rep.values = {{"prefill_throughput", P / (ms / 1e3)}, {"ttft", ms},
                  {"harness_overhead", outside_ms - ms}};
    rep.tokens_in = P;
  } else if (b_.type == BenchmarkType::kDecode) {
    auto r = rt.driver->Call({{"cmd", "decode"}, {"context", prompt_tokens_}, {"n", D}}, "decode");
    if (!r) return r.error();
    const auto steps = (*r)["step_ns"].get<std::vector<double>>();
    if (static_cast<int>(steps.size()) != D) {
      return MakeError("runtime produced " + std::to_string(steps.size()) + " tokens, expected " +
                       std::to_string(D), "validate");
    }
    double total_ms = 0;
    for (double ns : steps) {
      rep.inter_token_ms.push_back(ns / 1e6);
      total_ms += ns / 1e6;
    }
    rep.values = {{"decode_throughput", D / (total_ms / 1e3)}};
    rep.tokens_in = P;
    rep.tokens_out = D;
    // No harness_overhead here: the request also holds the untimed context prefill.
  } else {
    auto r = rt.driver->Call({{"cmd", "generate"}, {"text", prompt_text_}, {"n", D}}, "generate");
    const double outside_ms = MsSince(t0);
    if (!r) return r.error();
    const auto token_ns = (*r)["token_ns"].get<std::vector<double>>();
    const int n_prompt = (*r)["n_prompt_tokens"].get<int>();
    if (n_prompt != P || static_cast<int>(token_ns.size()) != D) {
      return MakeError("request had " + std::to_string(n_prompt) + " prompt and " +
                       std::to_string(token_ns.size()) + " generated tokens, expected " +
                       std::to_string(P) + " and " + std::to_string(D), "validate");
    }
    const double e2e_ms = token_ns.back() / 1e6, ttft_ms = token_ns.front() / 1e6;
    for (size_t i = 1; i < token_ns.size(); ++i) {
      rep.inter_token_ms.push_back((token_ns[i] - token_ns[i - 1]) / 1e6);
    }
    rep.values = {{"end_to_end_latency", e2e_ms},
                  {"ttft", ttft_ms},
                  {"prefill_throughput", P / ((*r)["prefill_ns"].get<double>() / 1e9)},
                  {"harness_overhead", outside_ms - e2e_ms}};
    if (D > 1) rep.values["decode_throughput"] = (D - 1) / ((e2e_ms - ttft_ms) / 1e3);
    rep.tokens_in = P;
    rep.tokens_out = D;
  }
  if (auto s = Validate(rep); !s) return s.error();
  return rep;
}

// A fresh runtime process per repetition: load, prefill P, decode 1, then read its peak memory.
Result<Rep> CellRun::MeasureMemory() {
  Rep rep;
  rep.started_at = NowRfc3339();
  auto rt = StartRuntime();
  if (!rt) return rt.error();
  if (prompt_tokens_.empty()) {
    if (auto s = BuildInput(*rt); !s) return s.error();
  }
  auto r = rt->driver->Call({{"cmd", "decode"}, {"context", prompt_tokens_}, {"n", 1}}, "memory");
  if (!r) return r.error();
  rt->memory->Sample();
  rt->memory->Stop();
  rep.values = {{"max_host_usage", static_cast<double>(rt->memory->PeakBytes())},
                {"load_time", rt->load_ms}};
  if (rt->memory->PeakSwapBytes() > 0) {
    rep.values["swap_observed"] = static_cast<double>(rt->memory->PeakSwapBytes());
  }
  runtime_stderr_tail_ = rt->driver->StderrTail();
  rt->driver->Quit();
  rep.tokens_in = b_.prefill_tokens;
  rep.tokens_out = 1;
  if (auto s = Validate(rep); !s) return s.error();
  return rep;
}

Status CellRun::AwaitReadiness(const Runtime& rt) {
  std::vector<int> own = {static_cast<int>(getpid())};
  if (rt.driver) own.push_back(rt.driver->Pid());
  // Said on the first poll that is not ready and every 10th after it (30 s at the default poll
  // interval): a wait of minutes must not look like a hang.
  const auto waiting = [&](const ReadinessWait& w) {
    if (w.polls % 10 != 1) return;
    Progress(fmt::format("waiting for the device to be ready ({:.0f} s of {:g} s): {}",
                         w.waited_s, spec_.readiness.deadline_s, w.last.DescribeHeld()));
  };
  auto wait = WaitUntilReady(spec_.readiness, clock_, own, [] { return Interrupted(); }, waiting);
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

json CellRun::Run() {
  namespace fs = std::filesystem;
  log_path_ = spec_.log_path;
  if (log_path_.empty()) {
    log_path_ = (fs::temp_directory_path() / ("pipette-runtime-" + record_["result_id"].get<std::string>() + ".log")).string();
  }
  settings_ = record_["runtime"]["settings"];
  std::vector<Rep> reps;
  Runtime rt;
  bool ci_reached = false;
  auto fail = [&](const Error& e) {
    if (rt.driver) runtime_stderr_tail_ = rt.driver->StderrTail();
    return Finish(reps, &e, false);
  };
  if (b_.type != BenchmarkType::kMemory) {
    Progress("loading " + spec_.model_path);
    auto started = StartRuntime();
    if (!started) return fail(started.error());
    rt = std::move(*started);
    if (auto s = BuildInput(rt); !s) return fail(s.error());
  }
  const HarnessPolicy& policy = spec_.policy;
  for (int w = 0; w < policy.warmup_runs; ++w) {
    Progress("warm-up " + std::to_string(w + 1) + "/" + std::to_string(policy.warmup_runs));
    auto rep = Measure(&rt);
    if (!rep) return fail(rep.error());
  }
  const std::string headline(HeadlineMetric(b_.type));
  for (int i = 0; i < policy.max_reps; ++i) {
    if (auto s = AwaitReadiness(rt); !s) return fail(s.error());
    auto rep = Measure(&rt);
    if (!rep) return fail(rep.error());
    reps.push_back(std::move(*rep));
    std::vector<double> h;
    for (const Rep& r : reps) h.push_back(r.values.at(headline));
    const Summary s = Summarize(h);
    Progress(RepLine(i + 1, headline, s));
    // A confidence interval from fewer than 3 samples says nothing; it never counts as reached.
    if (static_cast<int>(reps.size()) >= std::max(policy.min_reps, 3) &&
        CiWithinTarget(s, policy.ci_target)) {
      ci_reached = true;
      break;
    }
  }
  if (rt.driver) {
    if (const auto m = ReadProcMemory(rt.driver->Pid())) {
      record_["logs"]["peak_host_bytes_during_cell"] = m->vm_hwm;
    }
    runtime_stderr_tail_ = rt.driver->StderrTail();
    load_ms_ = rt.load_ms;
    rt.driver->Quit();
  }
  return Finish(reps, nullptr, ci_reached);
}

// decode_roofline_efficiency (DESIGN.md 4.3): decode tokens/s x weight bytes read per token /
// the device's measured memory bandwidth. A dense model reads all of its weights per token; the
// token-embedding table, of which one row is read, is counted whole, so the figure errs high by
// at most that table's share.
void CellRun::AddRoofline(const std::map<std::string, std::vector<double>>& series, json& metrics) {
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

json CellRun::Finish(const std::vector<Rep>& reps, const Error* failure, bool ci_reached) {
  json samples = json::array();
  std::map<std::string, std::vector<double>> series;
  std::vector<double> itl;
  for (size_t i = 0; i < reps.size(); ++i) {
    const Rep& r = reps[i];
    json s = {{"rep", i + 1}, {"started_at", r.started_at}, {"tokens_in", r.tokens_in},
              {"tokens_out", r.tokens_out}, {"thermal_before", r.thermal_before},
              {"thermal_after", r.thermal_after}};
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
  record_["logs"]["runtime_stderr_tail"] = runtime_stderr_tail_;
  if (!spec_.log_path.empty()) record_["logs"]["runtime_log_path"] = log_path_;
  else std::filesystem::remove(log_path_);  // its tail is kept in the record
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
  record_["status"] = "ok";
  record_["metrics"] = metrics;
  record_["config_id"] = ConfigId(record_);
  return record_;
}

}  // namespace

Result<nlohmann::json> RunCell(const CellSpec& spec, const CellHooks& hooks) {
  auto record = ResolveCell(spec, hooks);
  if (!record) return record.error();
  if (spec.benchmark.type == BenchmarkType::kKlDivergence) {
    return RunKlDivergence(spec, hooks, std::move(*record));
  }
  if (spec.benchmark.type == BenchmarkType::kSoak) return RunSoak(spec, hooks, std::move(*record));
  CellRun run(spec, hooks, std::move(*record));
  return run.Run();
}

}  // namespace pipette
