// The one cell loop driven through faults by a scripted runtime (fake_runtime.h): each fault
// gives a stored failed record with its stage and the samples before it, never a crash.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/fake_runtime.h"
#include "pipette/cell.h"
#include "pipette/synth.h"

namespace pipette {
namespace {

using nlohmann::json;
using testing::FakeRuntime;
using testing::FakeScript;

// A real GGUF header for the loop to resolve (the fake runtime never reads it).
const std::string& Model() {
  static const std::string path = [] {
    const auto dir = std::filesystem::temp_directory_path() / "pipette-cell-loop-test";
    std::filesystem::create_directories(dir);
    SynthOptions o;
    o.preset = "tiny";
    o.out_path = (dir / "tiny.gguf").string();
    if (auto s = WriteSyntheticModel(o); !s) ADD_FAILURE() << s.error().message;
    return o.out_path;
  }();
  return path;
}

CellSpec Spec(FakeScript& script, const std::string& benchmark) {
  CellSpec spec;
  spec.model_path = Model();
  spec.benchmark = *ParseBenchmarkId(benchmark);
  spec.runtime = std::make_shared<FakeRuntime>(script);
  spec.policy.warmup_runs = 1;
  spec.policy.min_reps = 5;
  spec.policy.max_reps = 5;
  spec.policy.request_timeout_s = 1;
  spec.policy.spin_up_ms = 0;  // the fault indices count timed units only
  spec.readiness.waive_load = true;
  spec.readiness.waive_thermal = true;
  spec.readiness.waive_throttle = true;
  spec.readiness.sample_window_s = 0.001;
  return spec;
}

json RunOk(const CellSpec& spec) {
  auto r = RunCell(spec);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : json();
}

TEST(CellLoop, MeasuresEveryRepetitionWithTheRuntimesTimes) {
  FakeScript script;
  const json r = RunOk(Spec(script, "decode_throughput_8_10"));
  ASSERT_EQ(r["status"], "ok") << r.dump(1);
  EXPECT_EQ(r["samples"].size(), 5u);
  EXPECT_DOUBLE_EQ(r["metrics"]["decode_throughput"]["median"].get<double>(), 1000.0);
  EXPECT_EQ(r["runtime"]["name"], "fake");
  EXPECT_EQ(r["runtime"]["settings"]["flash_attn"], "auto");
  EXPECT_EQ(script.calls, 6);  // one warm-up, five repetitions
  // Within the target at the last repetition allowed (min_reps = max_reps): reached.
  EXPECT_EQ(r["harness"]["ci_reached"], true);
  EXPECT_EQ(r["config_id"], ConfigId(r));
}

TEST(CellLoop, PlannedConfigIdIsTheStoredOne) {
  FakeScript script;
  CellSpec spec = Spec(script, "prefill_throughput_8");
  spec.settings["threads"] = 2;
  auto planned = PlannedConfigId(spec);
  ASSERT_TRUE(planned.ok()) << planned.error().message;
  EXPECT_EQ(RunOk(spec)["config_id"], *planned);
}

TEST(CellLoop, CrashAtRepetitionKKeepsTheSamplesBefore) {
  FakeScript script;
  script.fail_at_rep = 4;  // warm-up, reps 1-2 ok, rep 3 crashes
  const json r = RunOk(Spec(script, "prefill_throughput_8"));
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["failure"]["stage"], "prefill");
  EXPECT_NE(r["failure"]["message"].get<std::string>().find("SIGKILL"), std::string::npos);
  EXPECT_EQ(r["samples"].size(), 2u);
  EXPECT_EQ(r["logs"]["runtime_stderr_tail"], "fake log line\n");
  EXPECT_TRUE(r["metrics"].empty());
}

TEST(CellLoop, NonFiniteTimeFailsValidation) {
  FakeScript script;
  script.nan_at_rep = 3;
  const json r = RunOk(Spec(script, "decode_throughput_8_10"));
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["failure"]["stage"], "validate");
  EXPECT_NE(r["failure"]["message"].get<std::string>().find("decode_throughput = nan"),
            std::string::npos)
      << r["failure"].dump();
  EXPECT_EQ(r["samples"].size(), 1u);
}

TEST(CellLoop, TokenCountMismatchFailsValidation) {
  FakeScript script;
  script.short_at_rep = 2;
  const json r = RunOk(Spec(script, "end_to_end_latency_8_10"));
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["failure"]["stage"], "validate");
  EXPECT_NE(r["failure"]["message"].get<std::string>().find("9 generated tokens, expected 8 and 10"),
            std::string::npos)
      << r["failure"].dump();
}

TEST(CellLoop, HangIsFailedAtTheRequestTimeout) {
  FakeScript script;
  script.hang_at_rep = 2;
  const json r = RunOk(Spec(script, "decode_throughput_8_10"));
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["failure"]["stage"], "decode");
  EXPECT_NE(r["failure"]["message"].get<std::string>().find("did not answer"), std::string::npos);
}

TEST(CellLoop, LoadFailureIsAFailedRecordNamingTheStage) {
  FakeScript script;
  script.load_error = "unknown model architecture 'xyz'";
  const json r = RunOk(Spec(script, "prefill_throughput_8"));
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["failure"]["stage"], "load");
  EXPECT_EQ(r["samples"].size(), 0u);
}

TEST(CellLoop, MemoryStartsAFreshSessionPerRepetition) {
  FakeScript script;
  const json r = RunOk(Spec(script, "max_memory_usage_8"));
  ASSERT_EQ(r["status"], "ok") << r.dump(1);
  EXPECT_EQ(script.sessions, 6);
  EXPECT_DOUBLE_EQ(r["metrics"]["max_host_usage"]["median"].get<double>(), 64.0 * (1 << 20));
  // The parts of the resident set at the peak; none of shared memory, so no such metric.
  EXPECT_DOUBLE_EQ(r["metrics"]["rss_anon_at_peak"]["median"].get<double>(), 8.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(r["metrics"]["rss_file_at_peak"]["median"].get<double>(), 52.0 * (1 << 20));
  EXPECT_FALSE(r["metrics"].contains("rss_shmem_at_peak"));
  EXPECT_FALSE(r["samples"][0].contains("rss_shmem_at_peak"));
  EXPECT_EQ(r["metrics"]["rss_file_at_peak"]["unit"], "bytes");
  EXPECT_DOUBLE_EQ(r["samples"][0]["rss_file_at_peak"].get<double>(), 52.0 * (1 << 20));
}

// A cell of one session records the split beside logs.peak_host_bytes_during_cell.
TEST(CellLoop, OneSessionCellRecordsTheResidentSplitBesideItsPeak) {
  FakeScript script;
  const json r = RunOk(Spec(script, "decode_throughput_8_10"));
  ASSERT_EQ(r["status"], "ok") << r.dump(1);
  const json& logs = r["logs"];
  EXPECT_EQ(logs["peak_host_bytes_during_cell"], 64u << 20);
  EXPECT_EQ(logs["rss_anon_bytes_at_peak_during_cell"], 8u << 20);
  EXPECT_EQ(logs["rss_file_bytes_at_peak_during_cell"], 52u << 20);
  EXPECT_EQ(logs["rss_shmem_bytes_at_peak_during_cell"], 0);
  EXPECT_FALSE(r["metrics"].contains("rss_anon_at_peak"));  // only memory benchmarks measure it
}

TEST(CellLoop, SpinUpRunsUntimedWorkBeforeEveryRepetition) {
  FakeScript script;
  CellSpec spec = Spec(script, "decode_throughput_8_10");
  spec.policy.spin_up_ms = 1;
  const json r = RunOk(spec);
  ASSERT_EQ(r["status"], "ok") << r.dump(1);
  EXPECT_EQ(r["harness"]["spin_up_ms"], 1);
  EXPECT_GT(script.calls, 11);  // one warm-up, five reps, and prefills spun for 1 ms before each
  EXPECT_DOUBLE_EQ(r["metrics"]["decode_throughput"]["median"].get<double>(), 1000.0);
}

TEST(CellLoop, FaultWhileSpinningUpIsNamed) {
  FakeScript script;
  script.fail_at_rep = 2;  // the warm-up, then the first spin-up crashes
  CellSpec spec = Spec(script, "decode_throughput_8_10");
  spec.policy.spin_up_ms = 1;
  const json r = RunOk(spec);
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["failure"]["stage"], "spin_up");
  EXPECT_NE(r["failure"]["message"].get<std::string>().find("spinning up before a repetition"),
            std::string::npos);
}

TEST(CellLoop, BenchmarkTheRuntimeCannotRunIsBadInput) {
  FakeScript script;
  auto r = RunCell(Spec(script, "soak_8_8_1"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "runtime fake cannot run soak_8_8_1 (soak benchmarks); it runs: prefill, decode, e2e, "
            "memory");
  EXPECT_EQ(script.sessions, 0);
}

TEST(CellLoop, SettingTheRuntimeDoesNotTakeIsBadInput) {
  FakeScript script;
  CellSpec spec = Spec(script, "prefill_throughput_8");
  spec.settings["type_k"] = "q8_0";
  auto r = RunCell(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "runtime fake does not take the setting type_k; it takes: threads, flash_attn");
}

}  // namespace
}  // namespace pipette
