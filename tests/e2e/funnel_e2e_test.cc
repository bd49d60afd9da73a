// End-to-end: `pipette decide` on real models (stories260K; a synthetic stories15m where a memory
// limit must tell two quantizations apart): the screen removes what fails a limit, Ctrl-C and the same command resume without redoing a cell, an edited file is refused
// with what changed unless only the limits changed, and the finalists are soaked (issue 26).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "cli_runner.h"
#include "model_fixtures.h"

namespace pipette {
namespace {

using nlohmann::json;
using namespace testing_models;

double PeakMemory(const std::string& model) {
  auto r = RunPipette({"--store", WorkDir() + "/funnel-probe.db", "--json", "run", "--quiet",
                       "--model", model, "--benchmark", "max_memory_usage_64", "--threads", "1",
                       "--no-readiness-load"});
  EXPECT_EQ(r.exit.code, 0) << r.err;
  if (r.exit.code != 0) return 0;
  return json::parse(r.out)["metrics"]["max_host_usage"]["median"].get<double>();
}

std::string WriteDecision(const std::string& name, const std::vector<std::string>& models,
                          const std::string& benchmarks, const std::string& decision) {
  const std::string path = WorkDir() + "/" + name + ".toml";
  std::ofstream f(path);
  f << "name = \"" << name << "\"\nbenchmarks = " << benchmarks << "\n";
  for (const auto& m : models) f << "[[models]]\npath = \"" << m << "\"\n";
  f << "[[runtimes]]\nname = \"llamacpp\"\nsettings = { threads = 1 }\n"
    << "[harness]\nwarmup_runs = 1\nmin_reps = 3\nmax_reps = 5\n"
    << "[readiness]\nwaive = [\"load\"]\n"  // ctest runs tests in parallel: CPUs busy on purpose
    << decision;
  return path;
}

json State(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, false);
}

// Sends SIGINT once the funnel's progress shows `after` settled cells.
std::function<void(int, const std::string&)> InterruptAfter(std::thread& worker, int after) {
  return [&worker, after](int pid, const std::string& err_path) {
    worker = std::thread([pid, err_path, after] {
      for (int i = 0; i < 12000; ++i) {
        std::ifstream in(err_path);
        std::string line;
        int done = 0;
        while (std::getline(in, line)) done += line.rfind("[screen ", 0) == 0 && line.find("] ok") != std::string::npos;
        if (done >= after) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      kill(pid, SIGINT);
    });
  };
}

TEST(Decide, ScreensOutResumesAndRefusesAnEditedFile) {
  // A memory limit halfway between the two models' peaks: F32 carries about 80 MiB more weights,
  // so run-to-run noise (0.4 MiB of mapped library pages) cannot put either on the wrong side.
  const std::string f32 = Synthetic("stories15m", "F32"), q4 = Synthetic("stories15m", "Q4_0");
  const double limit = (PeakMemory(f32) + PeakMemory(q4)) / 2;
  ASSERT_GT(limit, 0);
  const std::string benchmarks = R"(["max_memory_usage_64", "decode_throughput_64_32"])";
  auto decision = [&](double max_memory) {
    return "[decision]\nobjectives = [\"decode\", \"memory\"]\n[decision.limits]\nmax_memory = \"" +
           std::to_string(static_cast<long long>(max_memory)) + "B\"\n[decision.measure]\nrounds = 1\n";
  };
  const std::string file = WriteDecision("funnel", {f32, q4}, benchmarks, decision(limit));
  const std::string store = WorkDir() + "/funnel.db";
  const std::string state = WorkDir() + "/decide/funnel.json";

  std::thread interrupter;
  auto first = RunPipette({"--store", store, "decide", file}, InterruptAfter(interrupter, 1));
  interrupter.join();
  ASSERT_EQ(first.exit.code, 130) << first.err << first.out;
  EXPECT_NE(first.err.find("run the same command to resume"), std::string::npos) << first.err;
  const json before = State(state);
  ASSERT_TRUE(before.is_object());
  const size_t cells_before = before["cells"].size();
  EXPECT_GE(cells_before, 1u);

  auto second = RunPipette({"--store", store, "decide", file});
  ASSERT_EQ(second.exit.code, 0) << second.err << second.out;
  const json after = State(state);
  std::set<std::string> keys;
  for (const json& c : after["cells"]) {
    EXPECT_TRUE(keys.insert(c["key"].get<std::string>()).second) << "cell redone: " << c["key"];
  }
  for (size_t i = 0; i < cells_before; ++i) EXPECT_EQ(after["cells"][i], before["cells"][i]);
  const json& verdict = after["verdict"];
  EXPECT_EQ(verdict["chosen"], "stories15m-Q4_0") << second.out;
  for (const json& c : verdict["configurations"]) {
    if (c["name"] == "stories15m-F32") {
      EXPECT_EQ(c["stage"], "screen");
      EXPECT_TRUE(c["out"].get<bool>());
      EXPECT_EQ(c["reason"].get<std::string>().rfind("fails max_memory: max_host_usage", 0), 0u)
          << c["reason"];
    }
  }
  // F32 left after its memory cell: it never ran a decode cell.
  for (const json& c : after["cells"]) {
    if (c["configuration"] == "stories15m-F32") {
      EXPECT_EQ(c["benchmark"], "max_memory_usage_64");
    }
  }
  EXPECT_NE(second.out.find("chosen: stories15m-Q4_0"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("device time"), std::string::npos);
  // The results are stored like any other: select reads them.
  auto selected = RunPipette({"--store", store, "--json", "select"});
  EXPECT_EQ(selected.exit.code, 0) << selected.err;

  // Another benchmark list: refused, naming what changed; nothing run.
  const std::string edited = WriteDecision(
      "funnel", {f32, q4}, R"(["max_memory_usage_64", "decode_throughput_64_16"])", decision(limit));
  auto refused = RunPipette({"--store", store, "decide", edited});
  EXPECT_EQ(refused.exit.code, 2) << refused.err;
  EXPECT_NE(refused.err.find("the decision file changed since this funnel started (benchmarks"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(State(state)["cells"].size(), after["cells"].size());

  // Only the limits changed: resumed and judged again on what was measured.
  WriteDecision("funnel", {f32, q4}, benchmarks, decision(limit * 4));
  auto loosened = RunPipette({"--store", store, "decide", file});
  EXPECT_EQ(loosened.exit.code, 0) << loosened.err << loosened.out;
  EXPECT_NE(loosened.out.find("note: the limits changed since the funnel started (limits.max_memory)"),
            std::string::npos)
      << loosened.out;
  EXPECT_EQ(loosened.out.find("out at screen  fails max_memory"), std::string::npos) << loosened.out;
}

TEST(Decide, SoaksTheFinalist) {
  const std::string q4 = Stories260K("Q4_0");
  if (q4.empty()) GTEST_SKIP() << SharedMissingReason();
  const std::string file = WriteDecision(
      "funnel-soak", {q4}, R"(["decode_throughput_64_32"])",
      "[decision]\nobjectives = [\"decode\"]\n[decision.measure]\nrounds = 0\n"
      "[decision.stabilize]\nfinalists = 1\nsoak = \"soak_64_32_1\"\n");
  const std::string store = WorkDir() + "/funnel-soak.db";
  auto r = RunPipette({"--store", store, "decide", file});
  const json state = State(WorkDir() + "/decide/funnel-soak.json");
  const json& c = state["verdict"]["configurations"][0];
  const std::string reason = c["reason"].get<std::string>();
  EXPECT_EQ(reason.rfind("soak_64_32_1: ", 0), 0u) << reason;
  EXPECT_NE(reason.find(" requests in "), std::string::npos) << reason;
  // ctest runs tests side by side: a soak may see its throughput drift, and then the finalist is
  // ranked down with that evidence instead of chosen.
  if (r.exit.code == 0) {
    EXPECT_EQ(c["stage"], "chosen");
    EXPECT_NE(r.out.find("chosen: stories260K-Q4_0"), std::string::npos) << r.out;
  } else {
    EXPECT_EQ(r.exit.code, 1) << r.err;
    EXPECT_EQ(c["stage"], "finalist");
    EXPECT_NE(reason.find("drifted"), std::string::npos) << reason;
    EXPECT_NE(r.err.find("no configuration chosen: no finalist held up under soak_64_32_1"),
              std::string::npos)
        << r.err;
  }
  double soak_seconds = 0;
  for (const json& s : state["verdict"]["stages"]) {
    if (s["stage"] == "stabilize") soak_seconds = s["seconds"].get<double>();
  }
  EXPECT_GE(soak_seconds, 60);
}

TEST(Decide, NothingToDecideOnIsBadInput) {
  const std::string q4 = Stories260K("Q4_0");
  const std::string file =
      WriteDecision("funnel-empty", {q4.empty() ? TinySynthetic() : q4}, R"(["decode_throughput_64_32"])",
                    "[decision]\nalpha = 0.05\n");
  auto r = RunPipette({"--store", WorkDir() + "/funnel-empty.db", "decide", file});
  EXPECT_EQ(r.exit.code, 2);
  EXPECT_NE(r.err.find("[decision] has no limit and no objective: nothing to decide on"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace pipette

namespace pipette {
namespace {

// --state names the file the funnel writes: a file that is not a funnel's state is never
// replaced, not even with --restart.
TEST(Decide, RestartNeverOverwritesAFileThatIsNotAFunnelState) {
  const std::string q4 = Stories260K("Q4_0");
  const std::string file =
      WriteDecision("funnel-other", {q4.empty() ? TinySynthetic() : q4},
                    R"(["decode_throughput_64_32"])", "[decision]\nobjectives = [\"decode\"]\n");
  const std::string other = WorkDir() + "/not-a-state.txt";
  std::ofstream(other) << "keep me\n";
  for (const bool restart : {false, true}) {
    std::vector<std::string> args = {"--store", WorkDir() + "/funnel-other.db", "decide", file,
                                     "--state", other};
    if (restart) args.push_back("--restart");
    auto r = RunPipette(args);
    EXPECT_EQ(r.exit.code, 2);
    EXPECT_NE(r.err.find(other + ": not a funnel state file"), std::string::npos) << r.err;
    std::ifstream in(other);
    std::string kept;
    std::getline(in, kept);
    EXPECT_EQ(kept, "keep me");
  }
}

}  // namespace
}  // namespace pipette
