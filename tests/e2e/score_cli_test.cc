// `pipette score` as a user runs it: the shared verdict corpus scored from JSON Lines, and bad
// input (duplicate or unknown ids, text that is not UTF-8, a 1 MB completion, deep nesting)
// answered with one line or a verdict. Needs ../shared (skipped with the reason when absent).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "base/sha256.h"
#include "cli_runner.h"
#include "tests/support/scoring_corpus.h"

namespace pipette::testing_models {
namespace {

const std::string kEvalsDir = pipette::testing::DataDir() + "/evals";

class ScoreCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kEvalsDir + "/scoring/gpqa_verdicts.jsonl.gz")) {
      GTEST_SKIP() << pipette::testing::NeedData("the scorer verdict corpus");
    }
    if (!std::filesystem::exists(kEvalsDir + "/math500/test.jsonl")) GTEST_SKIP() << pipette::testing::NeedData("MATH-500");
    if (!std::filesystem::exists(kEvalsDir + "/gpqa_diamond/gpqa_diamond.csv.gz")) {
      GTEST_SKIP() << pipette::testing::NeedData("GPQA Diamond");
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

// IFBench through `score`: upstream's own strict and loose verdicts on 192 responses, per
// instruction, as `--json` lists them; a 10 MB response gets a verdict; a profile is IFBench's.
TEST_F(ScoreCli, IfBenchAgreesWithUpstreamPerInstruction) {
  if (!std::filesystem::exists(kEvalsDir + "/ifbench/nlp/stopwords/english")) {
    GTEST_SKIP() << pipette::testing::NeedData("IFBench's model data");
  }
  std::map<std::string, std::string> prompt_of;  // key -> prompt
  std::ifstream tests(kEvalsDir + "/ifbench/IFBench_test.jsonl");
  for (std::string line; std::getline(tests, line);) {
    const auto t = nlohmann::json::parse(line);
    prompt_of[t["key"]] = t["prompt"];
  }
  std::string lines;
  std::map<std::string, nlohmann::json> expected;  // sample id -> record
  for (const auto& r : pipette::testing::ReadScoringCorpus("ifbench_verdicts.jsonl.gz")) {
    const std::string id = Sha256Hex(prompt_of.at(r["key"])).substr(0, 12);
    lines += nlohmann::json{{"id", id}, {"completion", r["response"]}}.dump() + "\n";
    expected[id] = r;
  }
  const auto r = Score("ifbench", Write("if.jsonl", lines));
  ASSERT_TRUE(r.exit.exited && r.exit.code == 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["rule_set"], "pipette-ifbench/1");
  ASSERT_EQ(out["samples"].size(), 192u);
  int instructions = 0, strict_agree = 0, loose_agree = 0, prompt_loose_agree = 0;
  for (const auto& s : out["samples"]) {
    const auto& e = expected.at(s["id"]);
    ASSERT_EQ(s["strict"].size(), e["strict"].size());
    ASSERT_EQ(s["loose"].size(), e["loose"].size());
    for (size_t i = 0; i < e["strict"].size(); ++i) {
      ++instructions;
      strict_agree += s["strict"][i] == e["strict"][i];
      loose_agree += s["loose"][i] == e["loose"][i];
    }
    prompt_loose_agree += s["correct"] == e["loose_prompt"];
  }
  EXPECT_EQ(instructions, 223);
  EXPECT_GE(strict_agree, 222);  // the issue's floor is 99.5%; the port agrees on all 223
  EXPECT_GE(loose_agree, 222);
  EXPECT_GE(prompt_loose_agree, 191);  // at least 99%
  EXPECT_EQ(out["prompt_level"]["loose"].get<double>(), 53.0 / 192);
  EXPECT_EQ(out["instruction_level"]["instructions"], 223);

  // A hostile response: 10 MB of text, every loose variant checked, linear in its length.
  const std::string id = expected.begin()->first;
  const std::string big = nlohmann::json{{"id", id + "#0"}, {"completion", std::string(10 << 20, 'a')}}.dump();
  const auto hostile = Score("ifbench", Write("h.jsonl", big + "\n"));
  ASSERT_EQ(hostile.exit.code, 0) << hostile.err;
  EXPECT_EQ(nlohmann::json::parse(hostile.out)["completions"], 1);
  auto fixed = RunPipette({"--json", "score", "--eval", "ifbench", "--profile", "fixed",
                           "--completions", Write("if2.jsonl", lines), "--data-dir", kEvalsDir});
  ASSERT_EQ(fixed.exit.code, 0) << fixed.err;
  EXPECT_EQ(nlohmann::json::parse(fixed.out)["rule_set"], "pipette-ifbench/1 (fixed)");
  auto wrong = RunPipette({"score", "--eval", "math_500", "--profile", "fixed", "--completions",
                           Write("m.jsonl", ""), "--data-dir", kEvalsDir});
  EXPECT_EQ(wrong.exit.code, 2);
  EXPECT_NE(wrong.err.find("a scoring profile is IFBench's"), std::string::npos) << wrong.err;
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
