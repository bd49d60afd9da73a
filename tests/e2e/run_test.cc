// End-to-end: real cells on the real engine (pipette-llamacpp-driver + the pinned llama.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "base/sha256.h"
#include "cli_runner.h"
#include "model_fixtures.h"
#include "resident_checks.h"
#include "pipette/cell.h"
#include "pipette/synth.h"

namespace pipette {
namespace {

using nlohmann::json;
using namespace testing_models;

CellSpec SmokeSpec(const std::string& model, const std::string& benchmark) {
  CellSpec spec;
  spec.model_path = model;
  spec.benchmark = *ParseBenchmarkId(benchmark);
  spec.settings["threads"] = 1;
  spec.policy.min_reps = 3;
  spec.policy.max_reps = 3;
  spec.runtime = LlamaCpp();
  spec.readiness.waive_load = true;  // ctest runs tests in parallel: the CPUs are busy on purpose
  return spec;
}

TEST(RunCellSynthetic, EveryBenchmarkTypeMeasures) {
  const std::string& model = TinySynthetic();
  const std::map<std::string, std::vector<std::string>> expected = {
      {"prefill_throughput_8", {"prefill_throughput", "ttft", "load_time"}},
      {"decode_throughput_8_8", {"decode_throughput", "inter_token_latency", "load_time"}},
      {"end_to_end_latency_8_8",
       {"end_to_end_latency", "ttft", "inter_token_latency", "decode_throughput"}},
      {"max_memory_usage_8", {"max_host_usage", "load_time"}}};
  for (const auto& [id, metrics] : expected) {
    auto r = RunCell(SmokeSpec(model, id));
    ASSERT_TRUE(r.ok()) << id << ": " << r.error().message;
    const json& rec = *r;
    ASSERT_EQ(rec["status"], "ok") << id << ": " << rec.dump(1);
    EXPECT_EQ(rec["input"]["prompt_tokens"], 8) << id;
    EXPECT_EQ(rec["samples"].size(), 3u) << id;
    EXPECT_EQ(rec["model"]["synthetic"], true);
    EXPECT_NE(rec["logs"]["warnings"].dump().find("synthetic model"), std::string::npos);
    EXPECT_TRUE(rec["runtime"]["effective"].contains("n_ctx"));
    for (const auto& m : metrics) {
      ASSERT_TRUE(rec["metrics"].contains(m)) << id << " lacks " << m;
      EXPECT_GT(rec["metrics"][m]["median"].get<double>(), 0) << id << " " << m;
    }
    EXPECT_EQ(rec["config_id"], ConfigId(rec));
  }
}

// --cpus pins the runtime: the driver reports the CPUs it ran on, the setting is recorded in its
// canonical form and is part of the config_id.
TEST(RunCellSynthetic, CpusPinTheRuntimeAndAreRecorded) {
  CellSpec spec = SmokeSpec(TinySynthetic(), "decode_throughput_8_8");
  auto unpinned = RunCell(spec);
  ASSERT_TRUE(unpinned.ok()) << unpinned.error().message;
  ASSERT_EQ((*unpinned)["status"], "ok") << (*unpinned)["failure"].dump();
  EXPECT_FALSE((*unpinned)["runtime"]["settings"].contains("cpus"));
  spec.settings["cpus"] = "0,0";
  auto pinned = RunCell(spec);
  ASSERT_TRUE(pinned.ok()) << pinned.error().message;
  ASSERT_EQ((*pinned)["status"], "ok") << (*pinned)["failure"].dump();
  EXPECT_EQ((*pinned)["runtime"]["settings"]["cpus"], "0");
  EXPECT_EQ((*pinned)["runtime"]["effective"]["cpus"], "0");
  EXPECT_NE((*pinned)["config_id"], (*unpinned)["config_id"]);
  spec.settings["cpus"] = "4095";
  auto absent = RunCell(spec);
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.error().message.find("CPU 4095 is not available here"), std::string::npos)
      << absent.error().message;
}

TEST(RunCellSynthetic, InterTokenLatencyHasPercentiles) {
  auto r = RunCell(SmokeSpec(TinySynthetic(), "end_to_end_latency_8_8"));
  ASSERT_TRUE(r.ok());
  const json& itl = (*r)["metrics"]["inter_token_latency"];
  EXPECT_EQ(itl["n"], 3 * 7);  // D - 1 gaps per repetition
  EXPECT_LE(itl["p50"].get<double>(), itl["p90"].get<double>());
  EXPECT_LE(itl["p90"].get<double>(), itl["p99"].get<double>());
}

TEST(RunCellSynthetic, SamePromptHashEveryTime) {
  auto a = RunCell(SmokeSpec(TinySynthetic(), "prefill_throughput_8"));
  auto b = RunCell(SmokeSpec(TinySynthetic(), "decode_throughput_8_8"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)["input"]["prompt_sha256"], (*b)["input"]["prompt_sha256"]);
  EXPECT_EQ((*a)["input"]["prompt_sha256"].get<std::string>().size(), 64u);
}

// Pinned prompt hashes: the built-in text, its repetition and the cut to exactly P tokens are part
// of pipette-method/1; a change to any of them must show up here (and bump the methodology).
TEST(PromptHash, PinnedForRealTokenizers) {
  auto tiny = RunCell(SmokeSpec(TinySynthetic(), "prefill_throughput_8"));
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ((*tiny)["input"]["prompt_sha256"],
            "02a308172bc56e041ef286257dc6486d0e66a0355171d58e9dd3963b601a8263");
  const std::string stories = Stories260K("Q8_0");
  if (stories.empty()) GTEST_SKIP() << SharedMissingReason();
  auto s = RunCell(SmokeSpec(stories, "prefill_throughput_256"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)["input"]["prompt_tokens"], 256);
  EXPECT_EQ((*s)["input"]["prompt_sha256"],
            "e2c51392c5ea12c3cbc23e2113ec91f515c36b0d55cbf9186bd1e66e91b206db");
}

// The acceptance shape of issue 2 on the real tiny model, through the CLI.
class Stories260KCli : public ::testing::TestWithParam<std::string> {};

TEST_P(Stories260KCli, StoresCompleteOkResult) {
  const std::string model = Stories260K("Q8_0");
  if (model.empty()) GTEST_SKIP() << SharedMissingReason();
  const std::string store = WorkDir() + "/cli-" + GetParam() + ".db";
  auto r = RunPipette({"--store", store, "run", "--model", model, "--benchmark", GetParam(),
                       "--threads", "1", "--json", "--quiet", "--no-readiness-load"});
  ASSERT_TRUE(r.exit.exited && r.exit.code == 0) << r.exit.Describe() << "\n" << r.err;
  const json rec = json::parse(r.out);
  const std::string headline(HeadlineMetric(ParseBenchmarkId(GetParam())->type));
  EXPECT_EQ(rec["status"], "ok");
  EXPECT_EQ(rec["schema"], "pipette.result/1");
  const json& m = rec["metrics"][headline];
  EXPECT_GT(m["median"].get<double>(), 0);
  EXPECT_GE(m["n"].get<int>(), 5);
  EXPECT_EQ(rec["samples"].size(), m["n"].get<size_t>());
  EXPECT_EQ(rec["model"]["sha256"], *Sha256OfFile(model));
  EXPECT_EQ(rec["model"]["quant"], "Q8_0");
  EXPECT_EQ(rec["input"]["prompt_tokens"], 256);
  EXPECT_EQ(rec["runtime"]["commit"].get<std::string>().rfind("80fb11a", 0), 0u);
  EXPECT_EQ(rec["device"]["id"].get<std::string>().size(), 64u);
  if (headline == "end_to_end_latency") {
    EXPECT_GT(rec["metrics"]["ttft"]["median"].get<double>(), 0);
  }
  if (headline == "max_host_usage") {
    EXPECT_EQ(m["unit"], "bytes");
    EXPECT_GT(m["median"].get<double>(), rec["model"]["size_bytes"].get<double>());
    ExpectResidentSplitWithinPeak(rec, GetParam());
    // mmap is off by default: the weights were read into anonymous memory.
    EXPECT_GT(rec["metrics"]["rss_anon_at_peak"]["median"].get<double>(),
              rec["model"]["tensor_bytes"].get<double>());
  }
  // Stored: `results show` finds it.
  auto shown = RunPipette({"--store", store, "--json", "results", "show",
                           rec["result_id"].get<std::string>()});
  ASSERT_EQ(shown.exit.code, 0) << shown.err;
  EXPECT_EQ(json::parse(shown.out)["result_id"], rec["result_id"]);
}

INSTANTIATE_TEST_SUITE_P(Acceptance, Stories260KCli,
                         ::testing::Values("decode_throughput_256_100", "prefill_throughput_256",
                                           "end_to_end_latency_256_256", "max_memory_usage_256"));

}  // namespace
}  // namespace pipette

namespace pipette {
namespace {

// Issue 2's main job on real input: every standard benchmark that fits stories260K's 512-token
// context, on F32 and three quantizations, stores ok results.
class Stories260KMainJob : public ::testing::TestWithParam<std::string> {};

TEST_P(Stories260KMainJob, EveryFittingStandardBenchmarkIsOk) {
  const std::string model = testing_models::Stories260K(GetParam());
  if (model.empty()) GTEST_SKIP() << testing_models::SharedMissingReason();
  int cells = 0;
  const BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  for (const BenchmarkSpec& b : catalog.List()) {
    if (b.type == BenchmarkType::kEval) continue;  // eval_e2e_test.cc
    const int need = b.prefill_tokens + (b.type == BenchmarkType::kMemory ? 1 : b.decode_tokens);
    if (need > 512) continue;
    CellSpec spec;
    spec.model_path = model;
    spec.benchmark = b;
    spec.settings["threads"] = 1;
    spec.policy.max_reps = 5;
    spec.runtime = testing_models::LlamaCpp();
    spec.readiness.waive_load = true;
    auto r = RunCell(spec);
    ASSERT_TRUE(r.ok()) << b.id << ": " << r.error().message;
    EXPECT_EQ((*r)["status"], "ok") << b.id << ": " << (*r)["failure"].dump();
    EXPECT_EQ((*r)["model"]["quant"], GetParam());
    EXPECT_EQ((*r)["harness"]["reps"], 5);
    ++cells;
  }
  // prefill 100/256/512, decode 100_100/256_100, e2e 100_256/256_256, memory 100/256 (memory at
  // 512 needs 513 positions: prefill 512, then decode one token).
  EXPECT_EQ(cells, 9);
}

INSTANTIATE_TEST_SUITE_P(Quantizations, Stories260KMainJob,
                         ::testing::Values("F32", "Q8_0", "Q4_0", "Q4_K_M"));

}  // namespace
}  // namespace pipette

namespace pipette {
namespace {

json KlCell(const std::string& model, const std::string& reference, const std::string& id) {
  CellSpec spec;
  spec.model_path = model;
  spec.reference_model_path = reference;
  spec.benchmark = *ParseBenchmarkId(id);
  spec.settings["threads"] = 1;
  spec.runtime = testing_models::LlamaCpp();
  auto r = RunCell(spec);
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok()) return json::object();
  EXPECT_EQ((*r)["status"], "ok") << (*r)["failure"].dump();
  return *r;
}

double MeanKl(const json& r) { return r["metrics"]["kl_divergence"]["mean"].get<double>(); }
double Top1(const json& r) { return r["metrics"]["top1_agreement"]["median"].get<double>(); }

// Issue 3: quantization quality on the device, stories260K against its F32 original.
TEST(KlDivergence, Stories260KQuantizationsAgainstF32) {
  const std::string f32 = testing_models::Stories260K("F32");
  if (f32.empty()) GTEST_SKIP() << testing_models::SharedMissingReason();
  const json q4 = KlCell(testing_models::Stories260K("Q4_0"), f32, "kl_divergence_512");
  const json q8 = KlCell(testing_models::Stories260K("Q8_0"), f32, "kl_divergence_512");
  const json same = KlCell(f32, f32, "kl_divergence_512");
  EXPECT_GT(MeanKl(q4), 0.0);
  EXPECT_LT(Top1(q4), 1.0);
  EXPECT_LT(MeanKl(q8), MeanKl(q4));
  EXPECT_NEAR(MeanKl(same), 0.0, 1e-6);
  EXPECT_EQ(Top1(same), 1.0);
  EXPECT_EQ(q4["input"]["prompt_tokens"], 512);
  EXPECT_EQ(q4["input"]["reference_model"]["quant"], "F32");
  EXPECT_TRUE(q4["metrics"]["kl_divergence"].contains("p99"));
  EXPECT_NEAR(q4["metrics"]["reference_perplexity"]["median"].get<double>(),
              same["metrics"]["perplexity"]["median"].get<double>(), 1e-3);
}

TEST(KlDivergence, SyntheticF16AgainstF32) {
  SynthOptions o;
  o.preset = "tiny";
  o.n_ctx = 512;
  o.type = "F32";
  o.out_path = testing_models::WorkDir() + "/tiny-F32.gguf";
  ASSERT_TRUE(WriteSyntheticModel(o).ok());
  const json r = KlCell(testing_models::TinySynthetic(), o.out_path, "kl_divergence_64");
  EXPECT_GE(MeanKl(r), 0.0);
  EXPECT_LT(MeanKl(r), 0.01);  // F16 rounding of the same weights barely moves the distribution
  EXPECT_EQ(r["input"]["prompt_tokens"], 64);
}

TEST(KlDivergence, NeedsAReference) {
  CellSpec spec;
  spec.model_path = testing_models::TinySynthetic();
  spec.benchmark = *ParseBenchmarkId("kl_divergence_64");
  spec.runtime = LlamaCpp();
  auto r = RunCell(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("give its reference model"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace pipette

namespace pipette {
namespace {

// Issue 3: a one-minute soak reports drift and growth figures, and flags an artificial leak.
json Soak(int64_t leak_bytes) {
  CellSpec spec;
  spec.model_path = testing_models::TinySynthetic();
  spec.benchmark = *ParseBenchmarkId("soak_32_32_1");
  spec.settings["threads"] = 1;
  spec.settings["test_leak_bytes"] = leak_bytes;
  spec.runtime = testing_models::LlamaCpp();
  auto r = RunCell(spec);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : json::object();
}

TEST(SoakCell, ArtificialLeakIsFlagged) {
  const json r = Soak(1 << 20);
  ASSERT_EQ(r["status"], "ok") << r.dump().substr(0, 2000);
  const json& s = r["soak"];
  EXPECT_GT(s["requests"].get<int>(), 20);
  EXPECT_GE(s["duration_s"].get<double>(), 55.0);
  EXPECT_TRUE(s.contains("drift"));
  EXPECT_TRUE(s.contains("slope_tokens_per_s_per_min"));
  EXPECT_TRUE(s["growth_flagged"].get<bool>()) << s.dump();
  EXPECT_GT(s["memory_growth_bytes"].get<int64_t>(), 8 << 20);
  EXPECT_NE(r["logs"]["warnings"].dump().find("a leak?"), std::string::npos);
  EXPECT_EQ(r["samples"].size(), s["requests"].get<size_t>());
}

TEST(SoakCell, SteadyRuntimeIsNotFlaggedForGrowth) {
  const json r = Soak(0);
  ASSERT_EQ(r["status"], "ok");
  EXPECT_FALSE(r["soak"]["growth_flagged"].get<bool>()) << r["soak"].dump();
}

// Issue 26: a soak of varied lengths on the real tiny model, through the CLI. The record names
// the shapes and each request's shape; each shape is judged against its own start, so shapes
// over ten times apart in speed (about 700 to 10,000 tokens/s here) are not drift.
TEST(SoakCell, VariedSoakRecordsItsShapesAndIsNotFlagged) {
  const std::string model = testing_models::Stories260K("Q8_0");
  if (model.empty()) GTEST_SKIP() << testing_models::SharedMissingReason();
  const std::string store = testing_models::WorkDir() + "/soak-varied.db";
  auto run = testing_models::RunPipette({"--store", store, "--json", "run", "-q", "--model", model, "--benchmark",
                         "soak_varied_64_32_1", "--threads", "1", "--no-readiness-load"});
  ASSERT_EQ(run.exit.code, 0) << run.err;
  const json r = json::parse(run.out);
  ASSERT_EQ(r["status"], "ok") << r.value("failure", json());
  EXPECT_EQ(r["benchmark"]["type"], "soak");
  EXPECT_EQ(r["benchmark"]["varied"], true);
  const std::vector<std::pair<int, int>> expected = {{64, 32}, {8, 16}, {64, 4},
                                                     {16, 32}, {32, 8}, {8, 4}};
  const json& inputs = r["input"]["shapes"];
  const json& s = r["soak"];
  ASSERT_EQ(inputs.size(), expected.size()) << r["input"].dump();
  ASSERT_EQ(s["shapes"].size(), expected.size()) << s.dump();
  std::set<std::string> hashes;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(inputs[i]["prompt_tokens"], expected[i].first) << i;
    EXPECT_EQ(inputs[i]["decode_tokens"], expected[i].second) << i;
    EXPECT_EQ(s["shapes"][i]["prompt_tokens"], expected[i].first) << i;
    EXPECT_EQ(s["shapes"][i]["decode_tokens"], expected[i].second) << i;
    EXPECT_GT(s["shapes"][i]["requests"].get<int>(), 10) << i;
    hashes.insert(inputs[i]["prompt_sha256"].get<std::string>());
  }
  EXPECT_EQ(hashes.size(), 4u);  // 64, 8, 16 and 32 prompt tokens: one prompt per length
  EXPECT_EQ(r["input"]["prompt_tokens"], 64);
  EXPECT_EQ(r["input"]["prompt_sha256"], inputs[0]["prompt_sha256"]);
  // Requests cycle through the shapes in order, from the longest, with exact token counts.
  const json& samples = r["samples"];
  ASSERT_EQ(samples.size(), s["requests"].get<size_t>());
  for (size_t i = 0; i < samples.size(); ++i) {
    const size_t shape = i % expected.size();
    ASSERT_EQ(samples[i]["shape"], shape) << i;
    ASSERT_EQ(samples[i]["tokens_in"], expected[shape].first) << i;
    ASSERT_EQ(samples[i]["tokens_out"], expected[shape].second) << i;
  }
  EXPECT_GE(s["duration_s"].get<double>(), 55.0);
  EXPECT_EQ(s["drift_basis"], "per_shape");
  // The shapes' own speeds differ (4 to 32 tokens after 8 to 64): each is judged on itself.
  EXPECT_NEAR(s["first_tenth_relative_throughput"].get<double>(), 1.0, 0.05) << s.dump();
  EXPECT_FALSE(s["growth_flagged"].get<bool>()) << s.dump();
  // Not flagged for drift, unless the CPU time it got changed within its minute: ctest runs tests
  // side by side on few cores (the funnel's soak test says the same). A flag then says it was
  // judged per shape. Unit tests (stats_test Soak.Varied*) pin the analysis itself.
  if (s["drift_flagged"].get<bool>()) {
    EXPECT_NE(r["logs"]["warnings"].dump().find("each shape against its own start"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace pipette

namespace pipette {
namespace {

// Issue 4 (first part): `compare` on raw samples; a result compared with itself shows no
// significant difference anywhere.
TEST(CompareCli, ResultAgainstItselfHasNoSignificantDifference) {
  const std::string store = testing_models::WorkDir() + "/compare.db";
  auto run = testing_models::RunPipette(
      {"--store", store, "--json", "run", "-q", "--model", testing_models::TinySynthetic(),
       "--benchmark", "decode_throughput_32_32", "--threads", "1", "--max-reps", "6",
       "--no-readiness-load"});
  ASSERT_EQ(run.exit.code, 0) << run.err;
  const std::string id = json::parse(run.out)["result_id"];
  auto cmp = testing_models::RunPipette({"--store", store, "--json", "compare", id, id});
  ASSERT_EQ(cmp.exit.code, 0) << cmp.err;
  const json out = json::parse(cmp.out);
  ASSERT_FALSE(out["metrics"].empty());
  const size_t reps = json::parse(run.out)["samples"].size();
  for (const json& m : out["metrics"]) {
    EXPECT_DOUBLE_EQ(m["ratio"].get<double>(), 1.0) << m.dump();
    // One sample per repetition, the per-token latencies of a repetition included.
    if (m["metric"] != "load_time") {
      EXPECT_EQ(m["a_n"].get<size_t>(), reps) << m.dump();
    }
    EXPECT_NE(m["verdict"].get<std::string>().find("no"), std::string::npos) << m.dump();
  }
  auto table = testing_models::RunPipette({"--store", store, "compare", id, id});
  EXPECT_NE(table.out.find("| decode_throughput (tokens/s)"), std::string::npos) << table.out;
  EXPECT_NE(table.err.find("note: A and B are the same result " + id), std::string::npos)
      << table.err;
  auto missing = testing_models::RunPipette({"--store", store, "compare", id, "ffffffff"});
  EXPECT_EQ(missing.exit.code, 2);
}

// Issue 27: "compare's footer ran into a note on one line ("B/A outside 1 +- 0.02note: ...")".
// With stdout and stderr in one pipe, as a tool that captures both sees them, the footnote keeps
// its lines and every note starts one of its own, after the footnote.
TEST(CompareCli, NotesFollowTheFootnoteOnLinesOfTheirOwn) {
  const std::string store = testing_models::WorkDir() + "/compare-notes.db";
  auto run = testing_models::RunPipette(
      {"--store", store, "--json", "run", "-q", "--model", testing_models::TinySynthetic(),
       "--benchmark", "decode_throughput_8_8", "--threads", "1", "--min-reps", "1",
       "--max-reps", "2", "--no-readiness-load"});
  ASSERT_EQ(run.exit.code, 0) << run.err;
  const std::string id = json::parse(run.out)["result_id"];
  std::string merged;
  auto exit = RunTool({testing_models::Binary("pipette"), "--store", store, "compare", id, id},
                      &merged);
  ASSERT_TRUE(exit.ok() && exit->exited && exit->code == 0) << merged;
  std::vector<std::string> lines;
  for (size_t at = 0; at < merged.size();) {
    const size_t end = merged.find('\n', at);
    lines.push_back(merged.substr(at, end - at));
    at = end == std::string::npos ? merged.size() : end + 1;
  }
  size_t footnote = lines.size(), first_note = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.find("1 +- ") != std::string::npos) {
      EXPECT_EQ(l.substr(l.size() - 9), "1 +- 0.02") << merged;  // the footnote ends its line
      footnote = i;
    }
    if (l.find("note: ") != std::string::npos) {
      EXPECT_EQ(l.rfind("note: ", 0), 0u) << l;  // a note starts its own line
      first_note = std::min(first_note, i);
    }
  }
  ASSERT_LT(footnote, lines.size()) << merged;
  ASSERT_LT(first_note, lines.size()) << merged;
  EXPECT_GT(first_note, footnote) << merged;
  EXPECT_NE(merged.find("\nnote: A and B are the same result " + id), std::string::npos) << merged;
  EXPECT_NE(merged.find("\nnote: A (" + id + ", decode_throughput_8_8) is noisy"),
            std::string::npos)
      << merged;
}

}  // namespace
}  // namespace pipette

namespace pipette {
namespace {

std::string RunForDiff(const std::string& store, const std::string& model, const std::string& threads) {
  auto r = testing_models::RunPipette({"--store", store, "--json", "run", "-q", "--model", model,
                                       "--benchmark", "prefill_throughput_16", "--threads",
                                       threads, "--min-reps", "3", "--max-reps", "3",
                                       "--no-readiness-load"});
  EXPECT_EQ(r.exit.code, 0) << r.err;
  return r.exit.code == 0 ? json::parse(r.out)["result_id"].get<std::string>() : "";
}

// Issue 4 (first part): `diff` names the first differing layer.
TEST(DiffCli, NamesParametersForThreadsAndInputsForAnotherModel) {
  const std::string store = testing_models::WorkDir() + "/diff.db";
  const std::string one = RunForDiff(store, testing_models::TinySynthetic(), "1");
  const std::string two = RunForDiff(store, testing_models::TinySynthetic(), "2");
  SynthOptions o;
  o.preset = "tiny";
  o.n_ctx = 512;
  o.seed = 2;
  o.out_path = testing_models::WorkDir() + "/tiny-seed2.gguf";
  ASSERT_TRUE(WriteSyntheticModel(o).ok());
  const std::string other = RunForDiff(store, o.out_path, "1");
  auto threads = testing_models::RunPipette({"--store", store, "diff", one, two});
  EXPECT_EQ(threads.out.rfind("first difference: parameters (threads: 1 -> 2)", 0), 0u)
      << threads.out;
  auto model = testing_models::RunPipette({"--store", store, "--json", "diff", one, other});
  const json m = json::parse(model.out);
  EXPECT_EQ(m["first_difference"], "inputs");
  EXPECT_TRUE(m["layers"]["parameters"].empty());
}

}  // namespace
}  // namespace pipette
