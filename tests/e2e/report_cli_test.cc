// `pipette report` and the other commands that read the store, through the CLI: missing stores,
// no matching results, bad -o paths, --since, formats (no models needed: records are put into
// the store directly).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_runner.h"
#include "model_fixtures.h"
#include "stored_records.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using namespace testing_models;

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// A store holding one decode result of model "tiny.gguf".
std::string OneResultStore(const std::string& name) {
  const std::string store = WorkDir() + "/" + name;
  PutRecords(store, {StoredRecord("tiny.gguf", "F16", "decode_throughput_32_16",
                                  {{"decode_throughput", 100.0}}, 1)});
  return store;
}

TEST(ReportCli, MissingStoreIsBadInputAndNotCreated) {
  const std::string store = WorkDir() + "/report-cli-none.db";
  const std::string out = WorkDir() + "/report-cli-none.html";
  auto r = RunPipette({"--store", store, "report", "-o", out});
  EXPECT_EQ(r.exit.code, 2) << r.err;
  EXPECT_EQ(r.err, "pipette: error: no results store at " + store +
                       " (`pipette run` and `pipette suite run` create one); check the store path "
                       "(--store)\n");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(store));  // reading never creates a store
}

TEST(ReportCli, NoMatchIsAFailureAndWritesNoFile) {
  const std::string store = OneResultStore("report-cli-nomatch.db");
  const std::string out = WorkDir() + "/report-cli-nomatch.html";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--store", store, "report", "-o", out, "--model", "nosuchmodel"},
        std::vector<std::string>{"--store", store, "report", "--quant", "Q2_K"}}) {
    auto r = RunPipette(args);
    EXPECT_EQ(r.exit.code, 1) << r.err;  // `report -o x.html && open x.html` stops here
    EXPECT_EQ(r.err, "pipette: error: no results match in " + store +
                         ": nothing to report (measure with `pipette run`, or widen the filters)\n");
    EXPECT_EQ(r.out, "");
  }
  EXPECT_FALSE(fs::exists(out));
  auto ok = RunPipette({"--store", store, "report", "-o", out, "--model", "tiny"});
  EXPECT_EQ(ok.exit.code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(out));
}

// SQLite deletes (or replays) <store>-wal, -shm and -journal when it next opens the store: a
// report or export written there would be lost, or corrupt the store.
TEST(OutputPathCli, ReportAndExportRefuseTheStoreAndItsSideFiles) {
  const std::string store = OneResultStore("report-cli-side.db");
  for (const std::string side : {"", "-wal", "-shm", "-journal"}) {
    const std::string out = store + side;
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"--store", store, "report", "-o", out},
          std::vector<std::string>{"--store", store, "results", "export", "-o", out}}) {
      auto r = RunPipette(args);
      EXPECT_EQ(r.exit.code, 2) << args[2] << " -o " << out << ": " << r.err;
      EXPECT_EQ(Lines(r.err), 1) << r.err;
      EXPECT_EQ(r.err.rfind("pipette: error: " + out + " is ", 0), 0u) << r.err;
      if (!side.empty()) {
        EXPECT_NE(r.err.find("SQLite's " + side + " file of the results store"),
                  std::string::npos)
            << r.err;
      }
    }
  }
  auto listed = RunPipette({"--store", store, "--json", "results", "list"});
  EXPECT_EQ(listed.exit.code, 0) << listed.err;
  EXPECT_NE(listed.out.find("decode_throughput_32_16"), std::string::npos) << listed.out;
}

// Commands that only read refuse a --store that does not exist (a typo) instead of creating an
// empty store and reporting "nothing found".
TEST(ReadOnlyStoreCli, MissingStoreIsBadInputForEveryReader) {
  const std::string store = WorkDir() + "/typo-stor.db";
  const std::vector<std::vector<std::string>> commands = {
      {"select"},
      {"report"},
      {"report", "--format", "md"},
      {"compare", "0190aaaa", "0190bbbb"},
      {"compare", "--a", "quant=F16", "--b", "quant=Q4_0"},
      {"results", "list"},
      {"results", "show", "0190aaaa"},
      {"results", "export"},
      {"results", "export", "-o", WorkDir() + "/typo-export.jsonl"},
      {"diff", "0190aaaa", "0190bbbb"},
  };
  for (const auto& command : commands) {
    std::vector<std::string> args = {"--store", store};
    args.insert(args.end(), command.begin(), command.end());
    auto r = RunPipette(args);
    EXPECT_EQ(r.exit.code, 2) << command[0] << ": " << r.err;
    EXPECT_EQ(r.err, "pipette: error: no results store at " + store +
                         " (`pipette run` and `pipette suite run` create one); check the store "
                         "path (--store)\n")
        << command[0];
    EXPECT_FALSE(fs::exists(store)) << command[0];
  }
  EXPECT_FALSE(fs::exists(WorkDir() + "/typo-export.jsonl"));
}

// A first `pipette results list` (no --store, no store yet) is not an error.
TEST(ReadOnlyStoreCli, FirstResultsListWithoutStoreSaysNoResults) {
  const std::string fresh = WorkDir() + "/fresh/default.db";
  const char* old = std::getenv("PIPETTE_STORE");
  const std::string saved = old != nullptr ? old : "";
  setenv("PIPETTE_STORE", fresh.c_str(), 1);
  auto r = RunPipette({"results", "list"});
  auto j = RunPipette({"--json", "results", "list"});
  auto sel = RunPipette({"select"});
  if (old != nullptr) {
    setenv("PIPETTE_STORE", saved.c_str(), 1);
  } else {
    unsetenv("PIPETTE_STORE");
  }
  EXPECT_EQ(r.exit.code, 0) << r.err;
  EXPECT_EQ(r.out, "no results in " + fresh + "\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(j.exit.code, 0) << j.err;
  EXPECT_EQ(j.out, "[]\n");
  EXPECT_EQ(sel.exit.code, 2);  // other readers name the missing store
  EXPECT_NE(sel.err.find("no results store at " + fresh), std::string::npos) << sel.err;
  EXPECT_FALSE(fs::exists(fresh));
}

TEST(SinceCli, BadSinceIsBadInputForEveryReader) {
  const std::string store = OneResultStore("since-cli.db");
  const std::vector<std::vector<std::string>> commands = {
      {"results", "list"}, {"results", "export"}, {"select"}, {"report"}};
  for (const std::string bad :
       {"garbage", "2026-13-45", "yesterday", "2026-11-29T25:00:00Z", "-1", ""}) {
    for (const auto& command : commands) {
      std::vector<std::string> args = {"--store", store};
      args.insert(args.end(), command.begin(), command.end());
      args.insert(args.end(), {"--since", bad});
      auto r = RunPipette(args);
      EXPECT_EQ(r.exit.code, 2) << command[0] << " --since '" << bad << "': " << r.err;
      EXPECT_EQ(r.err, "pipette: error: --since: '" + bad +
                           "' is not a date or RFC 3339 UTC time (e.g. 2026-11-29 or "
                           "2026-11-29T10:00:00Z)\n");
      EXPECT_EQ(r.out, "") << command[0];
    }
  }
  // Good values filter: the result started at 2026-11-29T10:00:01.000Z.
  for (const std::string good : {"2026", "2026-11", "2026-11-29", "2026-11-29T10",
                                 "2026-11-29T10:00", "2026-11-29T10:00:01Z",
                                 "2026-11-29T10:00:00.5Z"}) {
    auto r = RunPipette({"--store", store, "--json", "results", "list", "--since", good});
    EXPECT_EQ(r.exit.code, 0) << good << ": " << r.err;
    EXPECT_NE(r.out.find("decode_throughput_32_16"), std::string::npos) << good << ": " << r.out;
  }
  auto later = RunPipette({"--store", store, "--json", "results", "list", "--since",
                           "2026-11-29T10:00:01.5Z"});
  EXPECT_EQ(later.exit.code, 0) << later.err;
  EXPECT_EQ(later.out, "[]\n");
}

TEST(ReportCli, BadOutputAndFormatAreBadInput) {
  const std::string store = OneResultStore("report-cli-bad.db");
  auto dir = RunPipette({"--store", store, "report", "-o", WorkDir()});
  EXPECT_EQ(dir.exit.code, 2);
  EXPECT_NE(dir.err.find("pipette: error: "), std::string::npos) << dir.err;
  auto missing = RunPipette({"--store", store, "report", "-o", WorkDir() + "/no/such/dir/r.html"});
  EXPECT_EQ(missing.exit.code, 2) << missing.err;
  auto format = RunPipette({"--store", store, "report", "--format", "pdf"});
  EXPECT_EQ(format.exit.code, 2);
  EXPECT_NE(format.err.find("pdf"), std::string::npos) << format.err;
}

}  // namespace
}  // namespace pipette
