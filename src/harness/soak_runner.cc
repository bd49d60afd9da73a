#include "harness/soak_runner.h"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "base/ids.h"
#include "harness/prompt.h"
#include "harness/record.h"
#include "pipette/soak.h"
#include "pipette/stats.h"
#include "platform/interrupt.h"
#include "platform/proc_memory.h"
#include "runtimes/llamacpp/driver_client.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using SteadyTime = std::chrono::steady_clock;

double SecondsSince(SteadyTime::time_point t0) {
  return std::chrono::duration<double>(SteadyTime::now() - t0).count();
}

json Failed(json record, const Error& e) {
  MarkFailed(record, e, "soak");
  return record;
}

}  // namespace

json RunSoak(const CellSpec& spec, const CellHooks& hooks, json record) {
  const BenchmarkSpec& b = spec.benchmark;
  const std::string driver = spec.driver_path.empty() ? DefaultDriverPath() : spec.driver_path;
  const std::string log =
      spec.log_path.empty()
          ? (fs::temp_directory_path() / ("pipette-runtime-" + record["result_id"].get<std::string>() + ".log")).string()
          : spec.log_path;
  auto loaded = StartAndLoad(driver, log, std::chrono::seconds(spec.policy.request_timeout_s),
                             spec.model_path, record["runtime"]["settings"], hooks.on_driver_started);
  if (!loaded) {
    record["logs"]["runtime_stderr_tail"] = ReadFileTail(log);
    return Failed(std::move(record), loaded.error());
  }
  RecordRuntime(loaded->load_reply, record);
  LlamaCppDriver& d = *loaded->driver;
  Tokenizer tokenize = [&d](const std::string& text) { return d.Tokenize(text); };
  auto prompt = BuildTextPrompt(tokenize, b.prefill_tokens);
  if (!prompt) return Failed(std::move(record), prompt.error());
  record["input"] = {{"prompt_tokens", prompt->tokens.size()}, {"prompt_sha256", prompt->sha256},
                     {"text_sha256", prompt->text_sha256}, {"text_chars", prompt->text.size()}};
  const json request = {{"cmd", "generate"}, {"text", prompt->text}, {"n", b.decode_tokens}};
  for (int w = 0; w < spec.policy.warmup_runs; ++w) {
    if (auto r = d.Call(request, "generate"); !r) return Failed(std::move(record), r.error());
  }

  std::vector<SoakPoint> points;
  std::vector<double> e2e, ttft, tps;
  json samples = json::array();
  const auto t0 = SteadyTime::now();
  const double duration_s = 60.0 * b.minutes;
  double next_report = 10;
  while (SecondsSince(t0) < duration_s) {
    if (Interrupted()) return Failed(std::move(record), MakeError("interrupted by the user", "soak"));
    const double started = SecondsSince(t0);
    auto r = d.Call(request, "generate");
    if (!r) {
      record["logs"]["runtime_stderr_tail"] = d.StderrTail();
      return Failed(std::move(record), r.error());
    }
    const auto token_ns = (*r)["token_ns"].get<std::vector<double>>();
    const double last_ms = token_ns.back() / 1e6, first_ms = token_ns.front() / 1e6;
    const double decode_tps = b.decode_tokens > 1 ? (b.decode_tokens - 1) / ((last_ms - first_ms) / 1e3) : 0;
    const auto mem = ReadProcMemory(d.Pid());
    const uint64_t peak = mem ? std::max(mem->vm_hwm, mem->vm_rss + mem->vm_swap) : 0;
    points.push_back({started, decode_tps, peak});
    e2e.push_back(last_ms);
    ttft.push_back(first_ms);
    if (decode_tps > 0) tps.push_back(decode_tps);
    samples.push_back({{"rep", points.size()}, {"t_s", started}, {"end_to_end_latency", last_ms},
                       {"ttft", first_ms}, {"decode_throughput", decode_tps},
                       {"peak_host_bytes", peak}, {"tokens_in", b.prefill_tokens},
                       {"tokens_out", b.decode_tokens}});
    if (hooks.progress && started >= next_report) {
      hooks.progress(fmt::format("soak {:.0f}/{:.0f} s: {} requests", started, duration_s, points.size()));
      next_report += 10;
    }
  }
  record["logs"]["runtime_stderr_tail"] = d.StderrTail();
  d.Quit();
  if (spec.log_path.empty()) fs::remove(log);

  const SoakAnalysis a = AnalyzeSoak(points);
  record["soak"] = ToJson(a);
  if (a.drift_flagged) {
    AddWarning(record, fmt::format("soak: decode throughput drifted {:+.1f}% from the first to the "
                                   "last tenth of the run (thermal decay?)", 100 * a.drift));
  }
  if (a.growth_flagged) {
    AddWarning(record, fmt::format("soak: peak memory grew by {:.1f} MiB between the first and the "
                                   "last {:.0f} s (a leak?)", a.growth_bytes / 1048576.0, a.window_s));
  }
  json metrics = {{"end_to_end_latency", ToJson(Summarize(e2e), "ms")},
                  {"ttft", ToJson(Summarize(ttft), "ms")},
                  {"load_time", ToJson(Summarize(std::vector<double>{loaded->load_ms}), "ms")}};
  if (!tps.empty()) metrics["decode_throughput"] = ToJson(Summarize(tps), "tokens/s");
  record["metrics"] = metrics;
  record["samples"] = samples;
  record["status"] = "ok";
  record["harness"]["reps"] = points.size();
  record["harness"]["ci_reached"] = false;  // a soak runs for its time, not to a CI target
  record["finished_at"] = NowRfc3339();
  record["config_id"] = ConfigId(record);
  return record;
}

}  // namespace pipette
