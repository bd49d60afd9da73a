// Plans: a suite's cells as JobSpecs and back as the CellSpecs a worker measures, on the example
// suite files of the repository and on a suite that uses every policy a JobSpec carries.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "pipette/fleet_plan.h"
#include "pipette/store.h"
#include "pipette/suite.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class PlanTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pipette-plan-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto store = ResultStore::Open(dir_ + "/results.db");
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(*store);
    // The runtimes' folders named by the examples; opening them is the worker's business.
    setenv("PIPETTE_LLAMA_BIN", (dir_ + "/llama-bin").c_str(), 1);
    setenv("PIPETTE_LLAMA_BIN_3_22_1", (dir_ + "/llama-bin-2").c_str(), 1);
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  // Parses suite text whose model paths are relative to <dir>/a/b, creating each model file
  // (distinct contents: distinct SHA-256) first.
  Result<Suite> ParseWithModels(const std::string& text) {
    const fs::path base = fs::path(dir_) / "a" / "b";
    fs::create_directories(base);
    static const std::regex path_re(R"((path|reference)\s*=\s*"([^"]+)\")");
    for (std::sregex_iterator it(text.begin(), text.end(), path_re), end; it != end; ++it) {
      const fs::path p = (base / (*it)[2].str()).lexically_normal();
      fs::create_directories(p.parent_path());
      std::ofstream(p) << "model " << p.string();
    }
    return ParseSuiteToml(text, base.string(), "suite.toml", {"decision"});
  }

  HashFileFn Hasher() {
    return [this](const std::string& path) { return CachedSha256(*store_, path); };
  }

  // The worker's view: every model of the suite by its SHA-256.
  std::map<std::string, std::string> ModelIndex(const Suite& suite) {
    std::map<std::string, std::string> index;
    auto add = [&](const std::string& path) { index[*CachedSha256(*store_, path)] = path; };
    for (const auto& m : suite.models) add(m);
    for (const auto& [m, ref] : suite.references) add(ref);
    return index;
  }

  // Round trip of every cell: JobSpec through its JSON text, back to a CellSpec equal to the
  // cell `suite run` measures.
  void RoundTrip(const Suite& suite) {
    auto cells = ExpandSuite(suite);
    ASSERT_TRUE(cells.ok()) << cells.error().message;
    JobRequirements req;
    req.labels = {"lab-a"};
    req.arch = "x86_64";
    auto specs = JobSpecsFromSuite(suite, *cells, Hasher(), req);
    ASSERT_TRUE(specs.ok()) << specs.error().message;
    ASSERT_EQ(specs->size(), cells->size());
    JobContext ctx;
    ctx.models = ModelIndex(suite);
    ctx.checkpoint_dir = dir_ + "/checkpoints";
    std::vector<RuntimeChoice> opened;
    ctx.open_runtime = [&](const RuntimeChoice& c) -> Result<std::shared_ptr<Runtime>> {
      opened.push_back(c);
      if (c.name == "llamacpp") return OpenRuntime(c);
      return MakeError("not on this machine");
    };
    for (size_t i = 0; i < cells->size(); ++i) {
      const SuiteCell& cell = (*cells)[i];
      SCOPED_TRACE(suite.name + " cell " + std::to_string(cell.index));
      // The reference model's own kl_divergence cell has nothing to compare with: a suite lists
      // it as invalid and a worker refuses it before opening a runtime (the job names no
      // reference), as RunSuite does.
      if (cell.benchmark_id.starts_with("kl_divergence") && !suite.references.count(cell.model_path)) {
        auto back = CellSpecFromJob(json::parse((*specs)[i].dump()), ctx);
        EXPECT_FALSE(back.ok());
        continue;
      }
      const json spec = json::parse((*specs)[i].dump());  // as the server hands it back
      const RuntimeChoice& choice = suite.runtimes[cell.runtime].choice;
      EXPECT_EQ(spec["benchmark"], cell.benchmark_id);
      EXPECT_EQ(spec["model"]["file_name"], fs::path(cell.model_path).filename().string());
      EXPECT_EQ(spec["model"]["sha256"].get<std::string>().size(), 64u);
      EXPECT_EQ(spec["runtime"], choice.name);
      EXPECT_EQ(spec["requires"]["labels"], json({"lab-a"}));
      EXPECT_EQ(spec["requires"]["arch"], "x86_64");
      EXPECT_EQ(spec["requires"]["runtimes"], json({choice.name}));
      EXPECT_EQ(spec["requires"]["models"][0], spec["model"]["sha256"]);
      EXPECT_EQ(spec["cell"]["index"], cell.index);

      opened.clear();
      auto back = CellSpecFromJob(spec, ctx);
      ASSERT_EQ(opened.size(), 1u);
      EXPECT_EQ(opened[0].name, choice.name);
      EXPECT_EQ(opened[0].dir, choice.dir);
      EXPECT_EQ(opened[0].url, choice.url);
      EXPECT_EQ(opened[0].server_command, choice.server_command);
      EXPECT_EQ(opened[0].api_model, choice.api_model);
      if (choice.name != "llamacpp") {
        ASSERT_FALSE(back.ok());
        EXPECT_EQ(back.error().stage, kJobStageDevice) << back.error().message;
        continue;
      }
      ASSERT_TRUE(back.ok()) << back.error().message;
      EXPECT_EQ(back->model_path, cell.model_path);
      EXPECT_EQ(back->benchmark.id, cell.benchmark_id);
      EXPECT_EQ(back->settings, cell.settings);
      EXPECT_EQ(back->label, suite.label);
      EXPECT_EQ(back->allow_context_overflow, suite.allow_context_overflow);
      EXPECT_EQ(HarnessToJson(back->policy), HarnessToJson(suite.policy));
      EXPECT_EQ(ReadinessToJson(back->readiness), ReadinessToJson(suite.readiness));
      const auto ref = suite.references.find(cell.model_path);
      const bool kl = back->benchmark.type == BenchmarkType::kKlDivergence;
      EXPECT_EQ(back->reference_model_path,
                kl && ref != suite.references.end() ? ref->second : std::string());
      ASSERT_NE(back->runtime, nullptr);
      EXPECT_EQ(back->runtime->Identity().name, "llamacpp");
    }
  }

  std::string dir_;
  std::unique_ptr<ResultStore> store_;
};

TEST_F(PlanTest, ExampleSuitesRoundTrip) {
  // The repository's examples/suites (not from __FILE__: ccache's base dir makes it relative).
  const fs::path dir = fs::path(PIPETTE_SOURCE_DIR) / "examples/suites";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    SCOPED_TRACE(entry.path().string());
    auto suite = ParseWithModels(ReadFile(entry.path()));
    ASSERT_TRUE(suite.ok()) << suite.error().message;
    RoundTrip(*suite);
    ++files;
  }
  EXPECT_GE(files, 4);
}

constexpr char kEveryPolicy[] = R"(
name = "every-policy"
mode = "matrix"
benchmarks = ["prefill_throughput_8", "decode_throughput_8_4", "kl_divergence_16",
              "eval_math_500_2026.06.1"]
label = "bench-lab"
allow_context_overflow = true

[[models]]
path = "models/m-Q4_0.gguf"
reference = "models/m-F32.gguf"
[[models]]
path = "models/m-Q8_0.gguf"
reference = "models/m-F32.gguf"

[[runtimes]]
name = "llamacpp"
settings = { threads = [1, 2], n_batch = 64 }

[harness]
warmup_runs = 0
min_reps = 2
max_reps = 3
ci_target = 0.05
request_timeout_s = 30

[readiness]
max_cpu_celsius = 85
max_busy_fraction = 0.9
deadline_s = 10
waive = ["load", "thermal", "throttle"]

[eval]
limit = 3
repeats = 1
max_tokens = 40
temperature = 0.25
seed = 9
parallel = 3
doom_loop = { min_bytes = 256, line_cycle = "off" }
)";

TEST_F(PlanTest, EveryPolicyRoundTrips) {
  auto suite = ParseWithModels(kEveryPolicy);
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  RoundTrip(*suite);

  auto cells = ExpandSuite(*suite);
  ASSERT_TRUE(cells.ok());
  ASSERT_EQ(cells->size(), 16u);  // 2 models x 2 thread counts x 4 benchmarks
  auto specs = JobSpecsFromSuite(*suite, *cells, Hasher(), {});
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  JobContext ctx;
  ctx.models = ModelIndex(*suite);
  ctx.checkpoint_dir = dir_ + "/checkpoints";
  ctx.open_runtime = [](const RuntimeChoice& c) { return OpenRuntime(c); };
  int kl = 0, eval = 0;
  for (const json& spec : *specs) {
    EXPECT_EQ(spec["readiness"]["waive"], json({"thermal", "load", "throttle"}));
    EXPECT_EQ(spec["requires"]["labels"], json::array());
    EXPECT_EQ(spec["requires"]["arch"], "");
    EXPECT_TRUE(spec["allow_context_overflow"].get<bool>());
    if (spec["benchmark"] == "kl_divergence_16") {
      ++kl;
      // The reference is required too: a device without it cannot run the cell.
      ASSERT_TRUE(spec.contains("reference_model"));
      EXPECT_EQ(spec["reference_model"]["file_name"], "m-F32.gguf");
      EXPECT_EQ(spec["requires"]["models"].size(), 2u);
      EXPECT_EQ(spec["requires"]["models"][1], spec["reference_model"]["sha256"]);
    } else {
      EXPECT_FALSE(spec.contains("reference_model"));
      EXPECT_EQ(spec["requires"]["models"].size(), 1u);
    }
    if (spec["benchmark"] == "eval_math_500_2026.06.1") {
      ++eval;
      auto cell = CellSpecFromJob(spec, ctx);
      ASSERT_TRUE(cell.ok()) << cell.error().message;
      EXPECT_EQ(cell->eval.limit, 3);
      EXPECT_EQ(cell->eval.repeats, 1);
      EXPECT_EQ(cell->eval.max_tokens, 40);
      EXPECT_DOUBLE_EQ(cell->eval.temperature, 0.25);
      EXPECT_EQ(cell->eval.seed, 9u);
      EXPECT_EQ(cell->eval.parallel, 3);  // a worker decodes as many attempts together
      EXPECT_EQ(spec["eval"]["parallel"], 3);
      EXPECT_EQ(cell->eval.doom_loop.min_bytes, 256);
      EXPECT_FALSE(cell->eval.doom_loop.line_cycle);
      EXPECT_TRUE(cell->eval.doom_loop.repeated_line);
      EXPECT_EQ(cell->eval.checkpoint_dir, ctx.checkpoint_dir);
    } else {
      EXPECT_FALSE(spec.contains("eval"));
    }
  }
  EXPECT_EQ(kl, 4);
  EXPECT_EQ(eval, 4);
}

TEST_F(PlanTest, BadJobsAreRefusedWithTheirKind) {
  auto suite = ParseWithModels(kEveryPolicy);
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  auto cells = ExpandSuite(*suite);
  ASSERT_TRUE(cells.ok());
  auto specs = JobSpecsFromSuite(*suite, *cells, Hasher(), {});
  ASSERT_TRUE(specs.ok());
  const json good = (*specs)[0];
  JobContext ctx;
  ctx.models = ModelIndex(*suite);
  ctx.open_runtime = [](const RuntimeChoice& c) { return OpenRuntime(c); };
  ASSERT_TRUE(CellSpecFromJob(good, ctx).ok());

  auto expect = [&](json spec, const std::string& stage, const std::string& says) {
    auto r = CellSpecFromJob(spec, ctx);
    ASSERT_FALSE(r.ok()) << spec.dump();
    EXPECT_EQ(r.error().stage, stage) << r.error().message;
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
  };
  // This device's problem: another device may run it.
  JobContext without = ctx;
  without.models.clear();
  auto r = CellSpecFromJob(good, without);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().stage, kJobStageDevice);
  EXPECT_NE(r.error().message.find("m-Q4_0.gguf) is not in this worker's model folders"),
            std::string::npos)
      << r.error().message;
  // No device can run these.
  json j = good;
  j["benchmark"] = "prefill_throughput_x";
  expect(j, kJobStageSpec, "prefill_throughput_x");
  j = good;
  j["settings"]["warp_speed"] = 9;
  expect(j, kJobStageSpec, "settings.warp_speed: runtime llamacpp does not take this setting");
  j = good;
  j["harness"]["min_repz"] = 2;
  expect(j, kJobStageSpec, "harness: unknown key 'min_repz'");
  j = good;
  j["harness"]["min_reps"] = "two";
  expect(j, kJobStageSpec, "harness.min_reps: unexpected value \"two\"");
  j = good;
  j["readiness"]["waive"] = {"noise"};
  expect(j, kJobStageSpec, "readiness.waive: 'noise'");
  j = good;
  j["runtime"] = "vllm";
  expect(j, kJobStageSpec, "vllm");
  j = good;
  j.erase("model");
  expect(j, kJobStageSpec, "model: expected");
  // Found by fuzz_http_replies: members of the wrong type are refused, never read as they are.
  j = good;
  j["benchmark_definition"] = "prefill";
  expect(j, kJobStageSpec, "benchmark_definition: expected an object");
  j = good;
  j["benchmark_definition"] = {{"max_tokens", "many"}};
  expect(j, kJobStageSpec, "benchmark_definition.max_tokens: unexpected value \"many\"");
  j = good;
  j["model"]["file_name"] = 7;
  auto unnamed = CellSpecFromJob(j, without);
  ASSERT_FALSE(unnamed.ok());
  EXPECT_NE(unnamed.error().message.find("(?) is not in this worker's model folders"),
            std::string::npos)
      << unnamed.error().message;
}

TEST_F(PlanTest, AModelThatCannotBeHashedNamesTheFile) {
  auto suite = ParseWithModels(kEveryPolicy);
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  auto cells = ExpandSuite(*suite);
  ASSERT_TRUE(cells.ok());
  fs::remove(suite->models[1]);
  auto specs = JobSpecsFromSuite(*suite, *cells, Hasher(), {});
  ASSERT_FALSE(specs.ok());
  EXPECT_NE(specs.error().message.find("m-Q8_0.gguf"), std::string::npos) << specs.error().message;
}

}  // namespace
}  // namespace pipette
