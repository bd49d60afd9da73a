// Issue 27 item 5 end to end: the pinned build's real llama-bench on stories260K with -o json,
// -o jsonl and -o sql, each file imported by `pipette import llama-bench`, and `pipette compare`
// of an imported result against pipette's own llamacpp-stock cell of the same benchmark.
#include <gtest/gtest.h>

#include <cmath>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "cli_runner.h"
#include "model_fixtures.h"
#include "pipette/record_schema.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace testing_models;

const std::string kBin = std::string(PIPETTE_LLAMA_PREFIX) + "/bin";

// Runs the build's llama-bench: prompt 64 and generation 16 tokens, each at depth 0 and 64
// (4 tests: pp64, tg16 from an empty context, pp64 @ d64, tg16 @ d64), 3 repetitions, one thread,
// weights read in as pipette's llamacpp-stock runs do. Returns its output file.
std::string LlamaBench(const std::string& model, const std::string& format) {
  const std::string out = WorkDir() + "/llama-bench." + format;
  const std::string cmd = kBin + "/llama-bench -m " + model +
                          " -p 64 -n 16 -d 0,64 -r 3 -t 1 -lm none -o " + format + " > " + out +
                          " 2> " + out + ".err";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return out;
}

std::string Store() { return WorkDir() + "/import.db"; }

json Show(const std::string& id) {
  const CliResult r = RunPipette({"--store", Store(), "results", "show", id, "--json"});
  EXPECT_EQ(r.exit.code, 0) << r.err;
  return json::parse(r.out);
}

TEST(ImportLlamaBench, RealRunsInEveryFormatCompareWithPipettesOwnCell) {
  const std::string model = Stories260K("F32");
  if (model.empty()) GTEST_SKIP() << SharedMissingReason();
  if (!fs::exists(kBin + "/llama-bench")) GTEST_SKIP() << kBin << " has no llama-bench";

  // Without --skip-unmatched the tests of no pipette benchmark stop the import: nothing stored.
  const std::string json_file = LlamaBench(model, "json");
  CliResult refused = RunPipette({"--store", Store(), "import", "llama-bench", json_file});
  EXPECT_EQ(refused.exit.code, 2) << refused.err;
  EXPECT_EQ(LineCount(refused.err), 1) << refused.err;
  EXPECT_NE(refused.err.find("(tg16) matches no pipette benchmark"), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("--skip-unmatched"), std::string::npos) << refused.err;
  const CliResult none = RunPipette({"--store", Store(), "results", "list", "--json"});
  EXPECT_EQ(json::parse(none.out).size(), 0u) << none.out;

  std::map<std::string, std::string> decode_ids;  // format -> imported decode result
  for (const std::string format : {"json", "jsonl", "sql"}) {
    const std::string file = format == "json" ? json_file : LlamaBench(model, format);
    const CliResult r = RunPipette(
        {"--store", Store(), "--json", "import", "llama-bench", file, "--skip-unmatched"});
    ASSERT_EQ(r.exit.code, 0) << format << ": " << r.err;
    const json out = json::parse(r.out);
    EXPECT_EQ(out["format"], format);
    ASSERT_EQ(out["results"].size(), 2u) << r.out;
    EXPECT_EQ(out["results"][0]["benchmark"], "prefill_throughput_64");
    EXPECT_EQ(out["results"][1]["benchmark"], "decode_throughput_64_16");
    EXPECT_EQ(out["skipped"].size(), 2u) << r.out;  // tg16 from empty, pp64 @ d64
    decode_ids[format] = out["results"][1]["result_id"];
    for (const json& result : out["results"]) {
      const json rec = Show(result["result_id"]);
      EXPECT_TRUE(ValidateRecord(rec).ok()) << ValidateRecord(rec).error().message;
      EXPECT_EQ(rec["runtime"]["name"], "llamacpp-stock");
      EXPECT_EQ(rec["runtime"]["commit"], "80fb11a");
      EXPECT_EQ(rec["runtime"]["settings"]["mmap"], false);
      EXPECT_EQ(rec["runtime"]["settings"]["threads"], 1);
      EXPECT_EQ(rec["imported"]["format"], format);
      EXPECT_FALSE(rec["device"].contains("id"));
      const std::string metric = rec["benchmark"]["type"] == "prefill" ? "prefill_throughput"
                                                                        : "decode_throughput";
      const double median = rec["metrics"][metric]["median"];
      EXPECT_GT(median, 50) << metric;  // stories260K: thousands of tokens/s on one core
      if (format == "sql") {
        EXPECT_EQ(rec["metrics"][metric]["estimate"], "mean");
        EXPECT_TRUE(rec["samples"].empty());
      } else {
        EXPECT_EQ(rec["samples"].size(), 3u);
        EXPECT_EQ(rec["metrics"][metric]["n"], 3);
      }
    }
    // The same file again stores nothing new.
    const CliResult again = RunPipette(
        {"--store", Store(), "--json", "import", "llama-bench", file, "--skip-unmatched"});
    EXPECT_EQ(again.exit.code, 0) << again.err;
  }
  const CliResult all = RunPipette({"--store", Store(), "results", "list", "--json"});
  EXPECT_EQ(json::parse(all.out).size(), 6u);

  // pipette's own llamacpp-stock cell of the same benchmark, model and settings.
  const CliResult own = RunPipette(
      {"--store", Store(), "--json", "run", "--runtime", "llamacpp-stock", "--runtime-dir", kBin,
       "-m", model, "-b", "decode_throughput_64_16", "--threads", "1", "--min-reps", "3",
       "--max-reps", "3", "--no-readiness-load", "--quiet"});
  ASSERT_EQ(own.exit.code, 0) << own.err;
  const json own_record = json::parse(own.out);
  ASSERT_EQ(own_record["status"], "ok") << own.out;
  const std::string own_id = own_record["result_id"];

  const json imported = Show(decode_ids["json"]);
  EXPECT_EQ(imported["model"]["sha256"], own_record["model"]["sha256"]);
  EXPECT_EQ(imported["runtime"]["commit"], own_record["runtime"]["commit"]);
  EXPECT_EQ(imported["runtime"]["settings"]["n_batch"], own_record["runtime"]["settings"]["n_batch"]);

  const CliResult cmp =
      RunPipette({"--store", Store(), "--json", "compare", decode_ids["json"], own_id});
  ASSERT_EQ(cmp.exit.code, 0) << cmp.err;
  const json rows = json::parse(cmp.out)["metrics"];
  bool decode = false;
  for (const json& row : rows) {
    if (row["metric"] != "decode_throughput") continue;
    decode = true;
    EXPECT_EQ(row["a_n"], 3);
    EXPECT_EQ(row["b_n"], 3);
    // A ratio with its interval; how close the two are is bench/agreement_paired.sh's question
    // (ctest runs other tests beside this one: the two cells see different loads).
    const double ratio = row["ratio"].get<double>();
    EXPECT_TRUE(std::isfinite(ratio) && ratio > 0) << row.dump();
    EXPECT_LE(row["ratio_ci95_low"].get<double>(), ratio) << row.dump();
    EXPECT_GE(row["ratio_ci95_high"].get<double>(), ratio) << row.dump();
    EXPECT_TRUE(row["p_value"].is_number()) << row.dump();
  }
  EXPECT_TRUE(decode) << rows.dump();
  // The table a user reads, and the sql import (mean only) against the same cell.
  const CliResult table = RunPipette({"--store", Store(), "compare", decode_ids["json"], own_id});
  EXPECT_EQ(table.exit.code, 0) << table.err;
  EXPECT_NE(table.out.find("decode_throughput"), std::string::npos) << table.out;
  const CliResult mean_only =
      RunPipette({"--store", Store(), "--json", "compare", decode_ids["sql"], own_id});
  EXPECT_EQ(mean_only.exit.code, 0) << mean_only.err;
}

TEST(ImportLlamaBench, MissingModelAndMalformedFilesOneLineNothingStored) {
  const std::string model = Stories260K("F32");
  if (model.empty()) GTEST_SKIP() << SharedMissingReason();
  if (!fs::exists(kBin + "/llama-bench")) GTEST_SKIP() << kBin << " has no llama-bench";
  const std::string store = WorkDir() + "/import-bad.db";
  // A real run of a model copy that is then removed.
  const std::string copy = WorkDir() + "/gone-stories260K.gguf";
  fs::copy_file(model, copy, fs::copy_options::overwrite_existing);
  const std::string out = WorkDir() + "/gone.json";
  const std::string cmd = kBin + "/llama-bench -m " + copy + " -p 32 -n 0 -r 2 -t 1 -o json > " +
                          out + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  fs::remove(copy);
  CliResult r = RunPipette({"--store", store, "import", "llama-bench", out});
  EXPECT_EQ(r.exit.code, 2);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no longer exists; give the path of the model file it measured (--model)"),
            std::string::npos)
      << r.err;
  r = RunPipette({"--store", store, "--json", "import", "llama-bench", out, "--model", model});
  EXPECT_EQ(r.exit.code, 0) << r.err;

  // Cut in the middle (an interrupted run): one line, nothing more stored.
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  const std::string cut = WorkDir() + "/cut.json";
  std::ofstream(cut) << text.str().substr(0, text.str().size() / 2);
  r = RunPipette({"--store", store, "import", "llama-bench", cut, "--model", model});
  EXPECT_EQ(r.exit.code, 2);
  EXPECT_EQ(LineCount(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("was llama-bench interrupted?"), std::string::npos) << r.err;
  const CliResult list = RunPipette({"--store", store, "results", "list", "--json"});
  EXPECT_EQ(json::parse(list.out).size(), 1u);
}

}  // namespace
}  // namespace pipette
