// DESIGN.md 9: bad input gets one clear line and a non-zero exit; a runtime killed mid-run leaves
// a stored failed result and pipette exits cleanly.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_runner.h"
#include "model_fixtures.h"

namespace pipette {
namespace {

using nlohmann::json;
using namespace testing_models;
namespace fs = std::filesystem;

void ExpectOneLineError(const CliResult& r, const std::string& must_contain) {
  EXPECT_TRUE(r.exit.exited) << r.exit.Describe();
  EXPECT_EQ(r.exit.code, 2) << r.err;
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("pipette: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(must_contain), std::string::npos) << r.err;
}

CliResult RunCli(const std::string& model, const std::string& benchmark,
              std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--store", WorkDir() + "/bad.db", "run", "--model", model,
                                   "--benchmark", benchmark, "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunPipette(args);
}

TEST(BadInput, MissingModel) {
  ExpectOneLineError(RunCli(WorkDir() + "/nope.gguf", "prefill_throughput_8"), "nope.gguf");
}

TEST(BadInput, TextFileNamedGguf) {
  const std::string path = WorkDir() + "/story.gguf";
  std::ofstream(path) << "Once upon a time there was a model file that was really a story.\n";
  ExpectOneLineError(RunCli(path, "prefill_throughput_8"), "not a GGUF file");
}

TEST(BadInput, GgufCutInHalf) {
  const std::string& model = TinySynthetic();
  const std::string path = WorkDir() + "/half.gguf";
  fs::copy_file(model, path, fs::copy_options::overwrite_existing);
  fs::resize_file(path, fs::file_size(model) / 2);
  ExpectOneLineError(RunCli(path, "prefill_throughput_8"), "truncated");
}

TEST(BadInput, UnknownBenchmark) {
  ExpectOneLineError(RunCli(TinySynthetic(), "prefil_throughput_256"), "prefil_throughput_256");
}

TEST(BadInput, ShapeAboveTrainingContext) {
  // The tiny synthetic model has a 512-token context, like stories260K.
  ExpectOneLineError(RunCli(TinySynthetic(), "prefill_throughput_1024"), "512");
}

TEST(BadInput, StoriesShapeAboveContext) {
  const std::string model = Stories260K("Q8_0");
  if (model.empty()) GTEST_SKIP() << SharedMissingReason();
  ExpectOneLineError(RunCli(model, "prefill_throughput_1024"), "512");
}

// models synth: an unknown preset or architecture names the known ones; a context beyond the
// real model's names the model's; nothing is written.
TEST(BadInput, SynthUnknownPresetArchitectureOrContext) {
  const std::string out = WorkDir() + "/synth-bad.gguf";
  CliResult r = RunPipette({"models", "synth", "--preset", "llama-70b", "-o", out});
  ExpectOneLineError(r, "unknown synthetic preset 'llama-70b'; valid presets: tiny, ");
  EXPECT_NE(r.err.find("granite-4.0-h-350m"), std::string::npos) << r.err;
  r = RunPipette({"models", "synth", "--list", "--arch", "mamba3"});
  ExpectOneLineError(r, "unknown synthetic architecture 'mamba3'; known architectures: llama, "
                        "granite, granitehybrid, lfm2, lfm2moe, qwen3, qwen3moe, qwen35, mistral3");
  r = RunPipette({"models", "synth", "--preset", "smollm2-135m", "--ctx", "16384", "-o", out});
  ExpectOneLineError(r, "a context of 16384 tokens was asked for, but smollm2-135m "
                        "(HuggingFaceTB/SmolLM2-135M) has a context of 8192 tokens");
  r = RunPipette({"models", "synth", "--preset", "tiny", "--type", "Q3_K_S", "-o", out});
  ExpectOneLineError(r, "valid types: F32, F16, Q8_0, Q4_0, Q4_K_M");
  EXPECT_FALSE(fs::exists(out));
  r = RunPipette({"--json", "models", "synth", "--list", "--arch", "granitehybrid"});
  ASSERT_EQ(r.exit.code, 0) << r.err;
  const json listed = json::parse(r.out);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["name"], "granite-4.0-h-350m");
  EXPECT_EQ(listed[0]["layers"], "28 Mamba2 + 4 attention (10,13,17,27)");
  EXPECT_EQ(listed[0]["params"], listed[0]["params_active"]);
}

TEST(BadInput, ZeroThreads) {
  ExpectOneLineError(RunCli(TinySynthetic(), "prefill_throughput_8", {"--threads", "0"}), "threads");
}

// Waits until pipette's stderr shows the first measured repetition, then calls `act(pipette_pid)`.
std::function<void(int, const std::string&)> AfterFirstRep(std::thread& worker,
                                                           std::function<void(int)> act) {
  return [&worker, act](int pid, const std::string& err_path) {
    worker = std::thread([pid, err_path, act] {
      for (int i = 0; i < 3000; ++i) {
        std::ifstream in(err_path);
        std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (all.find("rep 1:") != std::string::npos) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      act(pid);
    });
  };
}

int DriverOf(int pipette_pid) {
  std::ifstream children("/proc/" + std::to_string(pipette_pid) + "/task/" +
                         std::to_string(pipette_pid) + "/children");
  int driver = 0;
  children >> driver;
  return driver;
}

json OnlyFailedRecord(const std::string& store) {
  auto listed = RunPipette({"--store", store, "--json", "results", "list", "--status", "failed"});
  EXPECT_EQ(listed.exit.code, 0) << listed.err;
  const json rows = json::parse(listed.out);
  EXPECT_EQ(rows.size(), 1u);
  if (rows.size() != 1) return json::object();
  auto shown = RunPipette({"--store", store, "--json", "results", "show",
                           rows[0]["result_id"].get<std::string>()});
  return json::parse(shown.out);
}

std::vector<std::string> LongRun(const std::string& store) {
  return {"--store", store, "run", "--model", TinySynthetic(), "--benchmark",
          "decode_throughput_64_64", "--threads", "1", "--min-reps", "50", "--max-reps", "50",
          "--no-readiness-load"};
}

TEST(Fault, DriverKilledMidRunIsStoredAsFailure) {
  const std::string store = WorkDir() + "/killed.db";
  std::thread killer;
  auto r = RunPipette(LongRun(store), AfterFirstRep(killer, [](int pid) {
                        if (int driver = DriverOf(pid); driver > 0) kill(driver, SIGKILL);
                      }));
  killer.join();
  EXPECT_TRUE(r.exit.exited) << r.exit.Describe();
  EXPECT_EQ(r.exit.code, 1) << r.err;
  EXPECT_NE(r.err.find("SIGKILL"), std::string::npos) << r.err;
  const json rec = OnlyFailedRecord(store);
  EXPECT_EQ(rec["status"], "failed");
  // The kill lands in a repetition or in the untimed spin-up before one.
  EXPECT_TRUE(rec["failure"]["stage"] == "decode" || rec["failure"]["stage"] == "spin_up")
      << rec["failure"].dump();
  EXPECT_NE(rec["failure"]["message"].get<std::string>().find("killed by signal 9 (SIGKILL)"),
            std::string::npos);
  EXPECT_GE(rec["samples"].size(), 1u);  // repetitions before the crash are kept
}

TEST(Fault, HungRuntimeTimesOut) {
  const std::string store = WorkDir() + "/hung.db";
  std::thread stopper;
  auto args = LongRun(store);
  args.insert(args.end(), {"--request-timeout", "2"});
  auto r = RunPipette(args, AfterFirstRep(stopper, [](int pid) {
                        if (int driver = DriverOf(pid); driver > 0) kill(driver, SIGSTOP);
                      }));
  stopper.join();
  EXPECT_EQ(r.exit.code, 1) << r.err;
  const json rec = OnlyFailedRecord(store);
  EXPECT_TRUE(rec["failure"]["stage"] == "decode" || rec["failure"]["stage"] == "spin_up")
      << rec["failure"].dump();
  const std::string message = rec["failure"]["message"];
  EXPECT_NE(message.find("did not answer within 2 s"), std::string::npos) << message;
  // The stored message names the setting; the CLI adds its flag.
  EXPECT_NE(message.find("raise the request timeout (request_timeout_s)"), std::string::npos)
      << message;
  EXPECT_NE(r.err.find("raise the request timeout (--request-timeout, request_timeout_s)"),
            std::string::npos)
      << r.err;
}

TEST(Fault, CtrlCStoresTheCellAsInterrupted) {
  const std::string store = WorkDir() + "/interrupted.db";
  std::thread interrupter;
  auto r = RunPipette(LongRun(store), AfterFirstRep(interrupter, [](int pid) { kill(pid, SIGINT); }));
  interrupter.join();
  EXPECT_TRUE(r.exit.exited) << r.exit.Describe();
  EXPECT_EQ(r.exit.code, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  const json rec = OnlyFailedRecord(store);
  EXPECT_EQ(rec["status"], "failed");
  EXPECT_NE(rec["failure"]["message"].get<std::string>().find("interrupted"), std::string::npos);
}

}  // namespace
}  // namespace pipette
