// Unit tests of src/analysis/noise.h on hand-built pipette.result/1 records.
#include "analysis/noise.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pipette::analysis {
namespace {

using nlohmann::json;

// An ok decode record: 10 repetitions (of at most 10) whose headline values are `values`,
// ci_reached as given, no cpus, no cool-down, one readiness wait that saw `busy`.
json DecodeRecord(const std::vector<double>& values, bool ci_reached, double busy = 0.01) {
  json samples = json::array();
  for (size_t i = 0; i < values.size(); ++i) {
    samples.push_back({{"rep", i + 1}, {"decode_throughput", values[i]}});
  }
  return {{"schema", "pipette.result/1"},
          {"status", "ok"},
          {"benchmark", {{"id", "decode_throughput_256_100"}, {"type", "decode"},
                         {"prefill_tokens", 256}, {"decode_tokens", 100}}},
          {"runtime", {{"settings", {{"threads", 2}}}}},
          {"metrics", {{"decode_throughput", {{"unit", "tokens/s"}, {"median", 400.0}}}}},
          {"samples", samples},
          {"harness",
           {{"reps", values.size()}, {"max_reps", 10}, {"ci_target", 0.02},
            {"ci_reached", ci_reached},
            {"readiness",
             {{"policy", {{"max_busy_fraction", 0.30}, {"max_cpu_celsius", 70},
                          {"cooldown_s", 0}}},
              {"waits", json::array({{{"waited_s", 0.25}, {"polls", 1},
                                      {"observation", {{"busy_fraction", busy},
                                                       {"hottest_cpu_celsius", nullptr},
                                                       {"ready", true}}}}})}}}}}};
}

const std::vector<double> kTwoSpeeds = {471, 352, 360, 468, 355, 361, 480, 363, 371, 462};
const std::vector<double> kOneSpeed = {401, 398, 405, 399, 402, 400, 397, 403, 404, 396};

TEST(IsNoisyTest, OkRecordThatMissedItsTarget) {
  EXPECT_TRUE(IsNoisy(DecodeRecord(kOneSpeed, false)));
  EXPECT_FALSE(IsNoisy(DecodeRecord(kOneSpeed, true)));
  json failed = DecodeRecord(kOneSpeed, false);
  failed["status"] = "failed";
  EXPECT_FALSE(IsNoisy(failed));
  json soak = DecodeRecord(kOneSpeed, false);
  soak["benchmark"] = {{"id", "soak_256_256_2"}, {"type", "soak"}};
  EXPECT_FALSE(IsNoisy(soak));  // a soak runs for its time and always says ci_reached false
  json unknown = DecodeRecord(kOneSpeed, false);
  unknown["harness"].erase("ci_reached");
  EXPECT_FALSE(IsNoisy(unknown));
}

TEST(TwoClustersNoteTest, NamesCentersUnitAndCounts) {
  EXPECT_EQ(TwoClustersNote(DecodeRecord(kTwoSpeeds, false)),
            "two clusters: about 360 and 470 tokens/s (6 and 4 repetitions)");
  EXPECT_EQ(TwoClustersNote(DecodeRecord(kOneSpeed, false)), std::nullopt);
  EXPECT_EQ(TwoClustersNote(json::object()), std::nullopt);
}

TEST(TwoClustersNoteTest, BytesInBinaryUnits) {
  const double mib = 1048576;
  json r = {{"status", "ok"},
            {"benchmark", {{"id", "max_memory_usage_256"}, {"type", "memory"}}},
            {"metrics", {{"max_host_usage", {{"unit", "bytes"}, {"median", 100 * mib}}}}},
            {"samples", json::array()}};
  for (double v : {100.0, 100.1, 100.2, 100.0, 140.0, 140.1, 140.0, 140.2}) {
    r["samples"].push_back({{"max_host_usage", v * mib}});
  }
  EXPECT_EQ(TwoClustersNote(r),
            "two clusters: about 100.05 MiB and 140.05 MiB (4 and 4 repetitions)");
}

TEST(NoiseAdviceTest, EmptyWhenNotNoisy) {
  EXPECT_TRUE(NoiseAdvice(DecodeRecord(kOneSpeed, true)).empty());
}

TEST(NoiseAdviceTest, MeasuredBenchmarkGetsSettingNames) {
  const std::vector<std::string> advice = NoiseAdvice(DecodeRecord(kOneSpeed, false, 0.45));
  ASSERT_EQ(advice.size(), 4u);
  EXPECT_EQ(advice[0], "more repetitions (max_reps 20; this run stopped at its max_reps 10)");
  EXPECT_EQ(advice[1], "pinning the runtime to fixed CPUs (cpus, e.g. \"0-1\" for its threads 2)");
  EXPECT_EQ(advice[2], "a cool-down between cells (cooldown_s, e.g. 30)");
  EXPECT_EQ(advice[3],
            "stopping other processes: they kept up to 45% of the CPUs busy during the readiness "
            "checks (max_busy_fraction 0.30; a lower one waits for them)");
}

TEST(NoiseAdviceTest, TwoClustersPutPinningFirst) {
  const std::vector<std::string> advice = NoiseAdvice(DecodeRecord(kTwoSpeeds, false));
  ASSERT_EQ(advice.size(), 3u);  // busy 1%: not worth saying
  EXPECT_EQ(advice[0], "pinning the runtime to fixed CPUs (cpus, e.g. \"0-1\" for its threads 2)");
  EXPECT_EQ(advice[1], "more repetitions (max_reps 20; this run stopped at its max_reps 10)");
}

TEST(NoiseAdviceTest, WhatIsAlreadyDoneIsNotAdvised) {
  json r = DecodeRecord(kOneSpeed, false);
  r["runtime"]["settings"]["cpus"] = "0";
  r["harness"]["readiness"]["policy"]["cooldown_s"] = 30;
  r["harness"]["reps"] = 7;  // stopped before max_reps (an interrupt): more would not be new
  EXPECT_TRUE(NoiseAdvice(r).empty());
}

TEST(NoiseAdviceTest, ObservationsThatHeldTheGateCount) {
  json r = DecodeRecord(kOneSpeed, false);
  r["harness"]["readiness"]["policy"]["cooldown_s"] = 30;
  r["runtime"]["settings"]["cpus"] = "0";
  r["harness"]["reps"] = 7;
  r["harness"]["readiness"]["waits"][0]["held"] = json::array(
      {{{"at_s", 0.25}, {"poll", 1}, {"busy_fraction", 0.85}, {"hottest_cpu_celsius", 82.4},
        {"ready", false}, {"held_by", {"thermal", "load"}}}});
  const std::vector<std::string> advice = NoiseAdvice(r);
  ASSERT_EQ(advice.size(), 2u);
  EXPECT_EQ(advice[0],
            "stopping other processes: they kept up to 85% of the CPUs busy during the readiness "
            "checks (max_busy_fraction 0.30; a lower one waits for them)");
  EXPECT_EQ(advice[1],
            "letting the CPU cool: it reached 82 C during the readiness checks (max_cpu_celsius "
            "70)");
}

TEST(NoiseAdviceTest, AWaivedLoadCriterionIsSaid) {
  json r = DecodeRecord(kOneSpeed, false, 0.5);
  r["harness"]["readiness"]["policy"]["waived"] = {"load"};
  const std::vector<std::string> advice = NoiseAdvice(r);
  ASSERT_EQ(advice.size(), 4u);
  EXPECT_EQ(advice[3],
            "stopping other processes: they kept up to 50% of the CPUs busy during the readiness "
            "checks (the load criterion was waived; without it the gate waits for them)");
}

// Issue 27: advice names only what the result's runtime takes.
TEST(NoiseAdviceTest, PinningFitsTheRuntime) {
  json r = DecodeRecord(kTwoSpeeds, false);
  r["runtime"] = {{"name", "llamacpp"}, {"settings", {{"threads", 1}}}};
  EXPECT_EQ(NoiseAdvice(r)[0],
            "pinning the runtime to fixed CPUs (cpus, e.g. \"0\" with threads 1)");
  r["runtime"] = {{"name", "llamacpp-stock"}, {"settings", {{"threads", 4}}}};
  EXPECT_EQ(NoiseAdvice(r)[0],
            "pinning the runtime to fixed CPUs (cpus, e.g. \"0-3\" for its threads 4)");
  // openai takes no cpus and no threads: a server pipette starts is pinned in its command line.
  r["runtime"] = {{"name", "openai"},
                  {"settings", {{"server", "/opt/llama/llama-server -m {model} --port {port}"}}}};
  EXPECT_EQ(NoiseAdvice(r)[0],
            "pinning the server to fixed CPUs in its command line (server = [\"taskset\", \"-c\", "
            "\"0\", ...], with -t 1 for llama-server)");
  r["runtime"]["settings"]["server"] = "/usr/bin/taskset -c 0 /opt/llama/llama-server -m {model}";
  EXPECT_EQ(NoiseAdvice(r)[0],
            "more repetitions (max_reps 20; this run stopped at its max_reps 10)");
  // A server at a URL is pinned where it is started: pipette only connects to it.
  r["runtime"] = {{"name", "openai"},
                  {"settings", json::object()},
                  {"server", {{"url", "http://127.0.0.1:8080"}}}};
  EXPECT_EQ(NoiseAdvice(r)[0],
            "pinning the server at http://127.0.0.1:8080 to fixed CPUs where it is started, e.g. "
            "taskset -c 0 llama-server ... -t 1 (pipette only connects to it)");
  for (const std::string& line : NoiseAdvice(r)) {
    EXPECT_EQ(line.find("cpus"), std::string::npos) << line;
    EXPECT_EQ(line.find("threads"), std::string::npos) << line;
  }
}

// Issue 27: a kl_divergence result is deterministic (a rerun gives the same numbers) and its
// interval is over the text's positions: a flag on it would be one no one can act on.
TEST(IsNoisyTest, KlDivergenceIsNeverFlagged) {
  json r = {{"status", "ok"},
            {"benchmark", {{"id", "kl_divergence_512"}, {"type", "kl_divergence"},
                           {"prefill_tokens", 512}}},
            {"runtime", {{"name", "llamacpp"}, {"settings", {{"threads", 2}}}}},
            {"harness", {{"reps", 1}, {"ci_reached", false}}}};
  EXPECT_FALSE(IsNoisy(r));
  EXPECT_TRUE(NoiseAdvice(r).empty());
}

// An eval whose interval missed its target is flagged only while an option narrows it.
TEST(IsNoisyTest, EvalFlaggedOnlyWhileSomethingNarrowsIt) {
  json r = {{"status", "ok"},
            {"benchmark", {{"id", "math500"}, {"type", "eval"}}},
            {"metrics", {{"accuracy", {{"unit", "ratio"}, {"median", 0.5}, {"ci95_low", 0.25},
                                       {"ci95_high", 0.75}, {"questions", 40}}}}},
            {"eval", {{"accuracy_ci_target_pp", 5}, {"samples_in_dataset", 500}, {"repeats", 1},
                      {"temperature", 0}}},
            {"harness", {{"ci_reached", false}}}};
  EXPECT_TRUE(IsNoisy(r));
  ASSERT_EQ(NoiseAdvice(r).size(), 1u);  // greedy: repeats would give the same text
  EXPECT_EQ(NoiseAdvice(r)[0].rfind("more samples (limit about 500; this run had 40)", 0), 0u)
      << NoiseAdvice(r)[0];
  r["eval"]["temperature"] = 0.8;
  ASSERT_EQ(NoiseAdvice(r).size(), 2u);
  EXPECT_EQ(NoiseAdvice(r)[1].rfind("more repeats (repeats 2)", 0), 0u) << NoiseAdvice(r)[1];
  // The whole data set at temperature 0: nothing to try, so no flag.
  r["eval"]["temperature"] = 0;
  r["eval"]["samples_in_dataset"] = 40;
  EXPECT_FALSE(IsNoisy(r));
  EXPECT_TRUE(NoiseAdvice(r).empty());
}

// A decode at 1620 tokens/s (0.617 ms per token) of 0.6 MB of weights at 10 GB/s (0.06 ms per
// token at the limit: 9.7% of it).
TEST(OverheadBoundNoteTest, FixedCostFromWeightsAndBandwidth) {
  json r = {{"status", "ok"},
            {"benchmark", {{"id", "decode_throughput_256_100"}, {"type", "decode"}}},
            {"model", {{"tensor_bytes", 600000}, {"size_bytes", 700000}}},
            {"device", {{"memory_bandwidth_bytes_per_s", 1e10}}},
            {"metrics",
             {{"decode_throughput", {{"unit", "tokens/s"}, {"median", 1620.0}}},
              {"decode_roofline_efficiency", {{"unit", "ratio"}, {"median", 0.0972}}}}}};
  // 1000 / 1620 = 0.6173 ms per token; weights 600000 / 1e10 s = 0.06 ms; fixed 0.5573 ms.
  EXPECT_EQ(OverheadBoundNote(r),
            "overhead-bound: decode runs at 9.7% of the memory-bandwidth limit; of 0.617 ms per "
            "token about 0.557 ms is fixed per-token cost, so a smaller quantization will not "
            "make it faster");
  r["metrics"]["decode_roofline_efficiency"]["median"] = 0.10;
  EXPECT_EQ(OverheadBoundNote(r), std::nullopt);  // at 10% it is not called overhead-bound
}

TEST(OverheadBoundNoteTest, WithoutBandwidthTheEfficiencyGivesTheWeightsShare) {
  json r = {{"status", "ok"},
            {"metrics",
             {{"decode_throughput", {{"unit", "tokens/s"}, {"median", 400.0}}},
              {"decode_roofline_efficiency", {{"unit", "ratio"}, {"median", 0.012}}}}}};
  // 2.5 ms per token; weights 1.2% of it = 0.03 ms; fixed 2.47 ms.
  EXPECT_EQ(OverheadBoundNote(r),
            "overhead-bound: decode runs at 1.2% of the memory-bandwidth limit; of 2.5 ms per "
            "token about 2.47 ms is fixed per-token cost, so a smaller quantization will not "
            "make it faster");
  r["metrics"].erase("decode_throughput");
  EXPECT_EQ(OverheadBoundNote(r), std::nullopt);
}

}  // namespace
}  // namespace pipette::analysis

namespace pipette::analysis {
namespace {

TEST(GroupNoiseAdviceTest, SharedAdviceOnceAndEachRecordsOwnApart) {
  json a = DecodeRecord(kOneSpeed, false);
  json b = DecodeRecord(kTwoSpeeds, false);
  json c = DecodeRecord(kOneSpeed, false, /*busy=*/0.45);  // saw other processes: advice of its own
  const GroupedAdvice g = GroupNoiseAdvice({a, b, c});
  ASSERT_FALSE(g.common.empty());
  for (const json& r : {a, b, c}) {
    for (const std::string& item : g.common) {
      const auto all = NoiseAdvice(r);
      EXPECT_NE(std::find(all.begin(), all.end(), item), all.end()) << item;
    }
  }
  ASSERT_EQ(g.own.size(), 3u);
  EXPECT_TRUE(g.own[0].empty());
  ASSERT_FALSE(g.own[1].empty());
  EXPECT_EQ(g.own[1][0], "(two clusters: about 360 and 470 tokens/s (6 and 4 repetitions))");
  ASSERT_EQ(g.own[2].size(), 1u);
  EXPECT_NE(g.own[2][0].find("stopping other processes: they kept up to 45%"), std::string::npos)
      << g.own[2][0];
  // Other processes seen during several: once, with the largest share and how many saw it.
  json d = DecodeRecord(kOneSpeed, false, /*busy=*/0.12);
  json e = DecodeRecord(kOneSpeed, false, /*busy=*/0.06);
  const GroupedAdvice busy = GroupNoiseAdvice({a, d, e});
  EXPECT_EQ(busy.common.back(),
            "stopping other processes: they kept up to 12% of the CPUs busy during the readiness "
            "checks of 2 of them (max_busy_fraction 0.30; a lower one waits for them)");
  for (const auto& own : busy.own) EXPECT_TRUE(own.empty()) << own.front();
  const GroupedAdvice all_busy = GroupNoiseAdvice({d, e});
  EXPECT_EQ(all_busy.common.back(),
            "stopping other processes: they kept up to 12% of the CPUs busy during the readiness "
            "checks (max_busy_fraction 0.30; a lower one waits for them)");
  // One record: all of its advice is shared.
  const GroupedAdvice one = GroupNoiseAdvice({a});
  EXPECT_EQ(one.common, NoiseAdvice(a));
  EXPECT_TRUE(GroupNoiseAdvice({}).common.empty());
}

json WithFloor(json r, const std::string& device_id, double pinned, double unpinned,
               const std::string& cpus = "") {
  r["device"] = {{"id", device_id},
                 {"noise_floor", {{"pinned", pinned}, {"unpinned", unpinned}, {"cpu", 0}}}};
  if (!cpus.empty()) r["runtime"]["settings"]["cpus"] = cpus;
  return r;
}

TEST(NoiseFloorNotesTest, TheSpreadThatAppliesOncePerDevice) {
  const json r = DecodeRecord(kOneSpeed, false);
  // Unpinned results on this machine, where pinning would help: both said.
  EXPECT_EQ(NoiseFloorNotes({WithFloor(r, "aa", 0.011, 0.024), WithFloor(r, "aa", 0.011, 0.024)},
                            "aa"),
            std::vector<std::string>{
                "this machine's timing varies by about 2.4% run to run (about 1.1% pinned to one "
                "CPU with the runtime's cpus setting); differences smaller than that cannot be "
                "resolved here"});
  // Pinning would not help: the unpinned spread alone.
  EXPECT_EQ(NoiseFloorNotes({WithFloor(r, "aa", 0.07, 0.06)}, "aa"),
            std::vector<std::string>{
                "this machine's timing varies by about 6.0% run to run; differences smaller than "
                "that cannot be resolved here, and the 95% CI of a median of 10 repetitions is "
                "about +-4.7% here, wider than the +-2% target: about 55 repetitions would reach "
                "it"});
  // Pinned results: the pinned spread.
  EXPECT_EQ(NoiseFloorNotes({WithFloor(r, "aa", 0.011, 0.024, "0")}, "aa")[0],
            "this machine's timing varies by about 1.1% run to run pinned to one CPU; differences "
            "smaller than that cannot be resolved here");
  // Both kinds: the larger first, then each.
  EXPECT_EQ(NoiseFloorNotes(
                {WithFloor(r, "aa", 0.011, 0.024, "0"), WithFloor(r, "aa", 0.011, 0.024)}, "aa")[0],
            "this machine's timing varies by about 2.4% run to run (pinned to one CPU 1.1%, "
            "unpinned 2.4%); differences smaller than that cannot be resolved here");
  // Another device by its name, else its id's first 8 characters; tiny spreads are not 0.0%.
  json named = WithFloor(r, "bbbbbbbbbbbb", 0.0004, 0.0004);
  named["device"]["name"] = "pixel-8";
  const auto notes = NoiseFloorNotes({named, WithFloor(r, "cccccccccccc", 0.03, 0.03)}, "aa");
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].rfind("device pixel-8's timing varies by about under 0.1% run to run", 0), 0u)
      << notes[0];
  EXPECT_EQ(notes[1].rfind("device cccccccc's timing varies by about 3.0% run to run", 0), 0u)
      << notes[1];
  // Without a noise floor (never probed, or an older record): nothing.
  json none = r;
  none["device"] = {{"id", "aa"}, {"noise_floor", nullptr}};
  EXPECT_TRUE(NoiseFloorNotes({none, r}, "aa").empty());
}

// Decode streams the weights: where the floor's memory mode varies more than its compute kernel
// (a VM whose neighbours share the memory bandwidth), decode results are held to that spread.
TEST(NoiseFloorNotesTest, MemoryBoundResultsAreHeldToTheMemorySpread) {
  const json decode = DecodeRecord(kOneSpeed, false);
  json floor = WithFloor(decode, "aa", 0.002, 0.003, "1");
  floor["device"]["noise_floor"]["memory"] = 0.06;
  EXPECT_EQ(NoiseFloorNotes({floor}, "aa"),
            std::vector<std::string>{
                "this machine's timing varies by about 0.2% run to run pinned to one CPU (6.0% "
                "for memory-bound work such as decode); differences smaller than that cannot be "
                "resolved here, and the 95% CI of a median of 10 repetitions is about +-4.7% "
                "here, wider than the +-2% target: about 55 repetitions would reach it"});
  // Prefill is compute-bound: the compute spread alone.
  json prefill = floor;
  prefill["benchmark"] = {{"id", "prefill_throughput_256"}, {"type", "prefill"}};
  EXPECT_EQ(NoiseFloorNotes({prefill}, "aa")[0],
            "this machine's timing varies by about 0.2% run to run pinned to one CPU; differences "
            "smaller than that cannot be resolved here");
  // Memory no noisier than compute (within a quarter), or not measured: not named.
  json close = floor;
  close["device"]["noise_floor"]["memory"] = 0.0024;
  EXPECT_EQ(NoiseFloorNotes({close}, "aa")[0].find("memory-bound"), std::string::npos);
  json older = floor;
  older["device"]["noise_floor"].erase("memory");
  EXPECT_EQ(NoiseFloorNotes({older}, "aa")[0].find("memory-bound"), std::string::npos);
}

}  // namespace
}  // namespace pipette::analysis

namespace pipette::analysis {
namespace {

// Issue 27: an imported llama-bench result that is noisy is narrowed by a new llama-bench run (or
// pipette's own), never by a suite's cpus or cooldown_s, which did not make it.
TEST(NoiseAdviceTest, ImportedResultsAreNarrowedWhereTheyWereMeasured) {
  json r = DecodeRecord(kOneSpeed, false);
  r["runtime"] = {{"name", "llamacpp-stock"}, {"settings", {{"threads", 4}}}};
  r["imported"] = {{"tool", "llama-bench"}, {"format", "json"}};
  r["harness"] = {{"reps", 5}, {"ci_reached", false}, {"ci_target", 0.02}};
  const auto advice = NoiseAdvice(r);
  ASSERT_EQ(advice.size(), 2u);
  EXPECT_EQ(advice[0],
            "rerunning llama-bench with more repetitions and pinned to fixed CPUs, then importing "
            "it again (taskset -c 0 llama-bench ... -r 10 -t 1; this run had 5)");
  EXPECT_EQ(advice[1].rfind("measuring it with pipette's llamacpp-stock runtime", 0), 0u);
  for (const std::string& a : advice) {
    EXPECT_EQ(a.find("cooldown_s"), std::string::npos) << a;
    EXPECT_EQ(a.find("(cpus"), std::string::npos) << a;
  }
}

}  // namespace
}  // namespace pipette::analysis
