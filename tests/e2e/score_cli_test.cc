// `pipette score` as a user runs it: the shared verdict corpus scored from JSON Lines, and bad
// input (duplicate or unknown ids, text that is not UTF-8, a 1 MB completion, deep nesting)
// answered with one line or a verdict. Needs ../shared (skipped with the reason when absent).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "tests/support/scoring_corpus.h"

namespace pipette::testing_models {
namespace {

const std::string kEvalsDir = std::string(PIPETTE_SHARED_DIR) + "/data/evals";

class ScoreCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kEvalsDir + "/scoring/gpqa_verdicts.jsonl.gz") ||
        !std::filesystem::exists(kEvalsDir + "/math500/test.jsonl")) {
      GTEST_SKIP() << "no eval data under " << kEvalsDir << " (needs ../shared beside the repo)";
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("pipette_score_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Writes `lines` to a file in the test's folder and returns its path.
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  // The corpus as {"id": "<sample_id>#k", "completion"} lines.
  std::string CorpusCompletions(const std::string& file) {
    std::string lines;
    for (const auto& r : pipette::testing::ReadScoringCorpus(file)) {
      const std::string cid = r["completion_id"];
      lines += nlohmann::json{{"id", r["sample_id"].get<std::string>() + cid.substr(cid.find('#'))},
                              {"completion", r["completion"]}}
                   .dump() +
               "\n";
    }
    return lines;
  }

  CliResult Score(const std::string& eval, const std::string& path) {
    return RunPipette(
        {"--json", "score", "--eval", eval, "--completions", path, "--data-dir", kEvalsDir});
  }

  std::filesystem::path dir_;
};

TEST_F(ScoreCli, ScoresTheGpqaCorpusAsTheTrueVerdictsSay) {
  const auto r =
      Score("gpqa_diamond", Write("g.jsonl", CorpusCompletions("gpqa_verdicts.jsonl.gz")));
  ASSERT_TRUE(r.exit.exited && r.exit.code == 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["completions"], 328);
  EXPECT_EQ(out["correct"], 271);  // sum of true_is_correct
  EXPECT_EQ(out["rule_set"], "pipette-gpqa/1");
  ASSERT_EQ(out["samples"].size(), 328u);
  EXPECT_EQ(out["samples"][0]["method"], "answer_label");
}

TEST_F(ScoreCli, UpstreamCompatGradesAsUpstream) {
  const std::string path = Write("g.jsonl", CorpusCompletions("gpqa_verdicts.jsonl.gz"));
  auto r = RunPipette({"--json", "score", "--eval", "gpqa_diamond", "--completions", path,
                       "--data-dir", kEvalsDir, "--upstream-compat"});
  ASSERT_TRUE(r.exit.exited && r.exit.code == 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["correct"], 246);  // sum of upstream_is_correct
  EXPECT_EQ(out["rule_set"], "upstream-gpqa/d93e2e1");
  r = RunPipette({"--json", "score", "--eval", "math_500", "--completions",
                  Write("m.jsonl", CorpusCompletions("math500_verdicts.jsonl.gz")), "--data-dir",
                  kEvalsDir, "--upstream-compat"});
  ASSERT_TRUE(r.exit.exited && r.exit.code == 0) << r.err;
  const auto math = nlohmann::json::parse(r.out);
  EXPECT_EQ(math["correct"], 508);  // sum of upstream_is_correct
  EXPECT_EQ(math["rule_set"], "upstream-math/d93e2e1");
}

TEST_F(ScoreCli, ScoresTheMathCorpus) {
  const auto r =
      Score("math_500", Write("m.jsonl", CorpusCompletions("math500_verdicts.jsonl.gz")));
  ASSERT_TRUE(r.exit.exited && r.exit.code == 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["completions"], 927);
  EXPECT_NEAR(out["correct"].get<int>(), 666, 1);  // sum of true_is_correct; one known miss
}

TEST_F(ScoreCli, BadInputIsOneLineOrAVerdict) {
  const std::string line = R"({"id":"7dde1f25c2e1#0","completion":"Answer: C"})";
  auto r = Score("gpqa_diamond", Write("dup.jsonl", line + "\n" + line + "\n"));
  EXPECT_EQ(r.exit.code, 2);
  EXPECT_NE(r.err.find("dup.jsonl:2: duplicate id '7dde1f25c2e1#0'"), std::string::npos) << r.err;
  r = Score("gpqa_diamond", Write("unk.jsonl", R"({"id":"nope","completion":"A"})"));
  EXPECT_EQ(r.exit.code, 2);
  EXPECT_NE(r.err.find("unk.jsonl:1: unknown gpqa_diamond sample id 'nope'"), std::string::npos);
  r = Score("gpqa_diamond",
            Write("bin.jsonl", "{\"id\":\"7dde1f25c2e1\",\"completion\":\"Answer: \xff C\"}\n"));
  EXPECT_EQ(r.exit.code, 2);
  EXPECT_NE(r.err.find("bin.jsonl:1: text that is not UTF-8"), std::string::npos) << r.err;
  // A 1 MB completion ending in 100,000 unclosed braces, and a deeply nested box: verdicts.
  const std::string big = R"({"id":"e7b7a0f871c3","completion":")" + std::string(1 << 20, 'x') +
                          "\\\\boxed{" + std::string(100000, '{') + "\"}\n";
  std::string nested = "\\\\boxed{";
  for (int i = 0; i < 5000; ++i) nested += "\\\\frac{1}{";
  nested += std::string(5001, '}');
  r = Score("math_500", Write("big.jsonl",
                              big + R"({"id":"e7b7a0f871c3#1","completion":")" + nested + "\"}\n"));
  ASSERT_EQ(r.exit.code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["completions"], 2);
  EXPECT_EQ(out["correct"], 0);
}

}  // namespace
}  // namespace pipette::testing_models
