// The published schema of pipette.result/1 (docs/schema) against what the real CLI writes: one
// cheap cell of each kind on stories260K (prefill, decode, end to end, memory, KL divergence, an
// eval, a failed cell), each record as `run --json` prints it and as `results export` gives it
// back from the store (eval completions included).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "model_fixtures.h"
#include "pipette/record_schema.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing_models::RunPipette;
using testing_models::SharedMissingReason;
using testing_models::Stories260K;
using testing_models::WorkDir;

const std::string kEvalsDir = pipette::testing::DataDir() + "/evals";

struct Cell {
  std::string name;
  std::vector<std::string> args;  // after `run --model stories260K-Q8_0`
  bool fails = false;
};

// A fake sysfs whose only CPU zone stays at 85 C: the readiness gate gives up at its deadline,
// and the cell is stored as failed (stage "readiness").
std::string HotSys() {
  const fs::path zone = fs::path(WorkDir()) / "schema-hot-sys/class/thermal/thermal_zone0";
  fs::create_directories(zone);
  std::ofstream(zone / "type") << "x86_pkg_temp\n";
  std::ofstream(zone / "temp") << "85000\n";
  return (fs::path(WorkDir()) / "schema-hot-sys").string();
}

std::vector<Cell> Cells() {
  const std::vector<std::string> reps = {"--warmup", "1", "--min-reps", "3", "--max-reps", "3"};
  auto with_reps = [&](std::vector<std::string> a) {
    a.insert(a.end(), reps.begin(), reps.end());
    return a;
  };
  return {
      {"prefill", with_reps({"-b", "prefill_throughput_64"})},
      {"decode", with_reps({"-b", "decode_throughput_8_16"})},
      {"e2e", with_reps({"-b", "end_to_end_latency_8_16"})},
      {"memory", with_reps({"-b", "max_memory_usage_64"})},
      {"kl", {"-b", "kl_divergence_64", "--reference", Stories260K("F32")}},
      {"eval",
       {"-b", "eval_math_500_2026.06.1", "--data-dir", kEvalsDir, "--limit", "2", "--repeats", "1",
        "--max-tokens", "16"}},
      {"failed",
       with_reps({"-b", "prefill_throughput_8", "--sys-root", HotSys(), "--readiness-poll", "0.1",
                  "--readiness-deadline", "0.3"}),
       true},
  };
}

std::string Validate(const json& record) {
  const Status s = ValidateRecord(record);
  return s.ok() ? "ok" : s.error().message;
}

class RecordSchemaE2e : public ::testing::TestWithParam<int> {};

TEST_P(RecordSchemaE2e, TheCellsRecordMatchesTheSchemaPrintedAndStored) {
  const std::string model = Stories260K("Q8_0");
  if (model.empty()) GTEST_SKIP() << SharedMissingReason();
  const Cell cell = Cells()[GetParam()];
  if (cell.name == "eval" && !fs::exists(kEvalsDir + "/math500/test.jsonl")) {
    GTEST_SKIP() << pipette::testing::NeedData("MATH-500");
  }
  const std::string store = WorkDir() + "/schema-" + cell.name + ".db";
  std::vector<std::string> args = {"--store", store, "--json",    "run", "--quiet",
                                   "--model", model, "--threads", "1",   "--no-readiness-load"};
  args.insert(args.end(), cell.args.begin(), cell.args.end());
  const auto run = RunPipette(args);
  ASSERT_TRUE(run.exit.exited) << run.exit.Describe();
  EXPECT_EQ(run.exit.code, cell.fails ? 1 : 0) << run.err;
  const json printed = json::parse(run.out, nullptr, false);
  ASSERT_TRUE(printed.is_object()) << run.out << run.err;
  EXPECT_EQ(printed["status"], cell.fails ? "failed" : "ok") << printed.value("failure", json());
  EXPECT_EQ(Validate(printed), "ok") << cell.name;

  const std::string out = WorkDir() + "/schema-" + cell.name + ".jsonl";
  const auto exported =
      RunPipette({"--store", store, "results", "export", "--format", "jsonl", "-o", out});
  ASSERT_EQ(exported.exit.code, 0) << exported.err;
  std::ifstream in(out);
  std::string line;
  int records = 0;
  while (std::getline(in, line)) {
    const json stored = json::parse(line, nullptr, false);
    ASSERT_TRUE(stored.is_object()) << line.substr(0, 200);
    EXPECT_EQ(Validate(stored), "ok") << cell.name << " " << stored.value("result_id", "?");
    if (cell.name == "eval") {
      EXPECT_EQ(stored["completions"].size(), 2u);  // 2 samples x 1 repeat, back from the store
    }
    ++records;
  }
  EXPECT_EQ(records, 1) << out;
}

std::string CellName(const ::testing::TestParamInfo<int>& info) {
  static const char* kNames[] = {"Prefill", "Decode", "EndToEnd", "Memory", "Kl", "Eval", "Failed"};
  return kNames[info.param];
}

INSTANTIATE_TEST_SUITE_P(Stories260K, RecordSchemaE2e, ::testing::Range(0, 7), CellName);

}  // namespace
}  // namespace pipette
