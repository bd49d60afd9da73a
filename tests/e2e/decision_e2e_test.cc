// End-to-end: the decision a user makes from stored results (issue 7), through the CLI.
//   - The trial that filed the issue, on real cells: stories260K in F32, Q8_0, Q4_0 and Q4_K_M,
//     "at most 11.5 MiB peak memory, at least 1,000 tokens/s decode at a 256-token context":
//     select prints each configuration with intervals, margins and pass/borderline/fail and the
//     factor a failing one misses by; report with the same limits opens with that decision; the
//     "Q4_K_M" file (no q4_K tensor in it) is labelled by what it holds everywhere it is named.
//   - Pooling: a configuration measured twice, once noisily, is ranked on both results' pooled
//     repetitions; --newest reproduces the old ranking on the newest result alone.
//   - The smaller friction points: a size without a unit, repeatable filters, setting filters,
//     the compare column that said "(bytes)" over MiB values, the report's counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "model_fixtures.h"
#include "pipette/cell.h"
#include "pipette/store.h"
#include "stored_records.h"

namespace pipette {
namespace {

using nlohmann::json;
using namespace testing_models;

constexpr double kMiB = 1048576.0;

CellSpec Cell(const std::string& model, const std::string& benchmark) {
  return QuickCell(model, benchmark, 3, 5);
}

const json* Candidate(const json& select, const std::string& quant) {
  for (const json& c : select["candidates"]) {
    if (c["quant"] == quant) return &c;
  }
  return nullptr;
}

TEST(DecisionE2e, Stories260KTrialWithMemoryAndDecodeLimits) {
  if (Stories260K("F32").empty()) GTEST_SKIP() << SharedMissingReason();
  const std::string store_path = WorkDir() + "/decision-trial.db";
  {
    auto store = ResultStore::Open(store_path);
    ASSERT_TRUE(store.ok()) << store.error().message;
    for (const char* quant : {"F32", "Q8_0", "Q4_0", "Q4_K_M"}) {
      for (const char* b : {"decode_throughput_256_100", "max_memory_usage_256"}) {
        auto r = RunCell(Cell(Stories260K(quant), b));
        ASSERT_TRUE(r.ok()) << quant << " " << b << ": " << r.error().message;
        ASSERT_EQ((*r)["status"], "ok") << quant << " " << b << ": " << (*r)["failure"].dump();
        ASSERT_TRUE((*store)->Put(*r).ok());
      }
    }
  }
  const std::vector<std::string> limits = {"--max-memory", "11.5MiB", "--min-decode-throughput",
                                           "1000"};
  std::vector<std::string> args = {"--store", store_path, "--json", "select"};
  args.insert(args.end(), limits.begin(), limits.end());
  auto sel = RunPipette(args);
  ASSERT_EQ(sel.exit.code, 0) << sel.err;
  const json j = json::parse(sel.out);
  ASSERT_EQ(j["candidates"].size(), 4u) << j.dump(1);
  EXPECT_DOUBLE_EQ(j["limits"]["max_memory_bytes"].get<double>(), 11.5 * kMiB);
  for (const json& c : j["candidates"]) {
    const std::string verdict = c["verdict"];
    EXPECT_TRUE(verdict == "pass" || verdict == "borderline" || verdict == "fail") << verdict;
    ASSERT_EQ(c["checks"].size(), 2u) << c.dump(1);
    for (const json& k : c["checks"]) {
      ASSERT_TRUE(k["measured"].get<bool>()) << k.dump();
      const double v = k["value"], lo = k["ci95_low"], hi = k["ci95_high"];
      const double limit = k["threshold"];
      EXPECT_LE(lo, v);
      EXPECT_LE(v, hi);
      // The verdict is the interval's, the margin the median's.
      const bool upper = k["upper"];
      const bool low_ok = upper ? lo <= limit : lo >= limit;
      const bool high_ok = upper ? hi <= limit : hi >= limit;
      EXPECT_EQ(k["verdict"], low_ok && high_ok     ? "pass"
                              : !low_ok && !high_ok ? "fail"
                                                    : "borderline")
          << k.dump();
      const double margin = k["margin"];
      EXPECT_NEAR(margin, upper ? (limit - v) / limit : (v - limit) / limit, 1e-9);
      EXPECT_NEAR(k["factor"].get<double>(), limit / v, 1e-9);
      if (k["verdict"] == "fail") {
        EXPECT_NE(
            k["text"].get<std::string>().find(upper ? "x the peak memory" : "x the decode speed"),
            std::string::npos)
            << k["text"];
      }
    }
  }
  // F32 holds the largest weights: its peak (about 11.9 MiB) breaks the memory limit outright.
  const json* f32 = Candidate(j, "F32");
  ASSERT_NE(f32, nullptr);
  EXPECT_EQ(f32->at("verdict"), "fail");
  EXPECT_EQ(f32->at("checks")[0]["limit"], "max_memory");
  EXPECT_EQ(f32->at("checks")[0]["verdict"], "fail") << f32->at("checks")[0].dump();
  // The "Q4_K_M" file holds no q4_K tensor (every row of stories260K is shorter than a k-quant
  // block): it is labelled by what it holds.
  const json* km = Candidate(j, "Q4_K_M");
  ASSERT_NE(km, nullptr);
  const std::string label = km->at("quant_label");
  EXPECT_EQ(label.rfind("Q4_K_M (no q4_K tensors: ", 0), 0u) << label;
  EXPECT_EQ(km->at("name"), label);
  std::printf("[ info ] select %s %s %s %s:\n", limits[0].c_str(), limits[1].c_str(),
              limits[2].c_str(), limits[3].c_str());
  for (const json& c : j["candidates"]) {
    std::printf("[ info ]   %s: %s\n", c["name"].get<std::string>().c_str(),
                c["verdict"].get<std::string>().c_str());
    for (const json& k : c["checks"]) {
      std::printf("[ info ]     %s\n", k["text"].get<std::string>().c_str());
    }
  }

  // The text: the limits, a table with intervals, then every configuration's checks.
  args = {"--store", store_path, "select"};
  args.insert(args.end(), limits.begin(), limits.end());
  auto text = RunPipette(args);
  ASSERT_EQ(text.exit.code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("limits: --max-memory 11.5MiB --min-decode-throughput 1000 (pass: the "
                           "whole 95% CI meets a limit",
                           0),
            0u)
      << text.out;
  EXPECT_NE(text.out.find("DECODE (tokens/s, 95% CI)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\n" + label + ": "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("F32: fail\n  max_host_usage "), std::string::npos) << text.out;
  // How much less memory F32 needs: the ratio of the limit to its peak (which drifts by a few
  // hundred KiB between runs, so not a fixed number).
  EXPECT_NE(text.out.find(" <= limit 11.50 MiB: fail, needs 0."), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("x the peak memory"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(decode_throughput_256_100"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(") >= limit 1000 tokens/s: "), std::string::npos) << text.out;

  // The label everywhere a configuration is named: results list, compare, the report.
  auto list = RunPipette({"--store", store_path, "results", "list", "--quant", "Q4_K_M"});
  ASSERT_EQ(list.exit.code, 0) << list.err;
  EXPECT_NE(list.out.find(label), std::string::npos) << list.out;
  auto cmp =
      RunPipette({"--store", store_path, "compare", "--a", "quant=Q8_0", "--b", "quant=Q4_K_M"});
  ASSERT_EQ(cmp.exit.code, 0) << cmp.err;
  EXPECT_NE(cmp.out.find("max_host_usage (MiB)"), std::string::npos) << cmp.out;
  EXPECT_EQ(cmp.out.find("(bytes)"), std::string::npos) << cmp.out;
  std::vector<std::string> report_args = {"--store", store_path, "report", "--format", "md"};
  report_args.insert(report_args.end(), limits.begin(), limits.end());
  auto md = RunPipette(report_args);
  ASSERT_EQ(md.exit.code, 0) << md.err;
  EXPECT_EQ(md.out.find("## Decision\n") < md.out.find("## Summary\n"), true) << md.out;
  EXPECT_NE(md.out.find("Limits: --max-memory 11.5MiB --min-decode-throughput 1000."),
            std::string::npos);
  const size_t f32_row = md.out.find("\n| F32");  // " !" may follow when a result is noisy
  ASSERT_NE(f32_row, std::string::npos) << md.out;
  EXPECT_EQ(md.out.compare(md.out.find(" | ", f32_row + 2), 9, " | fail |"), 0)
      << md.out.substr(f32_row, 200);
  EXPECT_NE(md.out.find(label), std::string::npos);

  // The same counts in the CLI's line and the report's summary.
  const std::string html = WorkDir() + "/decision.html";
  report_args = {"--store", store_path, "report", "-o", html};
  report_args.insert(report_args.end(), limits.begin(), limits.end());
  auto rep = RunPipette(report_args);
  ASSERT_EQ(rep.exit.code, 0) << rep.err;
  EXPECT_NE(rep.err.find("report of 8 results (8 estimates shown, one per configuration and "
                         "benchmark)"),
            std::string::npos)
      << rep.err;
  EXPECT_NE(md.out.find("8 results (0 failed) in 4 configurations"), std::string::npos) << md.out;
}

// A decode result of `quant` with these per-repetition throughputs.
json WithSamples(const std::string& quant, const std::vector<double>& values, int seconds) {
  json r = StoredRecord("s-" + quant + ".gguf", quant, "decode_throughput_256_100",
                        {{"decode_throughput", 1.0}}, seconds);
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  r["benchmark"]["type"] = "decode";
  r["metrics"]["decode_throughput"] = {{"unit", "tokens/s"},
                                       {"n", values.size()},
                                       {"median", median},
                                       {"ci95_low", sorted.front()},
                                       {"ci95_high", sorted.back()}};
  r["samples"] = json::array();
  for (size_t i = 0; i < values.size(); ++i) {
    r["samples"].push_back({{"rep", i + 1}, {"decode_throughput", values[i]}});
  }
  r["harness"] = {{"ci_target", 0.02},
                  {"reps", values.size()},
                  {"ci_reached", sorted.back() - sorted.front() < 0.04 * median}};
  return r;
}

TEST(DecisionE2e, PooledRepeatsDecideTheRankingAndNewestKeepsTheOldOne) {
  const std::string store = WorkDir() + "/decision-pooled.db";
  // Q8_0 measured steadily at about 420 tokens/s, then rerun noisily (two clusters, about 360
  // and 470); Q4_K_M once at about 395.
  PutRecords(store, {WithSamples("Q8_0", {420, 421, 419, 420, 422, 418, 420}, 1),
                     WithSamples("Q8_0", {360, 470, 365, 468, 362, 471, 364, 469, 361, 366}, 2),
                     WithSamples("Q4_K_M", {395, 396, 394, 395, 397, 393, 395}, 3)});
  auto pooled = RunPipette({"--store", store, "--json", "select"});
  ASSERT_EQ(pooled.exit.code, 0) << pooled.err;
  const json p = json::parse(pooled.out);
  EXPECT_EQ(p["repeats"], "pooled");
  EXPECT_EQ(p["candidates"][0]["quant"], "Q8_0") << p.dump(1);
  EXPECT_EQ(p["candidates"][0]["results_pooled"], 2);
  auto newest = RunPipette({"--store", store, "--json", "select", "--newest"});
  ASSERT_EQ(newest.exit.code, 0) << newest.err;
  const json n = json::parse(newest.out);
  EXPECT_EQ(n["candidates"][0]["quant"], "Q4_K_M") << n.dump(1);  // the noisy rerun alone: 366
  EXPECT_TRUE(n["candidates"][1]["noisy"].get<bool>());
  // The text says what was pooled, and what to do about the noisy rerun.
  auto text = RunPipette({"--store", store, "select", "--newest"});
  EXPECT_NE(text.out.find("! Q8_0 decode_throughput_256_100: (two clusters: about 363 and "
                          "470 tokens/s"),
            std::string::npos)
      << text.out;
  auto pooled_text = RunPipette({"--store", store, "select"});
  EXPECT_NE(pooled_text.out.find("Q8_0 (x2)"), std::string::npos) << pooled_text.out;
  // compare tests the pooled samples: 17 repetitions on the Q8_0 side.
  auto cmp = RunPipette(
      {"--store", store, "--json", "compare", "--a", "quant=Q8_0", "--b", "quant=Q4_K_M"});
  ASSERT_EQ(cmp.exit.code, 0) << cmp.err;
  const json c = json::parse(cmp.out);
  ASSERT_EQ(c["pairs"].size(), 1u);
  EXPECT_EQ(c["pairs"][0]["a"].size(), 2u);  // both result ids
  EXPECT_EQ(c["pairs"][0]["metrics"][0]["a_n"], 17);
  auto cmp_newest = RunPipette({"--store", store, "--json", "compare", "--a", "quant=Q8_0", "--b",
                                "quant=Q4_K_M", "--newest"});
  ASSERT_EQ(cmp_newest.exit.code, 0) << cmp_newest.err;
  EXPECT_EQ(json::parse(cmp_newest.out)["pairs"][0]["metrics"][0]["a_n"], 10);
  // results list names what to try for the noisy result, not "a busy machine?".
  auto list = RunPipette({"--store", store, "results", "list"});
  EXPECT_EQ(list.out.find("busy or throttling machine?"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("two clusters: about 363 and 470 tokens/s"), std::string::npos)
      << list.out;
}

TEST(DecisionE2e, UnitsAndFiltersAsAUserTypesThem) {
  const std::string store = WorkDir() + "/decision-filters.db";
  json t2 = StoredRecord("m-Q8_0.gguf", "Q8_0", "decode_throughput_32_16",
                         {{"decode_throughput", 200.0}}, 4);
  t2["runtime"]["settings"]["threads"] = 2;
  t2["config_id"] = "config-m-Q8_0-t2";
  json pinned = StoredRecord("m-Q4_0.gguf", "Q4_0", "decode_throughput_32_16",
                             {{"decode_throughput", 120.0}}, 5);
  pinned["runtime"]["settings"]["cpus"] = "0";
  PutRecords(store, {StoredRecord("m-F16.gguf", "F16", "decode_throughput_32_16",
                                  {{"decode_throughput", 100.0}}, 1),
                     StoredRecord("m-Q8_0.gguf", "Q8_0", "decode_throughput_32_16",
                                  {{"decode_throughput", 180.0}}, 2),
                     t2, pinned});
  // Three significant digits, and no interval from fewer than three repetitions.
  const std::string digits_store = WorkDir() + "/decision-digits.db";
  json kl = StoredRecord("m-Q4_0.gguf", "Q4_0", "kl_divergence_64", {{"kl_divergence", 0.000779}},
                         6);
  kl["metrics"]["kl_divergence"]["unit"] = "nats";
  kl["benchmark"]["type"] = "kl_divergence";
  json two_reps = StoredRecord("m-Q4_0.gguf", "Q4_0", "decode_throughput_64_16",
                               {{"decode_throughput", 150.0}}, 7);
  two_reps["metrics"]["decode_throughput"]["n"] = 2;
  two_reps["benchmark"]["type"] = "decode";
  two_reps["harness"]["ci_reached"] = false;
  PutRecords(digits_store, {kl, two_reps});
  auto digits = RunPipette({"--store", digits_store, "results", "list"});
  ASSERT_EQ(digits.exit.code, 0) << digits.err;
  EXPECT_NE(digits.out.find("0.000779 nats"), std::string::npos) << digits.out;
  EXPECT_NE(digits.out.find("150.00 tokens/s  n < 3 !"), std::string::npos) << digits.out;
  EXPECT_EQ(digits.out.find("kl_divergence_64 (n"), std::string::npos) << digits.out;

  // "--max-memory 11.5" was 11.5 bytes: now refused with the fix.
  auto bare = RunPipette({"--store", store, "select", "--max-memory", "11.5"});
  EXPECT_EQ(bare.exit.code, 2);
  EXPECT_EQ(bare.err,
            "pipette: error: --max-memory: '11.5' has no unit: did you mean 11.5MiB? (give B, KB, "
            "MB, GB, KiB, MiB or GiB, e.g. 12MiB, or 11.5B for bytes)\n");
  auto report_bare = RunPipette({"--store", store, "report", "--max-memory", "12"});
  EXPECT_EQ(report_bare.exit.code, 2);
  // Repeatable filters, and settings as filters, on every reader.
  auto two = RunPipette(
      {"--store", store, "--json", "results", "list", "--quant", "Q8_0", "--quant", "F16"});
  ASSERT_EQ(two.exit.code, 0) << two.err;
  EXPECT_EQ(json::parse(two.out).size(), 3u);
  auto threads = RunPipette({"--store", store, "--json", "results", "list", "--threads", "2"});
  ASSERT_EQ(threads.exit.code, 0) << threads.err;
  ASSERT_EQ(json::parse(threads.out).size(), 1u);
  EXPECT_EQ(json::parse(threads.out)[0]["threads"], 2);
  auto cpus = RunPipette({"--store", store, "--json", "select", "--cpus", "0"});
  ASSERT_EQ(cpus.exit.code, 0) << cpus.err;
  EXPECT_EQ(json::parse(cpus.out)["candidates"].size(), 1u);
  auto setting = RunPipette(
      {"--store", store, "--json", "select", "--setting", "threads=1", "--quant", "Q8_0"});
  ASSERT_EQ(setting.exit.code, 0) << setting.err;
  EXPECT_EQ(json::parse(setting.out)["candidates"].size(), 1u);
  auto report = RunPipette({"--store", store, "report", "--format", "md", "--quant", "Q8_0",
                            "--quant", "Q4_0", "--threads", "1"});
  ASSERT_EQ(report.exit.code, 0) << report.err;
  EXPECT_NE(report.out.find("(--quant Q8_0 --quant Q4_0 --setting threads=1)"), std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find("2 results (0 failed) in 2 configurations"), std::string::npos)
      << report.out;
  auto bad = RunPipette({"--store", store, "select", "--setting", "threads"});
  EXPECT_EQ(bad.exit.code, 2);
  EXPECT_NE(bad.err.find("'threads' is not a setting filter: give KEY=VALUE, e.g. threads=2"),
            std::string::npos)
      << bad.err;
  // Bad filter values are refused, never matched silently (one line, exit 2).
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"results", "list", "--threads", "0"},
       "--threads: '0' is not a thread count: give a positive integer, e.g. 2"},
      {{"select", "--threads", "1.5"}, "is not a thread count"},
      {{"select", "--model", ""}, "--model: give a value (it is empty)"},
      {{"select", "--cpus", "abc"}, "--cpus: CPU list 'abc'"},
      {{"select", "--setting", "foo=1"}, "--setting: unknown setting 'foo' (settings: threads, "},
      {{"report", "-o", ""}, "--output: give a file name, or - for stdout"},
      {{"report", "--format", "csv", "--max-memory", "1GiB"},
       "limits (--max-memory 1GiB) decide in html and md reports"},
      {{"compare", "--a", "quant=Q8_0", "--b", "quant=F16", "--quant", "Q4_0"},
       "--a quant=Q8_0 sets quant, and a filter for both groups sets it too"}};
  for (const auto& [words, message] : refused) {
    std::vector<std::string> a = {"--store", store};
    a.insert(a.end(), words.begin(), words.end());
    auto r = RunPipette(a);
    EXPECT_EQ(r.exit.code, 2) << words[0] << " " << words[1] << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // A path that is not a store is bad input for a reader, and an empty file stays empty.
  const std::string empty = WorkDir() + "/empty.db", text = WorkDir() + "/text.db";
  { std::ofstream(empty).flush(); }
  { std::ofstream(text) << "hello\n"; }
  for (const auto& [path, message] :
       std::vector<std::pair<std::string, std::string>>{
           {WorkDir(), "is a directory, not a results store"},
           {empty, "is empty (0 bytes), not a results store"},
           {text, "not a pipette store (not an SQLite database)"}}) {
    auto r = RunPipette({"--store", path, "select"});
    EXPECT_EQ(r.exit.code, 2) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);

  auto canonical = RunPipette({"--store", store, "--json", "results", "list", "--cpus", "0-0"});
  ASSERT_EQ(canonical.exit.code, 0) << canonical.err;
  EXPECT_EQ(json::parse(canonical.out).size(), 1u);  // recorded as "0"

  auto group = RunPipette({"--store", store, "--json", "compare", "--a", "quant=Q8_0,threads=1",
                           "--b", "quant=Q4_0,cpus=0"});
  ASSERT_EQ(group.exit.code, 0) << group.err;
  EXPECT_EQ(json::parse(group.out)["pairs"].size(), 1u);
  // compare takes the same filters, for both groups: --threads 2 leaves Q8_0 t=2 alone on A.
  auto both = RunPipette({"--store", store, "--json", "compare", "--a", "quant=Q8_0", "--b",
                          "quant=Q8_0", "--threads", "2"});
  ASSERT_EQ(both.exit.code, 0) << both.err;
  EXPECT_EQ(json::parse(both.out)["a"]["results"], 1);
  auto ids = RunPipette({"--store", store, "compare", "x", "y", "--threads", "2"});
  EXPECT_EQ(ids.exit.code, 2);
  EXPECT_NE(ids.err.find("narrow the groups of --a/--b"), std::string::npos) << ids.err;
}

}  // namespace
}  // namespace pipette
