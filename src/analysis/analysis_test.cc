// Unit tests of include/pipette/analysis.h on hand-built pipette.result/1 records.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "analysis/byte_size.h"
#include "analysis/group_filter.h"
#include "analysis/select_parts.h"
#include "pipette/analysis.h"

namespace pipette {
namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMiB = 1048576.0;

struct Model {
  std::string file = "stories260K-F32.gguf";
  std::string sha = "aaaa";
  std::string quant = "F32";
  uint64_t size = 1000000;
};

// A record of `benchmark` on `model`, with the given metric medians.
json Record(const Model& model, const std::string& benchmark, const json& medians,
            int threads = 1, const std::string& started = "2026-01-01T00:00:00.000Z",
            const std::string& status = "ok") {
  static int serial = 0;
  ++serial;
  json metrics = json::object();
  for (const auto& [name, median] : medians.items()) {
    metrics[name] = {{"median", median}, {"unit", "tokens/s"}, {"n", 5}};
    if (name == "max_host_usage") metrics[name]["unit"] = "bytes";
    if (name == "ttft" || name == "end_to_end_latency") metrics[name]["unit"] = "ms";
    if (median.is_number()) {
      metrics[name]["ci95_low"] = median.get<double>() * 0.99;
      metrics[name]["ci95_high"] = median.get<double>() * 1.01;
    }
  }
  json b = {{"id", benchmark}};
  json r = {{"schema", "pipette.result/1"},
            {"result_id", "0190" + std::to_string(100000 + serial)},
            {"status", status},
            {"benchmark", b},
            {"model",
             {{"file_name", model.file}, {"sha256", model.sha}, {"quant", model.quant},
              {"size_bytes", model.size}}},
            {"runtime",
             {{"name", "llamacpp"}, {"version", "llama.cpp@abc1234"}, {"commit", "abc1234"},
              {"settings", {{"threads", threads}, {"mmap", false}}}}},
            {"device", {{"id", "dev1"}}},
            {"metrics", metrics},
            {"started_at", started}};
  return r;
}

const Model kF32{};
const Model kQ4{"stories260K-Q4_0.gguf", "bbbb", "Q4_0", 300000};
const Model kQ8{"stories260K-Q8_0.gguf", "cccc", "Q8_0", 500000};

// --- grouping and names ---

TEST(GroupConfigurations, GroupsByConfigurationAndKeepsNewestOkPerBenchmark) {
  std::vector<json> records = {
      Record(kF32, "decode_throughput_100_100", {{"decode_throughput", 90}}, 1,
             "2026-01-01T00:00:00Z"),
      Record(kF32, "decode_throughput_100_100", {{"decode_throughput", 100}}, 1,
             "2026-01-02T00:00:00Z"),
      Record(kF32, "decode_throughput_100_100", {{"decode_throughput", 5}}, 1,
             "2026-01-03T00:00:00Z", "failed"),
      Record(kF32, "prefill_throughput_256", {{"prefill_throughput", 1000}}),
      Record(kQ4, "decode_throughput_100_100", {{"decode_throughput", 150}}),
  };
  const auto configs = GroupConfigurations(records);
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].model_file, "stories260K-F32.gguf");
  EXPECT_EQ(configs[0].quant, "F32");
  EXPECT_EQ(configs[0].model_size_bytes, 1000000u);
  EXPECT_EQ(configs[0].runtime, "llamacpp");
  EXPECT_EQ(configs[0].device_id, "dev1");
  ASSERT_EQ(configs[0].results.size(), 2u);
  EXPECT_EQ(configs[0].results[0]["benchmark"]["id"], "decode_throughput_100_100");
  EXPECT_EQ(configs[0].results[1]["benchmark"]["id"], "prefill_throughput_256");
  const json* d = configs[0].Find("decode_throughput_100_100");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ((*d)["metrics"]["decode_throughput"]["median"], 100);  // newest ok, not the failed
  EXPECT_EQ(configs[0].Find("decode_throughput_1_1"), nullptr);
  // Quant tells them apart: the names are the quants.
  EXPECT_EQ(configs[0].name, "F32");
  EXPECT_EQ(configs[1].name, "Q4_0");
  EXPECT_EQ(configs[0].key, ConfigurationKey(records[0]));
  EXPECT_EQ(configs[0].key.size(), 64u);
}

TEST(GroupConfigurations, NamesSettingsThatDifferAndFileWhenQuantIsNotEnough) {
  Model other_f32{"tinyllama-F32.gguf", "dddd", "F32", 4000000};
  std::vector<json> records = {
      Record(kF32, "prefill_throughput_8", {{"prefill_throughput", 1}}, 1),
      Record(kF32, "prefill_throughput_8", {{"prefill_throughput", 2}}, 2),
      Record(kQ8, "prefill_throughput_8", {{"prefill_throughput", 3}}, 2),
      Record(other_f32, "prefill_throughput_8", {{"prefill_throughput", 4}}, 1),
  };
  const auto configs = GroupConfigurations(records);
  ASSERT_EQ(configs.size(), 4u);
  // Two F32 files: the file is named (and carries the quant); threads differ.
  EXPECT_EQ(configs[0].name, "stories260K-F32.gguf t=1");
  EXPECT_EQ(configs[1].name, "stories260K-F32.gguf t=2");
  EXPECT_EQ(configs[2].name, "stories260K-Q8_0.gguf t=2");
  EXPECT_EQ(configs[3].name, "tinyllama-F32.gguf t=1");
}

TEST(GroupConfigurations, SingleConfigurationIsNamedByFileAndShapeContextIsNotASetting) {
  json a = Record(kQ4, "decode_throughput_64_32", {{"decode_throughput", 1}});
  a["runtime"]["settings"]["n_ctx"] = 96;  // P + D: the default, not a choice
  json b = Record(kQ4, "max_memory_usage_64", {{"max_host_usage", 1e6}});
  b["runtime"]["settings"]["n_ctx"] = 65;  // P + 1
  json c = Record(kQ4, "prefill_throughput_64", {{"prefill_throughput", 1}});
  c["runtime"]["settings"]["n_ctx"] = 64;
  auto configs = GroupConfigurations({a, b, c});
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(configs[0].results.size(), 3u);
  EXPECT_EQ(configs[0].name, "stories260K-Q4_0.gguf");
  EXPECT_FALSE(configs[0].settings.contains("n_ctx"));
  // An explicit context size is a different configuration.
  c["runtime"]["settings"]["n_ctx"] = 4096;
  configs = GroupConfigurations({a, b, c});
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].name, "n_ctx=4096");
  EXPECT_EQ(configs[1].name, "n_ctx=default");  // only n_ctx differs
}

TEST(GroupConfigurations, NamesStayUniqueWhenOnlyUnnamedFieldsDiffer) {
  json a = Record(kQ4, "prefill_throughput_8", {{"prefill_throughput", 1}});
  json b = a;
  b["runtime"]["commit"] = "def5678";
  const auto configs = GroupConfigurations({a, b});
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_NE(configs[0].name, configs[1].name);
  EXPECT_EQ(configs[0].name.rfind("stories260K-Q4_0.gguf #", 0), 0u) << configs[0].name;
}

TEST(GroupConfigurations, IgnoresFailedAndMalformedRecords) {
  EXPECT_TRUE(GroupConfigurations({Record(kF32, "prefill_throughput_8", {}, 1, "x", "failed"),
                                   json("not a record"), json::object()})
                  .empty());
}

// --- derived views ---

TEST(Scaling, DecodeRetentionIsRelativeToTheSmallestContextPerCurve) {
  std::vector<json> records = {
      Record(kF32, "decode_throughput_256_100", {{"decode_throughput", 80}}),
      Record(kF32, "decode_throughput_100_100", {{"decode_throughput", 100}}),
      Record(kF32, "decode_throughput_1024_100", {{"decode_throughput", 50}}),
      Record(kF32, "decode_throughput_64_32", {{"decode_throughput", 200}}),
      Record(kF32, "decode_throughput_128_32", {{"decode_throughput", 150}}),
      Record(kF32, "prefill_throughput_512", {{"prefill_throughput", 900}}),
      Record(kF32, "prefill_throughput_128", {{"prefill_throughput", 1200}}),
  };
  const auto configs = GroupConfigurations(records);
  ASSERT_EQ(configs.size(), 1u);
  const auto curves = DecodeScaling(configs[0]);
  ASSERT_EQ(curves.size(), 2u);
  ASSERT_EQ(curves[0].size(), 2u);  // D = 32 first
  EXPECT_EQ(curves[0][0].decode_tokens, 32);
  EXPECT_EQ(curves[0][0].prefill_tokens, 64);
  EXPECT_DOUBLE_EQ(curves[0][1].retention, 0.75);
  ASSERT_EQ(curves[1].size(), 3u);
  EXPECT_EQ(curves[1][0].prefill_tokens, 100);
  EXPECT_EQ(curves[1][1].prefill_tokens, 256);
  EXPECT_EQ(curves[1][2].prefill_tokens, 1024);
  EXPECT_DOUBLE_EQ(curves[1][0].retention, 1.0);
  EXPECT_DOUBLE_EQ(curves[1][1].retention, 0.8);
  EXPECT_DOUBLE_EQ(curves[1][2].retention, 0.5);
  EXPECT_DOUBLE_EQ(curves[1][1].median, 80);
  ASSERT_TRUE(curves[1][1].ci95_low && curves[1][1].ci95_high);
  EXPECT_DOUBLE_EQ(*curves[1][1].ci95_low, 80 * 0.99);
  EXPECT_EQ(curves[1][1].benchmark_id, "decode_throughput_256_100");

  const auto prefill = PrefillScaling(configs[0]);
  ASSERT_EQ(prefill.size(), 2u);
  EXPECT_EQ(prefill[0].prefill_tokens, 128);
  EXPECT_DOUBLE_EQ(prefill[0].median, 1200);
  EXPECT_EQ(prefill[1].prefill_tokens, 512);
  EXPECT_DOUBLE_EQ(prefill[1].retention, 1.0);
  EXPECT_EQ(prefill[1].decode_tokens, 0);
}

TEST(Scaling, SpeedRatiosOnCommonBenchmarks) {
  std::vector<json> records = {
      Record(kF32, "decode_throughput_64_32", {{"decode_throughput", 100}}),
      Record(kF32, "max_memory_usage_64", {{"max_host_usage", 20 * kMiB}}),
      Record(kF32, "prefill_throughput_64", {{"prefill_throughput", 500}}),
      Record(kQ4, "decode_throughput_64_32", {{"decode_throughput", 250}}),
      Record(kQ4, "max_memory_usage_64", {{"max_host_usage", 15 * kMiB}}),
  };
  const auto configs = GroupConfigurations(records);
  ASSERT_EQ(configs.size(), 2u);
  const auto ratios = SpeedRatios(configs[0], configs[1]);
  ASSERT_EQ(ratios.size(), 2u);
  EXPECT_EQ(ratios[0].benchmark_id, "decode_throughput_64_32");
  EXPECT_EQ(ratios[0].metric, "decode_throughput");
  EXPECT_EQ(ratios[0].unit, "tokens/s");
  EXPECT_DOUBLE_EQ(ratios[0].base, 100);
  EXPECT_DOUBLE_EQ(ratios[0].other, 250);
  EXPECT_DOUBLE_EQ(ratios[0].ratio, 2.5);
  EXPECT_EQ(ratios[1].metric, "max_host_usage");
  EXPECT_DOUBLE_EQ(ratios[1].ratio, 0.75);
}

TEST(Scaling, MemoryAgainstSizeTakesTheLargestPeak) {
  std::vector<json> records = {
      Record(kQ4, "max_memory_usage_64", {{"max_host_usage", 2e6}}),
      Record(kQ4, "max_memory_usage_256", {{"max_host_usage", 3e6}}),
      Record(kQ4, "decode_throughput_64_32", {{"decode_throughput", 100}}),
  };
  const auto configs = GroupConfigurations(records);
  auto m = MemoryAgainstSize(configs[0]);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->file_bytes, 300000u);
  EXPECT_DOUBLE_EQ(m->peak_bytes, 3e6);
  EXPECT_DOUBLE_EQ(m->ratio, 10.0);
  EXPECT_DOUBLE_EQ(m->overhead_bytes, 2.7e6);
  EXPECT_EQ(m->benchmark_id, "max_memory_usage_256");
  const auto no_memory = GroupConfigurations({records[2]});
  EXPECT_FALSE(MemoryAgainstSize(no_memory[0]).has_value());
}

// --- Pareto front ---

TEST(ParetoFront, TwoObjectives) {
  // (speed, -memory): 0 and 2 trade off; 1 is dominated by 0; 3 is dominated by 2.
  EXPECT_EQ(ParetoFront({{10, -5}, {9, -6}, {5, -1}, {4, -1}}), (std::vector<size_t>{0, 2}));
  EXPECT_TRUE(ParetoFront({}).empty());
  EXPECT_EQ(ParetoFront({{1, 1}}), (std::vector<size_t>{0}));
}

TEST(ParetoFront, TiesAreAllOnTheFront) {
  EXPECT_EQ(ParetoFront({{3, 3}, {3, 3}, {2, 3}}), (std::vector<size_t>{0, 1}));
  EXPECT_FALSE(analysis::Dominates({3, 3}, {3, 3}));
  EXPECT_TRUE(analysis::Dominates({3, 3}, {2, 3}));
}

TEST(ParetoFront, NaNObjectivesAreSkippedPairwise) {
  // Point 1 lacks objective 0; against point 0 only objective 1 counts, where 0 is better.
  EXPECT_EQ(ParetoFront({{10, 5}, {kNaN, 4}, {9, kNaN}}), (std::vector<size_t>{0}));
  // Nothing in common: neither dominates.
  EXPECT_EQ(ParetoFront({{kNaN, 4}, {9, kNaN}}), (std::vector<size_t>{0, 1}));
  // Smaller but without a speed: it cannot dominate the one that decodes at 180 tokens/s.
  EXPECT_EQ(ParetoFront({{kNaN, -25}, {180, -30}}), (std::vector<size_t>{0, 1}));
  EXPECT_FALSE(analysis::Dominates({kNaN, -25}, {180, -30}));
}

TEST(ParetoFront, ThreeObjectives) {
  const std::vector<std::vector<double>> points = {
      {100, -20, 90},  // fastest
      {80, -10, 90},   // smallest
      {70, -15, 99},   // best quality
      {70, -20, 90},   // dominated by 0 (and 2)
      {80, -10, 90},   // tie with 1
  };
  EXPECT_EQ(ParetoFront(points), (std::vector<size_t>{0, 1, 2, 4}));
}

// --- limits and Select ---

std::vector<Configuration> ThreeConfigurations() {
  return GroupConfigurations({
      Record(kF32, "decode_throughput_64_32", {{"decode_throughput", 100}}),
      Record(kF32, "max_memory_usage_64", {{"max_host_usage", 30 * kMiB}}),
      Record(kQ8, "decode_throughput_64_32", {{"decode_throughput", 180}}),
      Record(kQ8, "max_memory_usage_64", {{"max_host_usage", 20 * kMiB}}),
      Record(kQ4, "decode_throughput_64_32", {{"decode_throughput", 250}}),
      Record(kQ4, "max_memory_usage_64", {{"max_host_usage", 25 * kMiB}}),
  });
}

TEST(Select, FrontFirstByDecodeSpeedThenDominated) {
  const auto configs = ThreeConfigurations();
  const SelectResult s = Select(configs, Limits{});
  ASSERT_EQ(s.candidates.size(), 3u);
  EXPECT_EQ(s.speed_benchmarks, (std::vector<std::string>{"decode_throughput_64_32"}));
  // Q4_0: fastest; Q8_0: smallest; F32 slower and larger than both.
  EXPECT_EQ(s.candidates[0].config->name, "Q4_0");
  EXPECT_TRUE(s.candidates[0].on_front);
  EXPECT_DOUBLE_EQ(*s.candidates[0].decode_throughput, 250);
  EXPECT_DOUBLE_EQ(*s.candidates[0].peak_memory_bytes, 25 * kMiB);
  EXPECT_FALSE(s.candidates[0].quality.has_value());
  EXPECT_EQ(s.candidates[1].config->name, "Q8_0");
  EXPECT_TRUE(s.candidates[1].on_front);
  EXPECT_EQ(s.candidates[2].config->name, "F32");
  EXPECT_FALSE(s.candidates[2].on_front);
  EXPECT_EQ(s.candidates[2].dominated_by, (std::vector<std::string>{"Q4_0", "Q8_0"}));
  for (const Candidate& c : s.candidates) EXPECT_TRUE(c.excluded_because.empty());
}

TEST(Select, MemoryLimitExcludesWithReason) {
  const auto configs = ThreeConfigurations();
  Limits limits;
  limits.max_memory_bytes = 26 * kMiB;
  const SelectResult s = Select(configs, limits);
  ASSERT_EQ(s.candidates.size(), 3u);
  EXPECT_EQ(s.candidates[0].config->name, "Q4_0");
  EXPECT_EQ(s.candidates[1].config->name, "Q8_0");
  EXPECT_EQ(s.candidates[2].config->name, "F32");
  ASSERT_EQ(s.candidates[2].excluded_because.size(), 1u);
  EXPECT_EQ(s.candidates[2].excluded_because[0],
            "max_host_usage 30.00 MiB (max_memory_usage_64) > limit 26.00 MiB");
  EXPECT_FALSE(s.candidates[2].on_front);
  EXPECT_TRUE(s.candidates[2].dominated_by.empty());  // only passing ones are ranked
}

TEST(Select, DecodeAndLatencyLimitsAndMissingMetrics) {
  const auto configs = ThreeConfigurations();
  Limits limits;
  limits.min_decode_throughput = 150;
  limits.max_ttft_ms = 30;
  const SelectResult s = Select(configs, limits);
  ASSERT_EQ(s.candidates.size(), 3u);
  // Nothing measured ttft: every configuration is excluded, saying why.
  for (const Candidate& c : s.candidates) {
    ASSERT_FALSE(c.excluded_because.empty());
    EXPECT_EQ(c.excluded_because[0], "ttft not measured: cannot check limit 30.00 ms");
  }
  EXPECT_EQ(s.candidates[0].config->name, "F32");  // excluded ones keep the grouping order
  ASSERT_EQ(s.candidates[0].excluded_because.size(), 2u);
  EXPECT_EQ(s.candidates[0].excluded_because[1],
            "decode_throughput 100.00 tokens/s (decode_throughput_64_32) < limit 150 tokens/s");
  EXPECT_EQ(s.candidates[1].excluded_because.size(), 1u);
}

TEST(Select, QualityDropUsesTop1AgreementAndTheReference) {
  json kl8 = Record(kQ8, "kl_divergence_256", {{"top1_agreement", 0.995}});
  kl8["input"]["reference_model"]["sha256"] = kF32.sha;
  json kl4 = Record(kQ4, "kl_divergence_256", {{"top1_agreement", 0.95}});
  kl4["input"]["reference_model"]["sha256"] = kF32.sha;
  std::vector<json> records = {
      Record(kF32, "decode_throughput_64_32", {{"decode_throughput", 100}}),
      Record(kQ8, "decode_throughput_64_32", {{"decode_throughput", 180}}),
      Record(kQ4, "decode_throughput_64_32", {{"decode_throughput", 250}}),
      kl8, kl4};
  const auto configs = GroupConfigurations(records);
  Limits limits;
  limits.max_quality_drop = 2;
  const SelectResult s = Select(configs, limits);
  ASSERT_EQ(s.candidates.size(), 3u);
  EXPECT_EQ(s.candidates[0].config->name, "Q8_0");
  EXPECT_NEAR(*s.candidates[0].quality, 99.5, 1e-9);
  EXPECT_TRUE(s.candidates[0].on_front);
  EXPECT_EQ(s.candidates[1].config->name, "F32");
  EXPECT_DOUBLE_EQ(*s.candidates[1].quality, 100);  // the reference agrees with itself
  EXPECT_TRUE(s.candidates[1].on_front);            // best quality
  EXPECT_EQ(s.candidates[2].config->name, "Q4_0");
  ASSERT_EQ(s.candidates[2].excluded_because.size(), 1u);
  EXPECT_EQ(s.candidates[2].excluded_because[0],
            "quality drop 5.00 pp (top1 agreement 95.00% vs best 100.00%) > limit 2 pp");
}

TEST(Select, QualityLimitWithoutMeasurementExcludes) {
  const auto configs = ThreeConfigurations();
  Limits limits;
  limits.max_quality_drop = 1;
  const SelectResult s = Select(configs, limits);
  for (const Candidate& c : s.candidates) {
    ASSERT_EQ(c.excluded_because.size(), 1u);
    EXPECT_NE(c.excluded_because[0].find("quality not measured"), std::string::npos);
  }
}

TEST(Select, SpeedIsComparedOnCommonShapesAsAGeometricMean) {
  std::vector<json> records = {
      Record(kF32, "decode_throughput_64_32", {{"decode_throughput", 100}}),
      Record(kF32, "decode_throughput_256_32", {{"decode_throughput", 25}}),
      Record(kF32, "decode_throughput_512_32", {{"decode_throughput", 1}}),
      Record(kQ4, "decode_throughput_64_32", {{"decode_throughput", 200}}),
      Record(kQ4, "decode_throughput_256_32", {{"decode_throughput", 50}}),
  };
  const auto configs = GroupConfigurations(records);
  const SelectResult s = Select(configs, Limits{});
  EXPECT_EQ(s.speed_benchmarks,
            (std::vector<std::string>{"decode_throughput_256_32", "decode_throughput_64_32"}));
  ASSERT_EQ(s.candidates.size(), 2u);
  EXPECT_EQ(s.candidates[0].config->name, "Q4_0");
  EXPECT_NEAR(*s.candidates[0].decode_throughput, 100, 1e-9);  // sqrt(200 x 50)
  EXPECT_NEAR(*s.candidates[1].decode_throughput, 50, 1e-9);   // sqrt(100 x 25)
  EXPECT_EQ(s.candidates[1].dominated_by, (std::vector<std::string>{"Q4_0"}));
}

TEST(Select, ConfigurationWithoutDecodeDoesNotEraseSpeedForAll) {
  std::vector<json> records = {
      Record(kF32, "decode_throughput_64_32", {{"decode_throughput", 100}}),
      Record(kF32, "max_memory_usage_64", {{"max_host_usage", 20 * kMiB}}),
      Record(kQ8, "decode_throughput_64_32", {{"decode_throughput", 180}}),
      Record(kQ8, "decode_throughput_256_32", {{"decode_throughput", 90}}),
      Record(kQ8, "max_memory_usage_64", {{"max_host_usage", 30 * kMiB}}),
      Record(kQ4, "max_memory_usage_64", {{"max_host_usage", 35 * kMiB}}),  // no decode result
  };
  const auto configs = GroupConfigurations(records);
  const SelectResult s = Select(configs, Limits{});
  EXPECT_EQ(s.speed_benchmarks, (std::vector<std::string>{"decode_throughput_64_32"}));
  EXPECT_EQ(s.without_decode, (std::vector<std::string>{"Q4_0"}));
  ASSERT_EQ(s.candidates.size(), 3u);
  // Q8_0 faster, F32 smaller: both on the front; Q4_0 has no speed and is larger than both.
  EXPECT_EQ(s.candidates[0].config->name, "Q8_0");
  EXPECT_TRUE(s.candidates[0].on_front);
  EXPECT_DOUBLE_EQ(*s.candidates[0].decode_throughput, 180);
  EXPECT_EQ(s.candidates[1].config->name, "F32");
  EXPECT_TRUE(s.candidates[1].on_front);
  EXPECT_DOUBLE_EQ(*s.candidates[1].decode_throughput, 100);
  EXPECT_EQ(s.candidates[2].config->name, "Q4_0");
  EXPECT_FALSE(s.candidates[2].decode_throughput.has_value());
  EXPECT_FALSE(s.candidates[2].on_front);
  EXPECT_EQ(s.candidates[2].dominated_by, (std::vector<std::string>{"F32", "Q8_0"}));
}

TEST(Select, WithoutDecodeCountsOnlyThePassingCandidates) {
  std::vector<json> records = {
      Record(kF32, "decode_throughput_64_32", {{"decode_throughput", 100}}),
      Record(kF32, "max_memory_usage_64", {{"max_host_usage", 20 * kMiB}}),
      Record(kQ4, "max_memory_usage_64", {{"max_host_usage", 25 * kMiB}}),
  };
  const auto configs = GroupConfigurations(records);
  Limits limits;
  limits.max_memory_bytes = 22 * kMiB;  // Q4_0 excluded
  SelectResult s = Select(configs, limits);
  EXPECT_EQ(s.speed_benchmarks, (std::vector<std::string>{"decode_throughput_64_32"}));
  EXPECT_TRUE(s.without_decode.empty());
  limits.max_memory_bytes = 1;  // none passes: all are looked at
  s = Select(configs, limits);
  EXPECT_EQ(s.without_decode, (std::vector<std::string>{"Q4_0"}));
}

TEST(Select, BenchmarksNarrowTheResultsLookedAt) {
  std::vector<json> records = {
      Record(kF32, "max_memory_usage_64", {{"max_host_usage", 10 * kMiB}}),
      Record(kF32, "max_memory_usage_512", {{"max_host_usage", 40 * kMiB}}),
  };
  const auto configs = GroupConfigurations(records);
  Limits limits;
  limits.max_memory_bytes = 20 * kMiB;
  EXPECT_EQ(Select(configs, limits).candidates[0].excluded_because.size(), 1u);
  limits.benchmarks = {"max_memory_usage_64"};
  const SelectResult s = Select(configs, limits);
  EXPECT_TRUE(s.candidates[0].excluded_because.empty());
  EXPECT_DOUBLE_EQ(*s.candidates[0].peak_memory_bytes, 10 * kMiB);
}

TEST(Select, EmptyInput) {
  const SelectResult s = Select({}, Limits{});
  EXPECT_TRUE(s.candidates.empty());
  EXPECT_TRUE(s.speed_benchmarks.empty());
  EXPECT_TRUE(s.without_decode.empty());
}

// --- command-line helpers ---

TEST(ParseNonNegative, FiniteNumbersAtLeastZeroOnly) {
  EXPECT_DOUBLE_EQ(*analysis::ParseNonNegative("250", "ms"), 250);
  EXPECT_DOUBLE_EQ(*analysis::ParseNonNegative("0", "ms"), 0);
  EXPECT_DOUBLE_EQ(*analysis::ParseNonNegative("0.5", "ms"), 0.5);
  EXPECT_DOUBLE_EQ(*analysis::ParseNonNegative(".5", "ms"), 0.5);
  EXPECT_DOUBLE_EQ(*analysis::ParseNonNegative("1e3", "ms"), 1000);
  for (const char* bad : {"", "nan", "NaN", "inf", "-inf", "infinity", "-1", "-0", "+1", "abc",
                          " 5", "5 ", "5ms", "1e999", "0x10", "1,5"}) {
    auto r = analysis::ParseNonNegative(bad, "milliseconds, e.g. 500");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message, std::string("'") + bad +
                                     "' is not a finite number >= 0; give milliseconds, e.g. 500");
  }
}

TEST(ParseByteSize, UnitsAndErrors) {
  EXPECT_DOUBLE_EQ(*analysis::ParseByteSize("1048576"), 1048576);
  EXPECT_DOUBLE_EQ(*analysis::ParseByteSize("12MiB"), 12 * kMiB);
  EXPECT_DOUBLE_EQ(*analysis::ParseByteSize("1.5 GiB"), 1.5 * 1073741824.0);
  EXPECT_DOUBLE_EQ(*analysis::ParseByteSize("800MB"), 800e6);
  EXPECT_DOUBLE_EQ(*analysis::ParseByteSize("64k"), 65536);
  EXPECT_DOUBLE_EQ(*analysis::ParseByteSize("10 b"), 10);
  const std::string huge = "1" + std::string(300, '0') + "TiB";  // 1e312 bytes: not a double
  for (const std::string& bad :
       std::vector<std::string>{"", "MiB", "12 parsecs", "-5MiB", "1.2.3", "nan", "inf", huge}) {
    auto r = analysis::ParseByteSize(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("is not a size"), std::string::npos);
  }
}

TEST(GroupFilter, ParsesAndMatches) {
  auto f = analysis::ParseGroupFilter("quant=q4_0, threads=2");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->terms.size(), 2u);
  EXPECT_TRUE(analysis::Matches(*f, Record(kQ4, "prefill_throughput_8", {}, 2)));
  EXPECT_FALSE(analysis::Matches(*f, Record(kQ4, "prefill_throughput_8", {}, 1)));
  EXPECT_FALSE(analysis::Matches(*f, Record(kQ8, "prefill_throughput_8", {}, 2)));
  EXPECT_FALSE(analysis::Matches(*f, Record(kQ4, "prefill_throughput_8", {}, 2, "x", "failed")));
  auto m = analysis::ParseGroupFilter("model=Q8_0.gguf,benchmark=prefill_throughput_8");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(analysis::Matches(*m, Record(kQ8, "prefill_throughput_8", {})));
  EXPECT_FALSE(analysis::Matches(*m, Record(kQ8, "prefill_throughput_16", {})));
  EXPECT_TRUE(analysis::Matches(*analysis::ParseGroupFilter("model=CCC"), Record(kQ8, "x", {})));
  EXPECT_TRUE(analysis::Matches(*analysis::ParseGroupFilter("device=dev"), Record(kQ8, "x", {})));
  for (const char* bad : {"", "quant", "colour=red", "quant=", "threads=two", "quant=a,quant=b"}) {
    EXPECT_FALSE(analysis::ParseGroupFilter(bad).ok()) << bad;
  }
  EXPECT_NE(analysis::ParseGroupFilter("colour=red").error().message.find("unknown key 'colour'"),
            std::string::npos);
}

TEST(GroupFilter, PairsNewestByBenchmarkAndListsUnpaired) {
  const std::vector<json> a = {
      Record(kF32, "decode_throughput_64_32", {{"decode_throughput", 1}}, 1, "2026-01-01"),
      Record(kF32, "decode_throughput_64_32", {{"decode_throughput", 2}}, 1, "2026-01-02"),
      Record(kF32, "prefill_throughput_64", {{"prefill_throughput", 3}})};
  const std::vector<json> b = {
      Record(kQ4, "decode_throughput_64_32", {{"decode_throughput", 4}}),
      Record(kQ4, "max_memory_usage_64", {{"max_host_usage", 5}})};
  const auto p = analysis::PairByBenchmark(a, b);
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].benchmark_id, "decode_throughput_64_32");
  EXPECT_EQ((*p.pairs[0].a)["metrics"]["decode_throughput"]["median"], 2);
  EXPECT_EQ((*p.pairs[0].b)["metrics"]["decode_throughput"]["median"], 4);
  EXPECT_EQ(p.only_a, (std::vector<std::string>{"prefill_throughput_64"}));
  EXPECT_EQ(p.only_b, (std::vector<std::string>{"max_memory_usage_64"}));
}

}  // namespace
}  // namespace pipette
