// `pipette report` and the other commands that read the store, through the CLI: missing stores,
// no matching results, bad -o paths, --since, formats, the funnels of `pipette decide` (no models
// needed: records are put into the store directly, funnel states written as decide writes them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "model_fixtures.h"
#include "stored_records.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using namespace testing_models;

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
      EXPECT_EQ(LineCount(r.err), 1) << r.err;
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

// A funnel state as `pipette decide` writes it (src/decide/funnel.cc) for the store `store`:
// "tiny-F32" out at screen on memory, "tiny-Q8_0" chosen.
nlohmann::json FunnelState(const std::string& name, const std::string& store) {
  using nlohmann::json;
  auto config = [](const std::string& quant, const std::string& stage, bool out,
                   const std::string& reason) {
    return json{{"name", "tiny-" + quant}, {"key", "/m/tiny-" + quant + ".gguf|llamacpp|{}|local"},
                {"model", "/m/tiny-" + quant + ".gguf"}, {"device", "local"},
                {"settings", json::object()}, {"stage", stage}, {"out", out}, {"reason", reason},
                {"open_limits", json::array()}, {"on_front", !out}};
  };
  json cells = json::array();
  for (const char* quant : {"F32", "Q8_0"}) {
    cells.push_back({{"stage", "screen"}, {"round", 0}, {"benchmark", "max_memory_usage_32"},
                     {"config", std::string("/m/tiny-") + quant + ".gguf|llamacpp|{}|local"},
                     {"configuration", std::string("tiny-") + quant}, {"status", "ok"},
                     {"result_id", "r"}, {"seconds", 2.5}});
  }
  cells.push_back({{"stage", "measure"}, {"round", 0}, {"benchmark", "decode_throughput_32_16"},
                   {"config", "/m/tiny-Q8_0.gguf|llamacpp|{}|local"},
                   {"configuration", "tiny-Q8_0"}, {"status", "ok"}, {"result_id", "r"},
                   {"seconds", 4}});
  return {{"schema", "pipette.funnel/1"},
          {"name", name},
          {"decision_file", "/d/" + name + ".toml"},
          {"store", store},
          {"started_at", "2026-12-06T07:19:36.139Z"},
          {"updated_at", "2026-12-06T07:21:59.624Z"},
          {"cells", cells},
          {"left", json::object()},
          {"verdict",
           {{"chosen", "tiny-Q8_0"},
            {"why_none", ""},
            {"confidence", 0.99375},
            {"screen_repetitions", 12},
            {"benchmarks", {"max_memory_usage_32", "decode_throughput_32_16"}},
            {"configurations",
             {config("F32", "screen", true,
                     "fails max_memory: max_host_usage 30 MiB [29, 31] (max_memory_usage_32) at "
                     "99.38% > 25 MiB"),
              config("Q8_0", "chosen", false, "")}},
            {"stages", {{{"stage", "screen"}, {"cells", 2}, {"seconds", 5.0}},
                        {{"stage", "measure"}, {"cells", 1}, {"seconds", 4.0}},
                        {{"stage", "stabilize"}, {"cells", 0}, {"seconds", 0.0}}}}}}};
}

void WriteText(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

// --funnel FILE: a file that is not a funnel state is bad input, named in one line; no report.
TEST(ReportCli, FunnelOptionRefusesWhatIsNotAFunnelState) {
  const std::string store = OneResultStore("report-cli-funnel-bad.db");
  const std::string out = WorkDir() + "/report-cli-funnel-bad.html";
  const std::string hint =
      "; --funnel takes the state file `pipette decide` wrote beside the store (<store "
      "folder>/decide/<name>.json)\n";
  const std::string not_json = WorkDir() + "/funnel-bad/not-json.json";
  WriteText(not_json, "{\"schema\": \"pipette.funnel/1\", ");
  const std::string result = WorkDir() + "/funnel-bad/result.json";
  WriteText(result, StoredRecord("tiny.gguf", "F16", "decode_throughput_32_16",
                                 {{"decode_throughput", 100.0}}, 1)
                        .dump());
  nlohmann::json shape = FunnelState("x", store);
  shape["cells"] = "none";
  const std::string misshapen = WorkDir() + "/funnel-bad/shape.json";
  WriteText(misshapen, shape.dump());
  const std::string missing = WorkDir() + "/funnel-bad/missing.json";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {not_json, not_json + ": not a funnel state (not JSON)"},
      {result, result + ": not a funnel state (schema \"pipette.result/1\", expected "
                        "\"pipette.funnel/1\")"},
      {misshapen, misshapen + ": not a funnel state this pipette reads (\"cells\" is not a list)"},
      {missing, missing + ": cannot read it (missing or unreadable)"},
      {WorkDir(), WorkDir() + ": a folder, not a funnel state file"},
  };
  for (const auto& [file, message] : cases) {
    auto r = RunPipette({"--store", store, "report", "-o", out, "--funnel", file});
    EXPECT_EQ(r.exit.code, 2) << r.err;
    EXPECT_EQ(r.err, "pipette: error: " + message + hint);
    EXPECT_EQ(r.out, "");
  }
  EXPECT_FALSE(fs::exists(out));
  // The exports carry records only.
  const std::string good = WorkDir() + "/funnel-bad/good.json";
  WriteText(good, FunnelState("good", store).dump());
  auto csv = RunPipette({"--store", store, "report", "--format", "csv", "--funnel", good});
  EXPECT_EQ(csv.exit.code, 2);
  EXPECT_EQ(csv.err, "pipette: error: --funnel shows a decision funnel in html and md reports; "
                     "--format csv exports the records as they are: drop --funnel\n");
  // A funnel of another store, named: shown.
  auto md = RunPipette({"--store", store, "report", "--format", "md", "--funnel", good});
  EXPECT_EQ(md.exit.code, 0) << md.err;
  EXPECT_EQ(md.err, "");
  EXPECT_NE(md.out.find("## Funnel: good\n"), std::string::npos) << md.out;
}

// The state files `pipette decide` wrote beside the store are found: those of this store (however
// its path is spelled) are shown, others' are not, a broken one is skipped with a warning.
TEST(ReportCli, FunnelStatesBesideTheStoreAreFound) {
  const std::string dir = WorkDir() + "/funnel-found";
  fs::create_directories(dir);
  const std::string store = dir + "/results.db";
  PutRecords(store, {StoredRecord("tiny.gguf", "F16", "decode_throughput_32_16",
                                  {{"decode_throughput", 100.0}}, 1)});
  WriteText(dir + "/decide/mine.json", FunnelState("mine", dir + "/decide/../results.db").dump(2));
  WriteText(dir + "/decide/theirs.json", FunnelState("theirs", dir + "/other.db").dump(2));
  WriteText(dir + "/decide/broken.json", "{");
  WriteText(dir + "/decide/mine/logs/cell.json", "not looked at: below decide/");
  WriteText(dir + "/decide/notes.txt", "not a .json file");
  const std::string warning =
      "pipette: warning: " + dir + "/decide/broken.json: not a funnel state (not JSON); not shown "
      "in the report (move it out of " + dir + "/decide if `pipette decide` did not write it)\n";

  auto md = RunPipette({"--store", store, "report", "--format", "md"});
  EXPECT_EQ(md.exit.code, 0) << md.err;
  EXPECT_EQ(md.err, warning);
  EXPECT_NE(md.out.find("## Funnel: mine\n\n> **Chosen: tiny-Q8_0.**\n"), std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("2 configurations: 1 left at screen, 1 chosen.\n"), std::string::npos);
  EXPECT_NE(md.out.find("| tiny-F32 | left at screen | fails max_memory: max_host_usage 30 MiB "
                        "\\[29, 31\\] (max_memory_usage_32) at 99.38% &gt; 25 MiB |\n"),
            std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("| screen | 1 | 2 | 5.0 s | 56% |\n"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("Each interval at 99.38% confidence"), std::string::npos);
  EXPECT_EQ(md.out.find("theirs"), std::string::npos);
  EXPECT_LT(md.out.find("## Funnel: mine"), md.out.find("## Summary"));

  // Named as well: shown once. HTML to a file: the section; the warning, then the summary line.
  const std::string html = dir + "/report.html";
  auto named = RunPipette({"--store", store, "report", "-o", html, "--funnel",
                           dir + "/decide/./mine.json"});
  EXPECT_EQ(named.exit.code, 0) << named.err;
  EXPECT_EQ(named.err.rfind(warning, 0), 0u) << named.err;
  EXPECT_EQ(LineCount(named.err), 2) << named.err;
  std::ifstream in(html);
  std::stringstream text;
  text << in.rdbuf();
  const std::string h = text.str();
  EXPECT_NE(h.find("<section id=\"funnel\">"), std::string::npos);
  EXPECT_EQ(h.find("<section id=\"funnel-2\">"), std::string::npos);
  EXPECT_NE(h.find("<p class=\"notice\">Chosen: tiny-Q8_0.</p>"), std::string::npos);
  EXPECT_NE(h.find("data-kind=\"hbar\""), std::string::npos);

  // The exports do not look for funnels: no warning.
  auto csv = RunPipette({"--store", store, "report", "--format", "csv"});
  EXPECT_EQ(csv.exit.code, 0) << csv.err;
  EXPECT_EQ(csv.err, "");
  // Without the broken file, nothing on stderr.
  fs::remove(dir + "/decide/broken.json");
  auto clean = RunPipette({"--store", store, "report", "--format", "md"});
  EXPECT_EQ(clean.exit.code, 0) << clean.err;
  EXPECT_EQ(clean.err, "");
  EXPECT_NE(clean.out.find("## Funnel: mine\n"), std::string::npos);
}

}  // namespace
}  // namespace pipette
