// End-to-end: `pipette suite run` on real models; resume after Ctrl-C redoes no ok cell.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "cli_runner.h"
#include "model_fixtures.h"

namespace pipette {
namespace {

using nlohmann::json;
using namespace testing_models;

// Benchmarks at three shapes and peak memory, small enough for seconds per run on stories260K.
constexpr char kBenchmarks[] =
    R"(["prefill_throughput_64", "prefill_throughput_128", "decode_throughput_64_32",
        "decode_throughput_128_32", "end_to_end_latency_32_32", "max_memory_usage_64"])";

std::string WriteSuite(const std::string& name, const std::vector<std::string>& models) {
  const std::string path = WorkDir() + "/" + name + ".toml";
  std::ofstream f(path);
  f << "name = \"" << name << "\"\nbenchmarks = " << kBenchmarks << "\n";
  for (const auto& m : models) f << "[[models]]\npath = \"" << m << "\"\n";
  f << "[[runtimes]]\nname = \"llamacpp\"\nsettings = { threads = 1 }\n"
    << "[harness]\nwarmup_runs = 1\nmin_reps = 3\nmax_reps = 3\n"
    << "[readiness]\nwaive = [\"load\"]\n";  // ctest runs tests in parallel: CPUs busy on purpose
  return path;
}

std::vector<json> Results(const std::string& store) {
  auto r = RunPipette({"--store", store, "--json", "results", "list"});
  EXPECT_EQ(r.exit.code, 0) << r.err;
  return r.exit.code == 0 ? json::parse(r.out).get<std::vector<json>>() : std::vector<json>{};
}

// config_id -> number of ok results.
std::map<std::string, int> OkByConfig(const std::vector<json>& rows) {
  std::map<std::string, int> ok;
  for (const json& r : rows) {
    if (r["status"] == "ok") ++ok[r["config_id"].get<std::string>()];
  }
  return ok;
}

int CountStatus(const std::vector<json>& rows, const std::string& status) {
  int n = 0;
  for (const json& r : rows) n += r["status"] == status;
  return n;
}

// Sends SIGINT to pipette once its plain progress lines show `after` settled cells.
std::function<void(int, const std::string&)> InterruptAfter(std::thread& worker, int after) {
  return [&worker, after](int pid, const std::string& err_path) {
    worker = std::thread([pid, err_path, after] {
      const std::regex settled(R"(\[\s*(\d+)/\d+\] (ok|failed|skipped))");
      for (int i = 0; i < 12000; ++i) {
        std::ifstream in(err_path);
        std::string line;
        int done = 0;
        while (std::getline(in, line)) {
          std::smatch m;
          if (std::regex_search(line, m, settled)) done = std::max(done, std::stoi(m[1]));
        }
        if (done >= after) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      kill(pid, SIGINT);
    });
  };
}

std::vector<std::string> SuiteModels() {
  std::vector<std::string> models;
  for (const char* q : {"F32", "Q8_0", "Q4_0", "Q4_K_M"}) {
    if (std::string m = Stories260K(q); !m.empty()) models.push_back(m);
  }
  return models;
}

// Issue 4: a suite interrupted with SIGINT halfway and rerun redoes no cell that was ok and ends
// with as many ok results as an uninterrupted run.
TEST(SuiteRun, InterruptedAndRerunEndsLikeAnUninterruptedRun) {
  std::vector<std::string> models = SuiteModels();
  if (models.empty()) models = {TinySynthetic()};
  const std::string suite = WriteSuite("resume", models);
  const size_t cells = models.size() * 6;

  const std::string whole = WorkDir() + "/suite-whole.db";
  auto full = RunPipette({"--store", whole, "suite", "run", suite, "--logs", WorkDir() + "/logs-whole"});
  ASSERT_EQ(full.exit.code, 0) << full.err << full.out;
  const auto whole_rows = Results(whole);
  ASSERT_EQ(static_cast<size_t>(CountStatus(whole_rows, "ok")), cells);
  EXPECT_NE(full.out.find(std::to_string(cells) + " ok (" + std::to_string(cells) +
                          " measured now, 0 stored before)"),
            std::string::npos)
      << full.out;

  const std::string store = WorkDir() + "/suite-resume.db";
  const std::string logs = WorkDir() + "/logs-resume";
  std::thread interrupter;
  auto first = RunPipette({"--store", store, "suite", "run", suite, "--logs", logs},
                          InterruptAfter(interrupter, static_cast<int>(cells / 2)));
  interrupter.join();
  EXPECT_EQ(first.exit.code, 130) << first.err;
  // The rerun it names goes to the same store.
  EXPECT_NE(first.err.find("rerun `pipette --store " + store + " suite run"), std::string::npos)
      << first.err;
  const auto before = Results(store);
  const auto ok_before = OkByConfig(before);
  EXPECT_GE(ok_before.size(), cells / 2);
  EXPECT_LT(ok_before.size(), cells);
  // The cell that was running is stored as failed, with the interrupt as its reason.
  ASSERT_EQ(CountStatus(before, "failed"), 1);
  for (const json& r : before) {
    if (r["status"] == "failed") {
      auto shown = RunPipette({"--store", store, "--json", "results", "show",
                               r["result_id"].get<std::string>()});
      EXPECT_NE(shown.out.find("interrupted"), std::string::npos) << shown.out.substr(0, 500);
    }
  }

  auto second = RunPipette({"--store", store, "suite", "run", suite, "--logs", logs});
  ASSERT_EQ(second.exit.code, 0) << second.err << second.out;
  EXPECT_NE(second.out.find(std::to_string(ok_before.size()) + " stored before"),
            std::string::npos)
      << second.out;
  const auto after = Results(store);
  const auto ok_after = OkByConfig(after);
  EXPECT_EQ(ok_after.size(), cells);
  for (const auto& [config, n] : ok_after) EXPECT_EQ(n, 1) << "cell " << config << " redone";
  for (const auto& [config, n] : ok_before) EXPECT_EQ(ok_after.count(config), 1u);
  EXPECT_EQ(CountStatus(after, "ok"), CountStatus(whole_rows, "ok"));
  // The same cells as the uninterrupted run (config ids are the same on the same device).
  std::set<std::string> a, b;
  for (const auto& [c, n] : OkByConfig(whole_rows)) a.insert(c);
  for (const auto& [c, n] : ok_after) b.insert(c);
  EXPECT_EQ(a, b);

  // A third run measures nothing, and each measured cell kept its raw runtime log.
  auto third = RunPipette({"--store", store, "--json", "suite", "run", suite, "--logs", logs});
  ASSERT_EQ(third.exit.code, 0) << third.err;
  const json summary = json::parse(third.out);
  for (const json& c : summary["cells"]) EXPECT_EQ(c["status"], "skipped") << c.dump();
  int logs_found = 0;
  for (const auto& e : std::filesystem::directory_iterator(logs)) {
    logs_found += e.path().extension() == ".log" && std::filesystem::file_size(e.path()) > 0;
  }
  EXPECT_GE(static_cast<size_t>(logs_found), cells);
}

TEST(SuiteRun, DryRunListsCellsAndMeasuresNothing) {
  const std::string suite = WriteSuite("dry", {TinySynthetic()});
  const std::string store = WorkDir() + "/suite-dry.db";
  auto r = RunPipette({"--store", store, "--json", "suite", "run", suite, "--dry-run"});
  ASSERT_EQ(r.exit.code, 0) << r.err;
  const json plan = json::parse(r.out);
  ASSERT_EQ(plan["cells"].size(), 6u);
  for (const json& c : plan["cells"]) {
    EXPECT_EQ(c["status"], "to run");
    EXPECT_EQ(c["config_id"].get<std::string>().size(), 64u);
  }
  EXPECT_FALSE(std::filesystem::exists(store));  // a plan only reads: no store is made
  auto plain = RunPipette({"--store", store, "suite", "run", suite, "--dry-run"});
  EXPECT_NE(plain.out.find("6 to run, 0 already stored ok in " + store), std::string::npos)
      << plain.out;
}

// A failing cell does not stop the suite; it is listed at the end with its reason. A shape longer
// than the model's context is "invalid" (nothing to store) and listed too.
TEST(SuiteRun, FailedAndInvalidCellsAreListedAtTheEnd) {
  const std::string path = WorkDir() + "/failing.toml";
  std::ofstream(path) << "name = \"failing\"\n"
                      << "benchmarks = [\"decode_throughput_16_8\", \"prefill_throughput_4096\", "
                         "\"prefill_throughput_16\"]\n"
                      << "[[models]]\npath = \"" << TinySynthetic() << "\"\n"
                      << "[[runtimes]]\nname = \"llamacpp\"\n"
                      // llama.cpp refuses a quantized V cache without flash attention: the load
                      // fails, a failure the runtime reports itself.
                      << "settings = { threads = 1, flash_attn = \"off\", "
                         "type_v = [\"f16\", \"q4_0\"] }\n"
                      << "[harness]\nwarmup_runs = 0\nmin_reps = 2\nmax_reps = 2\n"
                      << "[readiness]\nwaive = [\"load\"]\n";
  const std::string store = WorkDir() + "/suite-failing.db";
  auto r = RunPipette({"--store", store, "suite", "run", path});
  EXPECT_EQ(r.exit.code, 1) << r.err << r.out;
  EXPECT_NE(r.out.find("invalid:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failed:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("prefill_throughput_4096"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("cells did not measure"), std::string::npos) << r.err;
  const auto rows = Results(store);
  // 2 settings x 3 benchmarks: the 4096 shape is invalid for both (not stored), the q4_0 V cache
  // fails twice (stored as failed), the f16 one measures twice.
  EXPECT_EQ(rows.size(), 4u);
  EXPECT_EQ(CountStatus(rows, "ok"), 2);
  EXPECT_EQ(CountStatus(rows, "failed"), 2);
}

// A stored result that stayed noisy (its CI wider than the target) is skipped on a rerun, unless
// --rerun-noisy asks for it to be measured again.
TEST(SuiteRun, RerunNoisyMeasuresNoisyCellsAgain) {
  const std::string path = WorkDir() + "/noisy.toml";
  std::ofstream(path) << "name = \"noisy\"\nbenchmarks = [\"prefill_throughput_16\"]\n"
                      << "[[models]]\npath = \"" << TinySynthetic() << "\"\n"
                      << "[harness]\nwarmup_runs = 0\nmin_reps = 2\nmax_reps = 2\n"
                      << "ci_target = 0.0001\n"  // never reached in 2 repetitions
                      << "[readiness]\nwaive = [\"load\"]\n";
  const std::string store = WorkDir() + "/suite-noisy.db";
  ASSERT_EQ(RunPipette({"--store", store, "suite", "run", path}).exit.code, 0);
  auto plain = RunPipette({"--store", store, "--json", "suite", "run", path, "--dry-run"});
  ASSERT_EQ(plain.exit.code, 0) << plain.err;
  EXPECT_EQ(json::parse(plain.out)["cells"][0]["status"], "skipped");
  auto noisy = RunPipette({"--store", store, "--json", "suite", "run", path, "--dry-run",
                           "--rerun-noisy"});
  ASSERT_EQ(noisy.exit.code, 0) << noisy.err;
  EXPECT_EQ(json::parse(noisy.out)["cells"][0]["status"], "to run");
  ASSERT_EQ(RunPipette({"--store", store, "suite", "run", path, "--rerun-noisy"}).exit.code, 0);
  EXPECT_EQ(CountStatus(Results(store), "ok"), 2);
}

TEST(SuiteRun, BadSuiteFileIsOneLineAndExitTwo) {
  const std::string path = WorkDir() + "/bad.toml";
  std::ofstream(path) << "name = \"bad\"\nbenchmarks = [\"no_such_benchmark\"]\n[[models]]\npath = \""
                      << TinySynthetic() << "\"\n";
  auto r = RunPipette({"--store", WorkDir() + "/bad.db", "suite", "run", path});
  EXPECT_EQ(r.exit.code, 2);
  EXPECT_NE(r.err.find("benchmarks[1]"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace pipette
