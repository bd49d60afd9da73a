// End-to-end: decisions with eval accuracy (issue 9, item 5), through the CLI.
//   - Two quantizations of stories260K through a real MATH-500 eval and a decode cell each, then
//     `select --max-accuracy-drop`, `compare` (McNemar on the attempts paired by key) and `report`
//     (the quality-vs-speed chart on eval accuracy) on them.
//   - Hand-made eval records with known verdicts: the drop, its paired interval and McNemar p as
//     select and compare print them.
//   - Bad limits: one line naming the flag and what to give.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "model_fixtures.h"
#include "pipette/store.h"
#include "stored_records.h"

namespace pipette {
namespace {

using nlohmann::json;
using namespace testing_models;
namespace fs = std::filesystem;

const std::string kEvalsDir = pipette::testing::DataDir() + "/evals";
const std::string kMath = "eval_math_500_2026.06.1";

json Parsed(const CliResult& r) {
  const json j = json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << r.out << r.err;
  return j.is_object() ? j : json::object();
}

TEST(EvalDecisionE2e, TwoQuantizationsThroughARealEvalThenSelectCompareAndReport) {
  if (Stories260K("Q8_0").empty()) GTEST_SKIP() << SharedMissingReason();
  if (!fs::exists(kEvalsDir + "/math500/test.jsonl")) {
    GTEST_SKIP() << pipette::testing::NeedData("MATH-500");
  }
  const std::string dir = WorkDir() + "/eval-decision";
  fs::create_directories(dir);
  const std::string store = dir + "/store.db";
  for (const char* quant : {"Q8_0", "Q4_0"}) {
    auto eval = RunPipette({"--store",
                            store,
                            "--json",
                            "run",
                            "-q",
                            "-m",
                            Stories260K(quant),
                            "-b",
                            kMath,
                            "-t",
                            "1",
                            "--data-dir",
                            kEvalsDir,
                            "--limit",
                            "5",
                            "--repeats",
                            "2",
                            "--max-tokens",
                            "48",
                            "--temperature",
                            "0.3",
                            "--checkpoint-dir",
                            dir + "/checkpoints",
                            "--no-readiness-load"});
    ASSERT_EQ(eval.exit.code, 0) << quant << ": " << eval.err;
    const json record = Parsed(eval);
    ASSERT_EQ(record["status"], "ok") << eval.out;
    ASSERT_EQ(record["completions"].size(), 10u);
    auto decode = RunPipette({"--store", store, "--json", "run", "-q", "-m", Stories260K(quant),
                              "-b", "decode_throughput_64_16", "-t", "1", "--max-reps", "5",
                              "--no-readiness-load"});
    ASSERT_EQ(decode.exit.code, 0) << quant << ": " << decode.err;
  }

  // Each eval joins its quantization's decode result: two configurations, accuracy the quality.
  auto sel =
      RunPipette({"--store", store, "--json", "select", "--max-accuracy-drop", "math_500=2"});
  ASSERT_EQ(sel.exit.code, 0) << sel.err;
  const json s = Parsed(sel);
  EXPECT_EQ(s["configurations"], 2);
  EXPECT_EQ(s["quality_metric"], "accuracy");
  EXPECT_EQ(s["quality_benchmark"], kMath);
  EXPECT_EQ(s["limits"]["max_accuracy_drop"]["math_500"], 2.0);
  double accuracy[2];
  int i = 0;
  for (const char* quant : {"Q8_0", "Q4_0"}) {
    const json* c = FindCandidate(s, quant);
    ASSERT_NE(c, nullptr) << quant;
    EXPECT_TRUE((*c)["decode_throughput"].is_number()) << quant;
    ASSERT_TRUE((*c)["quality"].is_number()) << quant;
    EXPECT_EQ((*c)["accuracy_attempts"], 10) << quant;
    accuracy[i++] = (*c)["quality"].get<double>();
    const json& check = (*c)["checks"][0];
    EXPECT_EQ(check["limit"], "max_accuracy_drop");
    EXPECT_EQ(check["eval"], "math_500");
    EXPECT_EQ(check["benchmark_id"], kMath);
    EXPECT_TRUE(check["measured"].get<bool>());
    EXPECT_GE(check["value"].get<double>(), 0) << check["text"];  // from the best of the two
  }
  // The less accurate one is judged against the other on the 10 attempts both ran (on a tie the
  // reference is the first in select's order, Q4_0).
  const json* worse = FindCandidate(s, accuracy[0] <= accuracy[1] ? "Q8_0" : "Q4_0");
  const json* best = FindCandidate(s, accuracy[0] <= accuracy[1] ? "Q4_0" : "Q8_0");
  EXPECT_DOUBLE_EQ((*best)["checks"][0]["value"].get<double>(), 0);
  EXPECT_DOUBLE_EQ((*worse)["checks"][0]["value"].get<double>(),
                   std::abs(accuracy[0] - accuracy[1]));
  EXPECT_NE((*worse)["checks"][0]["text"].get<std::string>().find("paired on 10 attempts"),
            std::string::npos)
      << (*worse)["checks"][0]["text"];

  auto text = RunPipette({"--store", store, "select", "--max-accuracy-drop", "math_500=2"});
  ASSERT_EQ(text.exit.code, 0) << text.err;
  EXPECT_NE(text.out.find("ACCURACY (%, 95% CI)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("quality: eval accuracy on " + kMath), std::string::npos) << text.out;

  auto cmp = RunPipette({"--store", store, "compare", "--a", "quant=Q8_0", "--b", "quant=Q4_0"});
  ASSERT_EQ(cmp.exit.code, 0) << cmp.err;
  EXPECT_NE(cmp.out.find(kMath + " accuracy: paired test on the same attempts, 10 paired by key"),
            std::string::npos)
      << cmp.out;

  auto md = RunPipette(
      {"--store", store, "report", "--format", "md", "--max-accuracy-drop", "math_500=2"});
  ASSERT_EQ(md.exit.code, 0) << md.err;
  EXPECT_NE(md.out.find("## Quality vs speed"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("against its eval accuracy on " + kMath), std::string::npos) << md.out;
  auto html = RunPipette({"--store", store, "report"});
  ASSERT_EQ(html.exit.code, 0) << html.err;
  EXPECT_NE(html.out.find("MATH-500 accuracy (%), " + kMath), std::string::npos);  // the y axis
}

// An eval record of `quant` on questions q1..q10 (two attempts each), right on `right`.
json EvalRecord(const std::string& quant, const std::vector<std::string>& right, double low,
                double high, int seconds) {
  json r = StoredRecord("stories260K-" + quant + ".gguf", quant, kMath, json::object(), seconds);
  r["benchmark"]["type"] = "eval";
  r["eval"] = {{"dataset", "math_500"}, {"repeats", 2}};
  json completions = json::array();
  int correct = 0;
  for (int q = 1; q <= 10; ++q) {
    for (int k = 0; k < 2; ++k) {
      std::string key = "q";
      key += std::to_string(q);
      key += '#';
      key += static_cast<char>('0' + k);
      const bool ok = std::find(right.begin(), right.end(), key) != right.end();
      correct += ok;
      completions.push_back({{"key", key},
                             {"id", key.substr(0, key.find('#'))},
                             {"attempt", k},
                             {"completion", ok ? "\\boxed{1}" : "\\boxed{2}"},
                             {"stop", "eos"},
                             {"parsed", true},
                             {"correct", ok}});
    }
  }
  r["completions"] = completions;
  r["samples"] = json::array();
  r["metrics"] = {{"accuracy",
                   {{"unit", "ratio"},
                    {"n", 20},
                    {"count", correct},
                    {"median", correct / 20.0},
                    {"mean", correct / 20.0},
                    {"ci95_low", low},
                    {"ci95_high", high},
                    {"questions", 10}}}};
  return r;
}

TEST(EvalDecisionE2e, KnownAccuraciesGiveTheDropAndMcNemarAsPrinted) {
  const std::string store = WorkDir() + "/eval-known.db";
  // F32 right on q1..q6 (12 of 20); Q4_0 on q1, q2 and q3#0 (5 of 20): 7 discordant, all F32's.
  PutRecords(store, {StoredRecord("stories260K-F32.gguf", "F32", "decode_throughput_64_16",
                                  {{"decode_throughput", 100}}, 1),
                     StoredRecord("stories260K-Q4_0.gguf", "Q4_0", "decode_throughput_64_16",
                                  {{"decode_throughput", 300}}, 2),
                     EvalRecord("F32",
                                {"q1#0", "q1#1", "q2#0", "q2#1", "q3#0", "q3#1", "q4#0", "q4#1",
                                 "q5#0", "q5#1", "q6#0", "q6#1"},
                                0.40, 0.80, 3),
                     EvalRecord("Q4_0", {"q1#0", "q1#1", "q2#0", "q2#1", "q3#0"}, 0.10, 0.45, 4)});
  auto sel = RunPipette({"--store", store, "--json", "select", "--max-accuracy-drop", "math_500=5",
                         "--min-accuracy", "math_500=20%"});
  ASSERT_EQ(sel.exit.code, 0) << sel.err;
  const json s = Parsed(sel);
  const json* q4 = FindCandidate(s, "Q4_0");
  ASSERT_NE(q4, nullptr);
  EXPECT_EQ((*q4)["verdict"], "fail");
  // min_accuracy 20%: 25% [10, 45] crosses it.
  EXPECT_EQ((*q4)["checks"][0]["verdict"], "borderline");
  EXPECT_DOUBLE_EQ((*q4)["checks"][0]["value"].get<double>(), 25);
  // 35 points below F32, the paired interval (10 and more) wholly above 5.
  const json& drop = (*q4)["checks"][1];
  EXPECT_EQ(drop["verdict"], "fail");
  EXPECT_DOUBLE_EQ(drop["value"].get<double>(), 35);
  EXPECT_GE(drop["ci95_low"].get<double>(), 10);
  EXPECT_NE(drop["text"].get<std::string>().find(
                "(accuracy 25% vs 60% of F32, paired on 20 attempts, McNemar p = 0.0156)"),
            std::string::npos)
      << drop["text"];
  EXPECT_EQ((*FindCandidate(s, "F32"))["verdict"], "pass");
  EXPECT_DOUBLE_EQ((*FindCandidate(s, "F32"))["quality"].get<double>(), 60);

  auto cmp =
      RunPipette({"--store", store, "--json", "compare", "--a", "quant=F32", "--b", "quant=Q4_0"});
  ASSERT_EQ(cmp.exit.code, 0) << cmp.err;
  const json c = Parsed(cmp);
  ASSERT_EQ(c["pairs"].size(), 2u);
  const json* row = nullptr;
  for (const json& p : c["pairs"]) {
    for (const json& m : p["metrics"]) {
      if (m["metric"] == "accuracy") row = &m;
    }
  }
  ASSERT_NE(row, nullptr) << c.dump();
  EXPECT_EQ((*row)["test"], "mcnemar_exact");
  EXPECT_EQ((*row)["paired"], 20);
  EXPECT_EQ((*row)["a_only_correct"], 7);
  EXPECT_EQ((*row)["b_only_correct"], 0);
  EXPECT_DOUBLE_EQ((*row)["p_value"].get<double>(), 2.0 / 128);
  EXPECT_DOUBLE_EQ((*row)["difference_pp"].get<double>(), -35);
  EXPECT_EQ((*row)["verdict"], "worse");
  auto cmp_text =
      RunPipette({"--store", store, "compare", "--a", "quant=F32", "--b", "quant=Q4_0"});
  EXPECT_NE(cmp_text.out.find("right only in A: 7, right only in B: 0; exact McNemar p = 0.0156"),
            std::string::npos)
      << cmp_text.out;
}

TEST(EvalDecisionE2e, BadAccuracyLimitsSayWhichFlagAndWhatToGive) {
  const std::string store = WorkDir() + "/eval-bad.db";
  PutRecords(store, {EvalRecord("Q8_0", {"q1#0"}, 0, 0.1, 1)});
  const auto one_line = [&](const std::vector<std::string>& limit, const std::string& says) {
    std::vector<std::string> args = {"--store", store, "select"};
    args.insert(args.end(), limit.begin(), limit.end());
    auto r = RunPipette(args);
    EXPECT_NE(r.exit.code, 0) << limit[0];
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  one_line({"--min-accuracy", "math_500=1.5"}, "--min-accuracy math_500=1.5: more than 1; give");
  one_line({"--min-accuracy", "math_500"}, "--min-accuracy math_500: give EVAL=X");
  one_line({"--max-accuracy-drop", "mmlu=2"}, "'mmlu' is not an eval; give math_500");
  one_line({"--max-accuracy-drop", "math_500=-1"}, "--max-accuracy-drop math_500=-1: '-1' is not");
  one_line({"--max-accuracy-drop", "math_500=2", "--reference", "Q5_K"},
           "--reference Q5_K names no configuration");
  one_line({"--reference", "Q8_0"}, "give --max-accuracy-drop EVAL=PP with it");
}

}  // namespace
}  // namespace pipette
