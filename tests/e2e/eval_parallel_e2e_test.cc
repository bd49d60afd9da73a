// Eval attempts in parallel (`--parallel N`, `[eval] parallel`): the llamacpp driver decodes N
// attempts as sequences of one llama.cpp batch, each with its own KV stream and sampler. These
// tests run the real driver on stories260K Q8_0 (../shared; skipped with the reason when absent)
// and hold each attempt's result to the one it gets alone: the same completions, stop reasons
// and token counts at N = 4 as at N = 1, greedy and seeded; the doom-loop detector cutting at the
// same token; a prompt too long failing alone; a driver killed mid-step failing the attempts it
// ran and the cell going on; Ctrl-C and resume; the suite key; the warnings where llama.cpp's
// batched arithmetic differs; bad input, one line each.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "eval_fixtures.h"
#include "model_fixtures.h"

namespace pipette::testing_models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kEvalsDir = pipette::testing::DataDir() + "/evals";
const char* kMath = "eval_math_500_2026.06.1";


// What must not depend on N, per attempt key.
struct Outcome {
  std::string completion, stop, error_stage;
  int output_tokens = -1;
  bool correct = false;
  bool operator==(const Outcome&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "{stop " << o.stop << ", " << o.output_tokens << " tokens, error_stage '"
            << o.error_stage << "', correct " << o.correct << ", text " << json(o.completion)
            << "}";
}

std::map<std::string, Outcome> Outcomes(const json& record) {
  std::map<std::string, Outcome> out;
  for (const json& c : record.value("completions", json::array())) {
    out[c["key"].get<std::string>()] = {c.value("completion", ""), c.value("stop", ""),
                                        c.value("error_stage", ""), c.value("output_tokens", -1),
                                        c.value("correct", false)};
  }
  return out;
}

class EvalParallelE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Stories260K("Q8_0").empty()) GTEST_SKIP() << SharedMissingReason();
    if (!fs::exists(kEvalsDir + "/math500/test.jsonl")) {
      GTEST_SKIP() << pipette::testing::NeedData("MATH-500");
    }
    dir_ = WorkDir() + "/evalpar-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(dir_);
  }

  // `pipette run` of stories260K Q8_0 on MATH-500 into `store`, `parallel` attempts together,
  // on one thread (`extra`: more options).
  std::vector<std::string> MathArgs(const std::string& store, int parallel,
                                    const std::string& temperature, const std::string& limit,
                                    const std::string& repeats,
                                    const std::string& max_tokens = "200",
                                    const std::vector<std::string>& extra = {"-t", "1"}) const {
    std::vector<std::string> a = {"--store", store, "--json", "run", "-m", Stories260K("Q8_0"),
                                  "-b", kMath, "--data-dir", kEvalsDir, "--limit", limit,
                                  "--repeats", repeats, "--max-tokens", max_tokens,
                                  "--temperature", temperature, "--seed", "7", "--parallel",
                                  std::to_string(parallel)};
    a.insert(a.end(), kShortContextDetector.begin(), kShortContextDetector.end());
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }



  std::string dir_;
};

// Greedy decoding (temperature 0) of 12 MATH-500 questions: four attempts decoded together give
// each attempt the text, stop reason and token count it gets alone, the detector's cuts and the
// prompts too long for the 512-token context included.
TEST_F(EvalParallelE2e, GreedyCompletionsAtFourEqualThoseAtOne) {
  auto one = RunPipette(MathArgs(dir_ + "/one.db", 1, "0", "12", "1"));
  ASSERT_EQ(one.exit.code, 0) << one.err;
  auto four = RunPipette(MathArgs(dir_ + "/four.db", 4, "0", "12", "1"));
  ASSERT_EQ(four.exit.code, 0) << four.err;
  const json r1 = RecordOf(one), r4 = RecordOf(four);
  ASSERT_EQ(r4["status"], "ok") << r4.dump();
  EXPECT_EQ(r1["eval"]["parallel"], 1);
  EXPECT_EQ(r4["eval"]["parallel"], 4);
  EXPECT_EQ(r4["eval"]["sample_ids"], r1["eval"]["sample_ids"]);
  EXPECT_EQ(r4["eval"]["sampling"]["chain"], "greedy");
  // Not a runtime setting: the same configuration, whatever N.
  EXPECT_EQ(r4["config_id"], r1["config_id"]);
  EXPECT_EQ(r4["runtime"]["settings"], r1["runtime"]["settings"]);
  const auto o1 = Outcomes(r1), o4 = Outcomes(r4);
  ASSERT_EQ(o1.size(), 12u);
  EXPECT_EQ(o4, o1);
  // The run exercised what must keep working per attempt.
  int context = 0, doom = 0, generated = 0;
  for (const auto& [key, o] : o4) {
    context += o.error_stage == "context";
    doom += o.stop == "doom_loop";
    generated += o.output_tokens > 0;
  }
  EXPECT_GT(generated, 4);
  EXPECT_GT(doom, 0) << r4["completions"].dump(1);
  EXPECT_GT(context, 0) << "no prompt exceeded the 512-token context; pick other questions";
  // The completions come in sample order, however they ended; each keeps its own timings.
  std::vector<std::string> keys1, keys4;
  for (const json& c : r1["completions"]) keys1.push_back(c["key"]);
  for (const json& c : r4["completions"]) keys4.push_back(c["key"]);
  EXPECT_EQ(keys4, keys1);
  for (const json& c : r4["completions"]) {
    if (c["stop"] == "failure") continue;
    EXPECT_GT(c["time_to_first_token_ms"].get<double>(), 0) << c.dump();
    EXPECT_GE(c["total_ms"].get<double>(), c["time_to_first_token_ms"].get<double>()) << c.dump();
    if (c["output_tokens"].get<int>() >= 2) {
      EXPECT_GT(c["generation_throughput"], 0) << c.dump();
    }
  }
  EXPECT_EQ(r4["metrics"]["accuracy"]["count"], r1["metrics"]["accuracy"]["count"]);
  EXPECT_EQ(r4["logs"]["warnings"], r1["logs"]["warnings"]);  // nothing to warn about here
}

// On two threads with flash attention off, the attention of every sequence is summed as a lone
// sequence's (with it on, llama.cpp splits a lone sequence's attention across threads once it
// spans 512 cells, which the record warns about): the completions still equal N = 1's, and the
// contexts here pass 256 tokens, so the attention spans 512 cells.
TEST_F(EvalParallelE2e, TwoThreadsWithoutFlashAttentionStillEqualOne) {
  const std::vector<std::string> two = {"-t", "2", "--flash-attn", "off"};
  auto one = RunPipette(MathArgs(dir_ + "/one.db", 1, "0", "8", "1", "200", two));
  ASSERT_EQ(one.exit.code, 0) << one.err;
  auto four = RunPipette(MathArgs(dir_ + "/four.db", 4, "0", "8", "1", "200", two));
  ASSERT_EQ(four.exit.code, 0) << four.err;
  const json r1 = RecordOf(one), r4 = RecordOf(four);
  EXPECT_EQ(r4["runtime"]["settings"]["threads"], 2);
  EXPECT_EQ(Outcomes(r4), Outcomes(r1));
  int past_256 = 0;
  for (const json& c : r4["completions"]) {
    past_256 += c.value("prompt_tokens", 0) + c.value("output_tokens", 0) > 256;
  }
  EXPECT_GT(past_256, 0);
}

// Seeded sampling (temperature 0.8, two attempts per question): every attempt has its own
// sampler chain seeded from its key, so three attempts together draw what each draws alone.
TEST_F(EvalParallelE2e, SeededSamplingAtThreeEqualsOne) {
  auto one = RunPipette(MathArgs(dir_ + "/one.db", 1, "0.8", "6", "2"));
  ASSERT_EQ(one.exit.code, 0) << one.err;
  auto three = RunPipette(MathArgs(dir_ + "/three.db", 3, "0.8", "6", "2"));
  ASSERT_EQ(three.exit.code, 0) << three.err;
  const json r1 = RecordOf(one), r3 = RecordOf(three);
  ASSERT_EQ(r3["status"], "ok") << r3.dump();
  EXPECT_EQ(r3["eval"]["sampling"]["chain"], "top_k,top_p,min_p,temp,dist");
  const auto o1 = Outcomes(r1), o3 = Outcomes(r3);
  ASSERT_EQ(o1.size(), 12u);
  EXPECT_EQ(o3, o1);
  // The two attempts of a question are different draws.
  int differ = 0;
  for (const auto& [key, o] : o1) {
    if (key.ends_with("#0") && o.output_tokens > 0) {
      const std::string other = key.substr(0, key.size() - 2) + "#1";
      differ += o1.at(other).completion != o.completion;
    }
  }
  EXPECT_GT(differ, 0);
}

// The driver killed while four attempts decode together: those attempts are recorded as failed
// (the engine died under them), the session restarts once, and the others complete as alone.
TEST_F(EvalParallelE2e, DriverKilledMidStepFailsTheAttemptsItRanAndTheCellGoesOn) {
  const auto args = MathArgs(dir_ + "/k.db", 4, "0", "8", "2", "280");
  int killed = -1;
  auto r = RunAndActAt(args, "attempt 4/16", [&](int pid) {
    killed = DriverPid(pid);
    if (killed > 0) ::kill(killed, SIGKILL);
  });
  ASSERT_GT(killed, 0) << "no driver process found";
  ASSERT_EQ(r.exit.code, 0) << r.err;
  const json rec = RecordOf(r);
  EXPECT_EQ(rec["status"], "ok");
  ASSERT_EQ(rec["completions"].size(), 16u);
  int killed_attempts = 0;
  for (const json& c : rec["completions"]) {
    if (c["stop"] == "failure" && c["error"].get<std::string>().find("signal") != std::string::npos) {
      ++killed_attempts;
    }
  }
  EXPECT_GE(killed_attempts, 1) << rec["completions"].dump(1);
  EXPECT_LE(killed_attempts, 4) << rec["completions"].dump(1);
  const std::string err = r.err;
  size_t restarts = 0;
  for (size_t at = err.find("restarting llamacpp"); at != std::string::npos;
       at = err.find("restarting llamacpp", at + 1)) {
    ++restarts;
  }
  EXPECT_EQ(restarts, 1u) << err;
  // The attempts that ran after the restart are the ones a run alone gives.
  auto alone = RunPipette(MathArgs(dir_ + "/alone.db", 1, "0", "8", "2", "280"));
  ASSERT_EQ(alone.exit.code, 0) << alone.err;
  const auto oa = Outcomes(RecordOf(alone));
  for (const auto& [key, o] : Outcomes(rec)) {
    if (o.stop != "failure" || o.error_stage == "context") {
      EXPECT_EQ(o, oa.at(key)) << key;
    }
  }
}

// Ctrl-C while attempts run together: those checkpointed stay, the ones in flight run again on
// resume, and the resumed result holds the completions an uninterrupted run gives.
TEST_F(EvalParallelE2e, CtrlCThenResumeGivesTheUninterruptedCompletions) {
  const std::string store = dir_ + "/c.db";
  const auto args = MathArgs(store, 4, "0.8", "10", "2");
  auto stopped = RunAndActAt(args, "attempt 6/20", [](int pid) { ::kill(pid, SIGINT); });
  EXPECT_EQ(stopped.exit.code, 130) << stopped.err;
  auto resumed = RunPipette(args);
  ASSERT_EQ(resumed.exit.code, 0) << resumed.err;
  const json rec = RecordOf(resumed);
  const int before = rec["eval"]["resumed_attempts"];
  EXPECT_GE(before, 6);
  EXPECT_LT(before, 20);
  EXPECT_EQ(rec["eval"]["attempts_run_here"].get<int>() + before, 20);
  auto whole = RunPipette(MathArgs(dir_ + "/w.db", 1, "0.8", "10", "2"));
  ASSERT_EQ(whole.exit.code, 0) << whole.err;
  EXPECT_EQ(Outcomes(rec), Outcomes(RecordOf(whole)));
}

// A suite's [eval] parallel reaches the cell and its record.
TEST_F(EvalParallelE2e, SuiteEvalParallelIsRecorded) {
  const std::string suite = dir_ + "/s.toml";
  std::ofstream(suite) << "name = \"par\"\nbenchmarks = [\"" << kMath << "\"]\n"
                       << "[[models]]\npath = \"" << Stories260K("Q8_0") << "\"\n"
                       << "[[runtimes]]\nname = \"llamacpp\"\nsettings = { threads = 1 }\n"
                       << "[eval]\ndata_dir = \"" << kEvalsDir << "\"\nlimit = 3\nrepeats = 1\n"
                       << "max_tokens = 24\ntemperature = 0\nparallel = 2\n";
  const std::string store = dir_ + "/s.db";
  auto r = RunPipette({"--store", store, "suite", "run", suite});
  ASSERT_EQ(r.exit.code, 0) << r.out << r.err;
  auto exported = RunPipette({"--store", store, "results", "export"});
  ASSERT_EQ(exported.exit.code, 0) << exported.err;
  const json rec = json::parse(exported.out.substr(0, exported.out.find('\n')));
  EXPECT_EQ(rec["eval"]["parallel"], 2) << rec["eval"].dump();
  EXPECT_EQ(rec["completions"].size(), 3u);

  std::ofstream(dir_ + "/bad.toml") << "name = \"par\"\nbenchmarks = [\"" << kMath << "\"]\n"
                                    << "[[models]]\npath = \"" << Stories260K("Q8_0") << "\"\n"
                                    << "[eval]\nparallel = 65\n";
  auto bad = RunPipette({"--store", dir_ + "/bad.db", "suite", "run", dir_ + "/bad.toml"});
  EXPECT_NE(bad.exit.code, 0);
  EXPECT_NE(bad.err.find("eval.parallel"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("65"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

// Where llama.cpp's batched arithmetic differs from a lone sequence's (float weights go through
// other kernels for several rows; flash attention on several threads is split for a lone
// sequence only), a result that may differ from its --parallel 1 text says so.
TEST_F(EvalParallelE2e, WhereBatchedArithmeticDiffersTheRecordSaysSo) {
  const auto run = [&](const std::string& model, const std::string& n,
                       const std::vector<std::string>& extra) {
    std::vector<std::string> a = {"--store", dir_ + "/f.db", "--json", "run", "-m", model, "-b",
                                  kMath, "--data-dir", kEvalsDir, "--limit", "2", "--repeats", "1",
                                  "--max-tokens", "8", "--parallel", n};
    a.insert(a.end(), extra.begin(), extra.end());
    auto r = RunPipette(a);
    EXPECT_EQ(r.exit.code, 0) << r.err;
    return RecordOf(r);
  };
  const auto warned = [](const json& rec, const std::string& what) {
    for (const json& w : rec["logs"]["warnings"]) {
      if (w.get<std::string>().find(what) != std::string::npos) return true;
    }
    return false;
  };
  const std::vector<std::string> one_thread = {"-t", "1"};
  EXPECT_TRUE(warned(run(Stories260K("F32"), "2", one_thread), "with F32 weights"));
  EXPECT_FALSE(warned(run(Stories260K("F32"), "1", one_thread), "with F32 weights"));
  const json fa = run(Stories260K("Q8_0"), "2", {"-t", "2"});
  EXPECT_TRUE(warned(fa, "with 2 threads and flash_attn auto")) << fa["logs"].dump();
  EXPECT_FALSE(warned(fa, "weights"));
  EXPECT_FALSE(warned(run(Stories260K("Q8_0"), "2", {"-t", "2", "--flash-attn", "off"}),
                      "threads and flash_attn"));
  EXPECT_FALSE(warned(run(Stories260K("Q8_0"), "2", one_thread), "threads and flash_attn"));
}

// --parallel takes a whole number from 1 to 64, and only runtimes that decode several
// sequences together take more than 1: each refusal one line, nothing stored.
TEST_F(EvalParallelE2e, BadParallelIsOneLineAndStoresNothing) {
  const std::string store = dir_ + "/bad.db";
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"--store", store, "run", "-m", Stories260K("Q8_0"), "-b", kMath,
                                  "--data-dir", kEvalsDir, "--limit", "1", "--max-tokens", "8"};
    a.insert(a.end(), extra.begin(), extra.end());
    return RunPipette(a);
  };
  for (const std::string v : {"0", "65", "-2", "abc", "1.5", ""}) {
    auto r = run({"--parallel", v});
    EXPECT_NE(r.exit.code, 0) << v;
    EXPECT_NE(r.err.find("--parallel"), std::string::npos) << v << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << v << ": " << r.err;
  }
  auto range = run({"--parallel", "65"});
  EXPECT_NE(range.err.find("from 1 to 64"), std::string::npos) << range.err;
  // llama-server through llamacpp-stock: one attempt at a time, said with the runtime's name.
  auto stock = run({"--parallel", "2", "--runtime", "llamacpp-stock", "--runtime-dir",
                    std::string(PIPETTE_LLAMA_PREFIX) + "/bin"});
  EXPECT_NE(stock.exit.code, 0);
  EXPECT_NE(stock.err.find("runtime llamacpp-stock generates eval attempts one at a time"),
            std::string::npos)
      << stock.err;
  EXPECT_EQ(std::count(stock.err.begin(), stock.err.end(), '\n'), 1) << stock.err;
  auto list = RunPipette({"--store", store, "--json", "results", "list"});
  EXPECT_TRUE(list.out.empty() || json::parse(list.out).empty()) << list.out;
}

}  // namespace
}  // namespace pipette::testing_models
