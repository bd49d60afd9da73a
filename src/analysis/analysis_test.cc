// Unit tests of include/pipette/analysis.h on hand-built pipette.result/1 records.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "analysis/byte_size.h"
#include "analysis/group_filter.h"
#include "analysis/record_fields.h"
#include "analysis/select_parts.h"
#include "pipette/analysis.h"
#include "pipette/gguf.h"
#include "pipette/stats.h"

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
            "max_host_usage 30.00 MiB [29.70 MiB, 30.30 MiB] (max_memory_usage_64) <= limit "
            "26.00 MiB: fail, needs 0.867x the peak memory");
  EXPECT_EQ(s.candidates[2].verdict, Verdict::kFail);
  ASSERT_EQ(s.candidates[2].checks.size(), 1u);
  EXPECT_NEAR(s.candidates[2].checks[0].margin, (26.0 - 30.0) / 26.0, 1e-12);
  EXPECT_NEAR(s.candidates[2].checks[0].factor, 26.0 / 30.0, 1e-12);
  EXPECT_EQ(s.candidates[0].verdict, Verdict::kPass);
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
    EXPECT_EQ(c.excluded_because[0], "ttft not measured: cannot check limit 30 ms");
  }
  EXPECT_EQ(s.candidates[0].config->name, "F32");  // excluded ones keep the grouping order
  ASSERT_EQ(s.candidates[0].excluded_because.size(), 2u);
  EXPECT_EQ(s.candidates[0].excluded_because[1],
            "decode_throughput 100 tokens/s [99, 101] (decode_throughput_64_32) >= limit 150 "
            "tokens/s: fail, needs 1.50x the decode speed");
  EXPECT_EQ(s.candidates[1].excluded_because.size(), 1u);
}

TEST(Select, PowerAndEnergyLimitsJudgeTheWorstResultAndNeverReadAbsentAsZero) {
  // Q8_0's device reported energy (prefill draws more power, decode more energy per token);
  // Q4_0's did not: its metrics are absent, so it cannot be checked and fails saying why.
  const auto configs = GroupConfigurations({
      Record(kQ8, "prefill_throughput_512",
             {{"prefill_throughput", 900}, {"average_power", 6.0}, {"energy_per_token", 7.0}}),
      Record(kQ8, "decode_throughput_64_32",
             {{"decode_throughput", 180}, {"average_power", 4.0}, {"energy_per_token", 22.0}}),
      Record(kQ4, "decode_throughput_64_32", {{"decode_throughput", 250}}),
  });
  Limits limits;
  limits.max_power_w = 5;
  limits.max_energy_per_token_mj = 30;
  EXPECT_TRUE(limits.any());
  SelectResult s = Select(configs, limits);
  ASSERT_EQ(s.candidates.size(), 2u);
  for (const Candidate& c : s.candidates) {
    ASSERT_EQ(c.checks.size(), 2u) << c.config->name;
    EXPECT_EQ(c.verdict, Verdict::kFail) << c.config->name;
  }
  const Candidate& q8 = s.candidates[0].config->name == "Q8_0" ? s.candidates[0] : s.candidates[1];
  const Candidate& q4 = &q8 == &s.candidates[0] ? s.candidates[1] : s.candidates[0];
  EXPECT_EQ(q8.checks[0].limit, "max_power");
  EXPECT_EQ(q8.checks[0].benchmark_id, "prefill_throughput_512");  // the worst: 6 W
  EXPECT_EQ(q8.checks[0].text,
            "average_power 6 W [5.94, 6.06] (prefill_throughput_512) <= limit 5 W: fail, "
            "needs 0.833x the power");
  EXPECT_EQ(q8.checks[1].limit, "max_energy_per_token");
  EXPECT_EQ(q8.checks[1].benchmark_id, "decode_throughput_64_32");  // the worst: 22 mJ/token
  EXPECT_EQ(q8.checks[1].verdict, Verdict::kPass);
  EXPECT_NEAR(q8.checks[1].margin, (30.0 - 22.0) / 30.0, 1e-12);
  for (const LimitCheck& c : q4.checks) {
    EXPECT_FALSE(c.measured);
    EXPECT_EQ(c.verdict, Verdict::kFail);
    EXPECT_NE(c.text.find("not measured (the device reported no energy"), std::string::npos)
        << c.text;
  }
  // A budget both meet: Q8_0 passes and is ranked; Q4_0 still cannot be checked.
  limits.max_power_w = 6.5;
  s = Select(configs, limits);
  EXPECT_EQ(s.candidates[0].config->name, "Q8_0");
  EXPECT_EQ(s.candidates[0].verdict, Verdict::kPass);
  EXPECT_EQ(s.candidates[1].verdict, Verdict::kFail);
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
            "quality_drop 5 pp [4.05, 5.95] (kl_divergence_256) <= limit 2 pp: fail, misses it "
            "by 3 pp (top-1 agreement 95% vs best 100%)");
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

// A new user's select showed 1850 tokens/s (the mean of two shapes) beside 1092 (one shape only):
// a configuration that lacks a shared shape is not compared on decode, and says which it lacks.
TEST(Select, DecodeIsComparedLikeForLikeOrNotAtAll) {
  std::vector<json> records = {
      Record(kQ8, "decode_throughput_64_32", {{"decode_throughput", 2000}}),
      Record(kQ8, "decode_throughput_256_32", {{"decode_throughput", 1700}}),
      Record(kQ8, "max_memory_usage_64", {{"max_host_usage", 20 * kMiB}}),
      Record(kF32, "decode_throughput_256_32", {{"decode_throughput", 1092}}),
      Record(kF32, "max_memory_usage_64", {{"max_host_usage", 40 * kMiB}}),
  };
  const auto configs = GroupConfigurations(records);
  Limits limits;
  limits.max_memory_bytes = 30 * kMiB;  // F32 fails: the shared shapes are Q8_0's
  const SelectResult s = Select(configs, limits);
  EXPECT_EQ(s.speed_benchmarks,
            (std::vector<std::string>{"decode_throughput_256_32", "decode_throughput_64_32"}));
  ASSERT_EQ(s.decode_not_compared.size(), 1u);
  EXPECT_EQ(s.decode_not_compared[0].first, "F32");
  EXPECT_EQ(s.decode_not_compared[0].second,
            (std::vector<std::string>{"decode_throughput_64_32"}));
  ASSERT_EQ(s.candidates.size(), 2u);
  EXPECT_EQ(s.candidates[0].config->name, "Q8_0");
  EXPECT_NEAR(*s.candidates[0].decode_throughput, std::sqrt(2000.0 * 1700.0), 1e-9);
  EXPECT_EQ(s.candidates[1].config->name, "F32");
  EXPECT_FALSE(s.candidates[1].decode_throughput.has_value());
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

// The peak with its parts for people: from a memory benchmark's medians, else from the logs of a
// one-session cell; shared memory only when there was some; nothing from a record without them.
TEST(ResidentSplitText, MemoryMetricsThenLogsElseNothing) {
  json memory = Record(Model{}, "max_memory_usage_64",
                       {{"max_host_usage", 812 * kMiB}, {"rss_anon_at_peak", 40 * kMiB},
                        {"rss_file_at_peak", 770 * kMiB}});
  memory["model"]["size_bytes"] = 760 * kMiB;
  EXPECT_EQ(analysis::ResidentSplitText(memory).value_or("none"),
            "peak 812.00 MiB (anonymous 40.00 MiB, file-backed 770.00 MiB; the model file "
            "760.00 MiB)");
  memory["metrics"]["rss_shmem_at_peak"] = {{"unit", "bytes"}, {"n", 5}, {"median", 2 * kMiB}};
  EXPECT_EQ(analysis::ResidentSplitText(memory).value_or("none"),
            "peak 812.00 MiB (anonymous 40.00 MiB, file-backed 770.00 MiB, shared 2.00 MiB; the "
            "model file 760.00 MiB)");

  json decode = Record(Model{}, "decode_throughput_64_16", {{"decode_throughput", 900.0}});
  EXPECT_EQ(analysis::ResidentSplitText(decode), std::nullopt);  // records before the split
  decode["logs"] = {{"peak_host_bytes_during_cell", 12 * 1048576},
                    {"rss_anon_bytes_at_peak_during_cell", 3 * 1048576},
                    {"rss_file_bytes_at_peak_during_cell", 8 * 1048576},
                    {"rss_shmem_bytes_at_peak_during_cell", 0}};
  decode["model"].erase("size_bytes");
  EXPECT_EQ(analysis::ResidentSplitText(decode).value_or("none"),
            "peak during the cell 12.00 MiB (anonymous 3.00 MiB, file-backed 8.00 MiB)");
}

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
  EXPECT_DOUBLE_EQ(*analysis::ParseByteSize("1048576B"), 1048576);
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
  // Issue 7: "--max-memory 11.5" was 11.5 bytes; a number without a unit is refused with the fix.
  auto bare = analysis::ParseByteSize("11.5");
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.error().message,
            "'11.5' has no unit: did you mean 11.5MiB? (give B, KB, MB, GB, KiB, MiB or GiB, e.g. "
            "12MiB, or 11.5B for bytes)");
  EXPECT_FALSE(analysis::ParseByteSize("1048576").ok());
}

// --- limits judged on confidence intervals (issue 7) ---

// A decode result with an explicit interval.
json Decode(const Model& m, double median, double low, double high, bool noisy = false) {
  json r = Record(m, "decode_throughput_256_100", {{"decode_throughput", median}});
  r["metrics"]["decode_throughput"]["ci95_low"] = low;
  r["metrics"]["decode_throughput"]["ci95_high"] = high;
  r["benchmark"]["type"] = "decode";
  r["harness"]["ci_reached"] = !noisy;
  return r;
}

TEST(Select, LimitsAreJudgedOnTheConfidenceInterval) {
  const auto configs = GroupConfigurations({Decode(kF32, 1100, 1050, 1150),   // whole CI above
                                            Decode(kQ8, 1010, 980, 1040, true),  // crosses 1000
                                            Decode(kQ4, 377, 371, 383)});     // whole CI below
  Limits limits;
  limits.min_decode_throughput = 1000;
  const SelectResult s = Select(configs, limits);
  ASSERT_EQ(s.candidates.size(), 3u);
  EXPECT_EQ(s.candidates[0].config->name, "F32");
  EXPECT_EQ(s.candidates[0].verdict, Verdict::kPass);
  EXPECT_NEAR(s.candidates[0].checks[0].margin, 0.10, 1e-12);
  EXPECT_EQ(s.candidates[0].checks[0].text,
            "decode_throughput 1100 tokens/s [1050, 1150] (decode_throughput_256_100) >= limit "
            "1000 tokens/s: pass, margin +10.0%");
  // Borderline: ranked (never silently passed), said, and flagged noisy.
  EXPECT_EQ(s.candidates[1].config->name, "Q8_0");
  EXPECT_EQ(s.candidates[1].verdict, Verdict::kBorderline);
  EXPECT_TRUE(s.candidates[1].excluded_because.empty());
  ASSERT_EQ(s.candidates[1].borderline_because.size(), 1u);
  EXPECT_NE(s.candidates[1].borderline_because[0].find("(decode_throughput_256_100, noisy) >= limit 1000 "
                                                        "tokens/s: borderline, the interval crosses"),
            std::string::npos);
  EXPECT_TRUE(s.candidates[1].noisy);
  EXPECT_TRUE(s.candidates[1].checks[0].noisy);
  EXPECT_EQ(s.candidates[2].config->name, "Q4_0");
  EXPECT_EQ(s.candidates[2].verdict, Verdict::kFail);
  EXPECT_NEAR(s.candidates[2].checks[0].factor, 1000.0 / 377, 1e-12);
  EXPECT_NE(s.candidates[2].excluded_because[0].find("fail, needs 2.65x the decode speed"),
            std::string::npos);
  EXPECT_STREQ(VerdictName(Verdict::kBorderline), "borderline");
  // F32 and Q8_0 overlap (1050-1150 vs 980-1040)? No: 1040 < 1050, so speed is not all noise.
  EXPECT_FALSE(s.speed_within_noise);
}

TEST(Select, SpeedsInsideEachOthersIntervalsAreWithinTheNoise) {
  const auto configs =
      GroupConfigurations({Decode(kQ8, 377, 360, 395), Decode(kQ4, 374, 350, 390)});
  const SelectResult s = Select(configs, Limits{});
  EXPECT_TRUE(s.speed_within_noise);
  EXPECT_DOUBLE_EQ(*s.candidates[0].decode_ci95_low, 360);
  EXPECT_DOUBLE_EQ(*s.candidates[0].decode_ci95_high, 395);
}

TEST(Select, FactorsAndMarginsNeverReadAsOneOrZeroWhenTheyAreNot) {
  const auto configs = GroupConfigurations({Decode(kQ8, 202.26, 202.2, 202.3)});
  Limits limits;
  limits.min_decode_throughput = 202.31;  // above the whole interval: fail by 0.02%
  SelectResult s = Select(configs, limits);
  ASSERT_EQ(s.candidates[0].verdict, Verdict::kFail);
  EXPECT_NE(s.candidates[0].checks[0].text.find("needs 1.0002x the decode speed"),
            std::string::npos)
      << s.candidates[0].checks[0].text;
  limits.min_decode_throughput = 202.25;  // the median just above: +0.005%, not +0.0%
  s = Select(configs, limits);
  EXPECT_NE(s.candidates[0].checks[0].text.find("median margin +0.0049%"), std::string::npos)
      << s.candidates[0].checks[0].text;
  Limits zero;
  zero.max_ttft_ms = 0;
  const auto ttft = GroupConfigurations(
      {Record(kQ8, "end_to_end_latency_64_32", {{"ttft", 10.0}}),
       Record(kQ8, "prefill_throughput_512", {{"ttft", 204.0}})});
  s = Select(ttft, zero);
  EXPECT_EQ(s.candidates[0].checks[0].benchmark_id, "prefill_throughput_512");  // the worst
  EXPECT_NE(s.candidates[0].checks[0].text.find("a limit of 0 that nothing measured can meet"),
            std::string::npos);
  Limits huge;
  huge.min_decode_throughput = 1e308;
  s = Select(configs, huge);
  EXPECT_LT(s.candidates[0].checks[0].text.size(), 200u) << s.candidates[0].checks[0].text;
}

TEST(Select, DecodeLimitIsJudgedOnDecodeBenchmarksOnly) {
  json e2e = Record(kQ8, "end_to_end_latency_256_256", {{"decode_throughput", 500.0}});
  const auto configs = GroupConfigurations({Decode(kQ8, 1500, 1490, 1510), e2e});
  Limits limits;
  limits.min_decode_throughput = 1000;
  const SelectResult s = Select(configs, limits);
  EXPECT_EQ(s.candidates[0].verdict, Verdict::kPass);
  EXPECT_EQ(s.candidates[0].checks[0].benchmark_id, "decode_throughput_256_100");
}

TEST(Select, WorstResultOfAMetricDecides) {
  json small = Decode(kQ8, 1500, 1490, 1510);
  json deep = Decode(kQ8, 1000, 990, 1010);
  deep["benchmark"]["id"] = "decode_throughput_512_100";
  const auto configs = GroupConfigurations({small, deep});
  Limits limits;
  limits.min_decode_throughput = 1200;
  const SelectResult s = Select(configs, limits);
  ASSERT_EQ(s.candidates.size(), 1u);
  EXPECT_EQ(s.candidates[0].verdict, Verdict::kFail);
  EXPECT_EQ(s.candidates[0].checks[0].benchmark_id, "decode_throughput_512_100");
}

// --- pooling repeated results (issue 7) ---

// A decode result with per-repetition samples.
json WithSamples(const Model& m, const std::vector<double>& values, const std::string& started,
                 bool ci_reached) {
  json r = Decode(m, 0, 0, 0, !ci_reached);
  const Summary sum = Summarize(values);
  r["metrics"]["decode_throughput"] = ToJson(sum, "tokens/s");
  r["metrics"]["load_time"] = ToJson(Summarize(std::vector<double>{50}), "ms");
  r["samples"] = json::array();
  for (size_t i = 0; i < values.size(); ++i) {
    r["samples"].push_back({{"rep", i + 1}, {"decode_throughput", values[i]},
                            {"inter_token_latency", {1.0, 2.0}}});
  }
  r["metrics"]["inter_token_latency"] =
      ToJson(Summarize(std::vector<double>(values.size() * 2, 1.5), true), "ms");
  r["started_at"] = started;
  r["config_id"] = "cfg-" + m.quant;
  r["harness"]["ci_target"] = 0.02;
  return r;
}

TEST(Pooling, RepeatedResultsArePooledAndNewestKeepsTheOldBehaviour) {
  // Q8_0: a steady result and a noisy rerun; Q4_K: one steady result just below Q8_0's first.
  const std::vector<double> steady = {420, 421, 419, 420, 422, 418, 420};
  const std::vector<double> noisy = {360, 470, 365, 468, 362, 471, 364};
  const Model q4{"s-Q4_0.gguf", "dddd", "Q4_0", 300000};
  const std::vector<json> records = {
      WithSamples(kQ8, steady, "2026-01-01T00:00:00.000Z", true),
      WithSamples(kQ8, noisy, "2026-01-02T00:00:00.000Z", false),
      WithSamples(q4, {395, 396, 394, 395, 397, 393, 395}, "2026-01-01T00:00:00.000Z", true)};

  const auto pooled = GroupConfigurations(records);
  ASSERT_EQ(pooled.size(), 2u);
  const json* q8 = pooled[1].Find("decode_throughput_256_100");
  ASSERT_NE(q8, nullptr);
  EXPECT_EQ((*q8)["pooled"]["results"], 2);
  EXPECT_EQ((*q8)["pooled"]["noisy_results"], 1);
  EXPECT_EQ((*q8)["harness"]["reps"], 14);
  EXPECT_EQ((*q8)["samples"].size(), 14u);
  EXPECT_EQ((*q8)["samples"][13]["rep"], 14);
  std::vector<double> all = steady;
  all.insert(all.end(), noisy.begin(), noisy.end());
  EXPECT_DOUBLE_EQ((*q8)["metrics"]["decode_throughput"]["median"].get<double>(), Median(all));
  EXPECT_EQ((*q8)["metrics"]["decode_throughput"]["n"], 14);
  EXPECT_EQ((*q8)["metrics"]["load_time"]["n"], 2);              // one value per cell
  EXPECT_EQ((*q8)["metrics"]["inter_token_latency"]["n"], 28);   // per-token series flattened
  EXPECT_TRUE((*q8)["metrics"]["inter_token_latency"].contains("p99"));
  // The pooled ranking follows the pooled estimate: Q8_0 (median 419.5) ahead of Q4_0 (395).
  const SelectResult sp = Select(pooled, Limits{});
  EXPECT_EQ(sp.candidates[0].config->name, "Q8_0");
  EXPECT_EQ(sp.candidates[0].pooled_results, 2u);

  // --newest: the noisy rerun alone decides, as before (median 365 < 395).
  const auto newest = GroupConfigurations(records, Repeats::kNewest);
  const SelectResult sn = Select(newest, Limits{});
  EXPECT_EQ(sn.candidates[0].config->name, "Q4_0");
  EXPECT_FALSE(newest[1].Find("decode_throughput_256_100")->contains("pooled"));
  EXPECT_TRUE(sn.candidates[1].noisy);
}

TEST(Pooling, OnlyTheSameConfigIdAndPoolableTypesArePooled) {
  json a = WithSamples(kQ8, {1, 2, 3}, "2026-01-01T00:00:00.000Z", true);
  json b = WithSamples(kQ8, {4, 5, 6}, "2026-01-02T00:00:00.000Z", true);
  b["config_id"] = "another-methodology";
  const auto configs = GroupConfigurations({a, b});
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_FALSE(configs[0].results[0].contains("pooled"));
  EXPECT_DOUBLE_EQ(configs[0].results[0]["metrics"]["decode_throughput"]["median"].get<double>(), 5);
  json soak1 = a, soak2 = WithSamples(kQ8, {4, 5, 6}, "2026-01-02T00:00:00.000Z", true);
  soak1["benchmark"] = {{"id", "soak_8_8_1"}, {"type", "soak"}};
  soak2["benchmark"] = soak1["benchmark"];
  EXPECT_EQ(PoolResults({&soak2, &soak1}), soak2);
}

// Issue 27: a mean-only import (llama-bench's sql output: no samples, n 0) has no repetitions to
// pool; the pool is the sampled results' and names the one it left out.
TEST(Pooling, AMeanOnlyResultIsLeftOutOfThePoolAndNamed) {
  json sampled_old = WithSamples(kQ8, {400, 401, 399, 400, 402}, "2026-01-01T00:00:00.000Z", true);
  sampled_old["result_id"] = "old";
  json sampled_new = WithSamples(kQ8, {410, 411, 409}, "2026-01-02T00:00:00.000Z", true);
  sampled_new["result_id"] = "new";
  json mean_only = WithSamples(kQ8, {1, 2, 3}, "2026-01-03T00:00:00.000Z", true);
  mean_only["result_id"] = "sql";
  mean_only.erase("samples");
  mean_only["metrics"]["decode_throughput"] = {{"unit", "tokens/s"}, {"n", 0}, {"median", 999.0},
                                               {"mean", 999.0}, {"estimate", "mean"}};
  // Newest first, as the store gives them: the mean-only import is the newest.
  const json pooled = PoolResults({&mean_only, &sampled_new, &sampled_old});
  EXPECT_EQ(pooled["pooled"]["results"], 2);
  EXPECT_EQ(pooled["pooled"]["result_ids"], json({"new", "old"}));
  ASSERT_EQ(pooled["pooled"]["left_out"].size(), 1u);
  EXPECT_EQ(pooled["pooled"]["left_out"][0]["result_id"], "sql");
  EXPECT_EQ(pooled["pooled"]["left_out"][0]["reason"],
            "no per-repetition values of decode_throughput (a mean without samples)");
  EXPECT_EQ(pooled["metrics"]["decode_throughput"]["n"], 8);
  EXPECT_DOUBLE_EQ(pooled["metrics"]["decode_throughput"]["median"].get<double>(), 401.5);
  // With one sampled result: its own numbers, and the pool still says what it left out.
  const json lone = PoolResults({&mean_only, &sampled_new});
  EXPECT_EQ(lone["result_id"], "new");
  EXPECT_EQ(lone["pooled"]["results"], 1);
  EXPECT_EQ(lone["pooled"]["left_out"][0]["result_id"], "sql");
  EXPECT_DOUBLE_EQ(lone["metrics"]["decode_throughput"]["median"].get<double>(), 410);
  // Only mean-only results: the newest as it is.
  json mean_older = mean_only;
  mean_older["result_id"] = "sql-old";
  EXPECT_EQ(PoolResults({&mean_only, &mean_older}), mean_only);
}

// --- honest labels (issue 7) ---

TEST(QuantLabel, NamesWhatTheTensorsHoldWhenTheyDoNotCarryTheLabel) {
  const std::map<std::string, uint64_t> fallback = {{"f32", 13}, {"q5_0", 29}, {"q8_0", 3}};
  EXPECT_EQ(QuantLabel("Q4_K_M", fallback), "Q4_K_M (no q4_K tensors: q5_0 x29, q8_0 x3)");
  EXPECT_EQ(QuantLabel("Q8_0", {{"f32", 13}, {"q8_0", 32}}), "Q8_0");
  EXPECT_EQ(QuantLabel("F32", {{"f32", 45}}), "F32");
  EXPECT_EQ(QuantLabel("Q4_0", {}), "Q4_0");
  json model = {{"quant", "Q4_K_M"}, {"tensor_types", {{"q5_0", 29}, {"q8_0", 3}, {"f32", 13}}}};
  EXPECT_EQ(QuantLabel(model), "Q4_K_M (no q4_K tensors: q5_0 x29, q8_0 x3)");
  model["quant_inferred"] = true;
  EXPECT_EQ(QuantLabel(model), "Q4_K_M");
  // Configurations are named by it wherever they are shown.
  const Model km{"s-Q4_K_M.gguf", "eeee", "Q4_K_M", 400000};
  json r = Record(km, "decode_throughput_64_32", {{"decode_throughput", 1}});
  r["model"]["tensor_types"] = {{"q5_0", 29}, {"q8_0", 3}, {"f32", 13}};
  const auto configs =
      GroupConfigurations({r, Record(kQ8, "decode_throughput_64_32", {{"decode_throughput", 1}})});
  EXPECT_EQ(configs[0].quant_label, "Q4_K_M (no q4_K tensors: q5_0 x29, q8_0 x3)");
  EXPECT_EQ(configs[0].name, "Q4_K_M (no q4_K tensors: q5_0 x29, q8_0 x3)");
  EXPECT_EQ(configs[1].name, "Q8_0");
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
  // A device by its name or its URI as well as by its id; the store narrows by id prefixes only.
  json board = Record(kQ8, "x", {});
  board["device"]["name"] = "pi-5";
  board["device"]["uri"] = "ssh://pi@board";
  for (const char* given : {"device=pi-5", "device=ssh://pi@board", "device=dev1"}) {
    auto d = analysis::ParseGroupFilter(given);
    ASSERT_TRUE(d.ok()) << given;
    EXPECT_TRUE(analysis::Matches(*d, board)) << given;
    EXPECT_TRUE(analysis::ToResultFilter(*d).devices.empty()) << given;  // not lowercase hex
  }
  EXPECT_FALSE(analysis::Matches(*analysis::ParseGroupFilter("device=pi-4"), board));
  EXPECT_EQ(analysis::ToResultFilter(*analysis::ParseGroupFilter("device=0d96")).devices,
            std::vector<std::string>{"0d96"});
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
  // Without per-repetition samples the newest estimate stands (nothing to pool).
  EXPECT_EQ(p.pairs[0].a["metrics"]["decode_throughput"]["median"], 2);
  EXPECT_EQ(p.pairs[0].b["metrics"]["decode_throughput"]["median"], 4);
  EXPECT_EQ(p.only_a, (std::vector<std::string>{"prefill_throughput_64"}));
  EXPECT_EQ(p.only_b, (std::vector<std::string>{"max_memory_usage_64"}));
}

}  // namespace
}  // namespace pipette
