// Decision files: what they hold and every refusal (issue 26, "Bad input").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "pipette/decide.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

class DecisionFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("decide_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    for (const char* m : {"m-F32.gguf", "m-Q8_0.gguf"}) std::ofstream(dir_ / m) << "GGUF";
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result<DecisionFile> Parse(const std::string& decision,
                             const std::string& benchmarks =
                                 R"("max_memory_usage_256", "decode_throughput_256_100", "kl_divergence_512")") {
    const std::string text = R"(name = "d"
benchmarks = [)" + benchmarks + R"(]
[[models]]
path = "m-F32.gguf"
[[models]]
path = "m-Q8_0.gguf"
reference = "m-F32.gguf"
[[runtimes]]
name = "llamacpp"
settings = { threads = [1, 2] }
)" + decision;
    return ParseDecisionToml(text, dir_.string(), "d.toml");
  }

  fs::path dir_;
};

TEST_F(DecisionFileTest, ReadsLimitsObjectivesAndStages) {
  auto f = Parse(R"(
[decision]
objectives = ["decode", "memory", "quality"]
alpha = 0.1
budget_minutes = 30
[decision.limits]
max_memory = "12.5MiB"
min_decode_throughput = 1000
max_quality_drop_pp = 5
[decision.screen]
repetitions = 15
[decision.measure]
rounds = 3
[decision.stabilize]
finalists = 2
soak = "soak_256_256_2"
)");
  ASSERT_TRUE(f.ok()) << f.error().message;
  const Decision& d = f->decision;
  ASSERT_EQ(d.objectives.size(), 3u);
  EXPECT_EQ(d.objectives[2], FunnelObjective::kQuality);
  EXPECT_DOUBLE_EQ(d.alpha, 0.1);
  EXPECT_DOUBLE_EQ(*d.limits.max_memory_bytes, 12.5 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*d.limits.min_decode_throughput, 1000);
  EXPECT_DOUBLE_EQ(*d.limits.max_quality_drop, 5);
  EXPECT_EQ(d.screen_repetitions, 15);
  EXPECT_EQ(d.measure_rounds, 3);
  EXPECT_EQ(d.finalists, 2);
  EXPECT_EQ(d.soak, "soak_256_256_2");
  EXPECT_DOUBLE_EQ(d.soak_minutes, 2);
  EXPECT_EQ(f->suite.benchmarks.size(), 3u);
  EXPECT_FALSE(f->suite_json.contains("decision"));
  EXPECT_EQ(f->limits_json["max_memory"], "12.5MiB");
  EXPECT_FALSE(f->decision_json.contains("limits"));
}

TEST_F(DecisionFileTest, NoLimitAndNoObjectiveIsNothingToDecideOn) {
  auto f = Parse("[decision]\nalpha = 0.05\n");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message,
            "d.toml: [decision] has no limit and no objective: nothing to decide on; add "
            "[decision.limits] (e.g. max_memory = \"12.5MiB\") or objectives = [\"decode\", "
            "\"memory\", \"quality\"]");
  auto none = Parse("");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no [decision] table"), std::string::npos);
}

TEST_F(DecisionFileTest, ALimitNoBenchmarkMeasuresIsRefused) {
  auto f = Parse("[decision.limits]\nmax_ttft_ms = 50\n");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message,
            "d.toml: decision.limits.max_ttft_ms: no benchmark of the suite measures it; add "
            "prefill_throughput_<P> or end_to_end_latency_<P>_<D> to benchmarks, or drop it");
  auto acc = Parse("[decision.limits]\nmin_accuracy = { math_500 = 0.3 }\n");
  ASSERT_FALSE(acc.ok());
  EXPECT_NE(acc.error().message.find("decision.limits.min_accuracy.math_500: no benchmark of the "
                                     "suite measures it; add eval_math_500_<version>"),
            std::string::npos)
      << acc.error().message;
  auto objective = Parse("[decision]\nobjectives = [\"quality\"]\n", R"("decode_throughput_256_100")");
  ASSERT_FALSE(objective.ok());
  EXPECT_NE(objective.error().message.find("decision.objectives quality: no benchmark"),
            std::string::npos);
}

TEST_F(DecisionFileTest, ASoakLongerThanTheBudgetIsRefused) {
  auto f = Parse(R"(
[decision]
objectives = ["decode"]
budget_minutes = 15
[decision.stabilize]
finalists = 2
soak = "soak_256_256_10"
)");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message,
            "d.toml: decision.stabilize: 2 finalists x soak_256_256_10 (10 min) = 20 min of soak, "
            "more than decision.budget_minutes = 15; shorten the soak, soak fewer finalists or "
            "raise the budget");
}

// Issue 26: the recommended stabilize soak is the varied one; its minutes count against the budget.
TEST_F(DecisionFileTest, AVariedSoakIsAcceptedAndItsMinutesCount) {
  auto f = Parse(R"(
[decision]
objectives = ["decode"]
budget_minutes = 30
[decision.stabilize]
finalists = 2
soak = "soak_varied_256_256_10"
)");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->decision.soak, "soak_varied_256_256_10");
  EXPECT_DOUBLE_EQ(f->decision.soak_minutes, 10);
  auto over = Parse(R"(
[decision]
objectives = ["decode"]
budget_minutes = 15
[decision.stabilize]
soak = "soak_varied_256_256_10"
)");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message.rfind("d.toml: decision.stabilize: 2 finalists x "
                                       "soak_varied_256_256_10 (10 min) = 20 min of soak",
                                       0),
            0u)
      << over.error().message;
  auto tiny = Parse("[decision]\nobjectives = [\"decode\"]\n[decision.stabilize]\n"
                    "soak = \"soak_varied_4_4_1\"\n");
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error().message.rfind("d.toml: decision.stabilize.soak: 'soak_varied_4_4_1' is "
                                       "not a soak benchmark; give soak_varied_<P>_<D>_<minutes>",
                                       0),
            0u)
      << tiny.error().message;
}

TEST_F(DecisionFileTest, BadValuesNameTheKey) {
  struct Case {
    std::string decision, expected;
  };
  const std::vector<Case> cases = {
      {"[decision]\nobjectives = [\"speed\"]\n",
       "d.toml: decision.objectives: 'speed' is not an objective; use decode, memory or quality"},
      {"[decision.limits]\nmax_memory = \"12.5\"\n",
       "d.toml: decision.limits.max_memory: '12.5' has no unit"},
      {"[decision.limits]\nmin_decode_throughput = -3\n",
       "d.toml: decision.limits.min_decode_throughput: expected a finite number >= 0"},
      {"[decision.limits]\nmax_tokens = 3\n", "d.toml: decision.limits.max_tokens: unknown key"},
      {"[decision]\nobjectives = [\"decode\"]\nalpha = 0.9\n",
       "d.toml: decision.alpha: expected a rate above 0 and below 0.5"},
      {"[decision]\nobjectives = [\"decode\"]\n[decision.stabilize]\nsoak = \"decode_throughput_256_100\"\n",
       "d.toml: decision.stabilize.soak: 'decode_throughput_256_100' is not a soak benchmark"},
      {"[decision]\nobjectives = [\"decode\"]\n[decision.measure]\nrounds = 99\n",
       "d.toml: decision.measure.rounds: expected an integer from 0 to 20"},
      {"[decision]\nobjectives = [\"decode\"]\nscreen = 3\n",
       "d.toml: decision.screen: expected a table ([decision.screen])"},
  };
  for (const Case& c : cases) {
    auto f = Parse(c.decision);
    ASSERT_FALSE(f.ok()) << c.decision;
    EXPECT_EQ(f.error().message.rfind(c.expected, 0), 0u) << f.error().message;
  }
}

}  // namespace
}  // namespace pipette
