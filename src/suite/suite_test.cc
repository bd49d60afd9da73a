// Suite files and their expansion (matrix and one-factor), without running cells.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "pipette/suite.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

// A folder with three (empty) model files; the parser only checks that they exist.
class SuiteFile : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pipette-suite-XXXXXX";
    dir_ = mkdtemp(tmpl);
    for (const char* m : {"a-F32.gguf", "a-Q8_0.gguf", "a-Q4_0.gguf"}) {
      std::ofstream(dir_ + "/" + m) << "x";
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result<Suite> Parse(const std::string& text) { return ParseSuiteToml(text, dir_, "s.toml"); }

  std::vector<SuiteCell> Expand(const std::string& text) {
    auto suite = Parse(text);
    EXPECT_TRUE(suite.ok()) << suite.error().message;
    if (!suite.ok()) return {};
    auto cells = ExpandSuite(*suite);
    EXPECT_TRUE(cells.ok()) << cells.error().message;
    return cells.ok() ? *cells : std::vector<SuiteCell>{};
  }

  std::string dir_;
};

constexpr char kModels[] = R"(
[[models]]
path = "a-F32.gguf"
[[models]]
path = "a-Q8_0.gguf"
[[models]]
path = "a-Q4_0.gguf"
)";

TEST_F(SuiteFile, MatrixIsTheFullCrossProductGroupedByModel) {
  const auto cells = Expand(std::string(R"(
name = "sweep"
benchmarks = ["prefill_throughput_256", "decode_throughput_256_100"]
[[runtimes]]
name = "llamacpp"
settings = { threads = [1, 2], mmap = false, flash_attn = ["on", "off"] }
)") + kModels);
  ASSERT_EQ(cells.size(), 3u * 2 * 2 * 2);
  // Models vary slowest, then settings by name (flash_attn, mmap, threads), then benchmarks.
  EXPECT_EQ(fs::path(cells[0].model_path).filename(), "a-F32.gguf");
  EXPECT_EQ(fs::path(cells[7].model_path).filename(), "a-F32.gguf");
  EXPECT_EQ(fs::path(cells[8].model_path).filename(), "a-Q8_0.gguf");
  EXPECT_EQ(cells[0].benchmark_id, "prefill_throughput_256");
  EXPECT_EQ(cells[1].benchmark_id, "decode_throughput_256_100");
  EXPECT_EQ(cells[0].settings["threads"], 1);
  EXPECT_EQ(cells[0].settings["flash_attn"], "on");
  EXPECT_EQ(cells[2].settings["threads"], 2);
  EXPECT_EQ(cells[2].settings["flash_attn"], "on");
  EXPECT_EQ(cells[4].settings["flash_attn"], "off");
  EXPECT_EQ(cells[4].settings["threads"], 1);
  EXPECT_EQ(cells[4].settings["mmap"], false);
  EXPECT_EQ(cells[6].settings, (nlohmann::json{{"threads", 2}, {"mmap", false},
                                                    {"flash_attn", "off"}}));
  for (size_t i = 0; i < cells.size(); ++i) EXPECT_EQ(cells[i].index, static_cast<int>(i) + 1);
  EXPECT_EQ(cells[0].factor, "");
}

TEST_F(SuiteFile, EvalTableSetsHowEvalBenchmarksGenerate) {
  auto suite = Parse(std::string(R"(
name = "evals"
benchmarks = ["eval_math_500_2026.06.1"]
[eval]
data_dir = "data"
limit = 20
repeats = 2
temperature = 0.3
seed = 7
max_tokens = 200
doom_loop = { min_bytes = 256, line_cycle = "off", tail_repeat = false }
)") + kModels);
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  const EvalOptions& e = suite->eval;
  EXPECT_EQ(e.data_dir, dir_ + "/data");  // relative to the suite file
  EXPECT_EQ(e.limit, 20);
  EXPECT_EQ(e.repeats, 2);
  EXPECT_DOUBLE_EQ(e.temperature, 0.3);
  EXPECT_EQ(e.seed, 7u);
  EXPECT_EQ(e.max_tokens, 200);
  EXPECT_EQ(e.doom_loop.min_bytes, 256);
  EXPECT_FALSE(e.doom_loop.line_cycle);
  EXPECT_FALSE(e.doom_loop.tail_repeat);
  EXPECT_TRUE(e.doom_loop.exact_block);

  auto bad = Parse(std::string("name = \"e\"\nbenchmarks = [\"eval_math_500_2026.06.1\"]\n"
                               "[eval]\nrepeats = 0\n") + kModels);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("eval.repeats"), std::string::npos) << bad.error().message;
  auto tuning = Parse(std::string("name = \"e\"\nbenchmarks = [\"eval_math_500_2026.06.1\"]\n"
                                  "[eval]\ndoom_loop = { loops = 3 }\n") + kModels);
  ASSERT_FALSE(tuning.ok());
  EXPECT_NE(tuning.error().message.find("eval.doom_loop.loops"), std::string::npos)
      << tuning.error().message;
  auto unknown = Parse(std::string("name = \"e\"\nbenchmarks = [\"eval_math_500_2026.06.1\"]\n"
                                   "[eval]\nrepeat = 3\n") + kModels);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("repeat"), std::string::npos);
}

TEST_F(SuiteFile, InterleaveRunsEachBenchmarkOnEveryConfigurationInTurn) {
  const auto cells = Expand(std::string(R"(
name = "versions"
interleave = true
benchmarks = ["prefill_throughput_256", "decode_throughput_256_100"]
[[runtimes]]
name = "llamacpp"
settings = { threads = [1, 2] }
)") + kModels);
  ASSERT_EQ(cells.size(), 3u * 2 * 2);
  std::vector<std::string> order;
  for (size_t i = 0; i < 4; ++i) {
    order.push_back(cells[i].benchmark_id + " t" + cells[i].settings["threads"].dump());
    EXPECT_EQ(cells[i].index, static_cast<int>(i) + 1);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"prefill_throughput_256 t1", "prefill_throughput_256 t2",
                                             "decode_throughput_256_100 t1",
                                             "decode_throughput_256_100 t2"}));
  EXPECT_EQ(fs::path(cells[3].model_path).filename(), fs::path(cells[0].model_path).filename());
  EXPECT_NE(fs::path(cells[4].model_path).filename(), fs::path(cells[0].model_path).filename());
}

TEST_F(SuiteFile, OneFactorVariesOneDimensionAtATimeAroundTheBaseline) {
  const auto cells = Expand(std::string(R"(
name = "one"
mode = "one-factor"
benchmarks = ["decode_throughput_256_100"]
[[runtimes]]
name = "llamacpp"
settings = { threads = [1, 2, 4], flash_attn = ["auto", "on"] }
[baseline]
model = "a-Q8_0.gguf"
settings = { threads = 2 }
)") + kModels);
  // baseline + 2 other models + 2 other thread counts + 1 other flash_attn = 6 configurations.
  ASSERT_EQ(cells.size(), 6u);
  std::map<std::string, const SuiteCell*> by_factor;
  for (const auto& c : cells) by_factor[c.factor] = &c;
  ASSERT_EQ(by_factor.size(), 6u);
  const SuiteCell& base = *by_factor.at("baseline");
  EXPECT_EQ(fs::path(base.model_path).filename(), "a-Q8_0.gguf");
  EXPECT_EQ(base.settings["threads"], 2);
  EXPECT_EQ(base.settings["flash_attn"], "auto");
  const SuiteCell& f32 = *by_factor.at("model=a-F32.gguf");
  EXPECT_EQ(f32.settings["threads"], 2);
  EXPECT_EQ(f32.settings["flash_attn"], "auto");
  const SuiteCell& t4 = *by_factor.at("threads=4");
  EXPECT_EQ(fs::path(t4.model_path).filename(), "a-Q8_0.gguf");
  EXPECT_EQ(t4.settings["flash_attn"], "auto");
  EXPECT_EQ(by_factor.at("threads=1")->settings["threads"], 1);
  EXPECT_EQ(by_factor.at("flash_attn=\"on\"")->settings["threads"], 2);
  EXPECT_FALSE(by_factor.count("threads=2"));
  // Each model's cells run together: F32 (one cell), then the four Q8_0 ones, then Q4_0.
  EXPECT_EQ(fs::path(cells[0].model_path).filename(), "a-F32.gguf");
  EXPECT_EQ(cells[1].factor, "baseline");
  EXPECT_EQ(fs::path(cells[5].model_path).filename(), "a-Q4_0.gguf");
}

TEST_F(SuiteFile, OneFactorWithoutBaselineTakesTheFirstOfEachList) {
  const auto cells = Expand(std::string(R"(
name = "one"
mode = "one-factor"
benchmarks = ["prefill_throughput_100", "prefill_throughput_256"]
[[runtimes]]
name = "llamacpp"
settings = { threads = [1, 2] }
)") + kModels);
  // (baseline F32 t=1, Q8_0, Q4_0, t=2) x 2 benchmarks.
  ASSERT_EQ(cells.size(), 8u);
  EXPECT_EQ(cells[0].factor, "baseline");
  EXPECT_EQ(cells[0].settings["threads"], 1);
  EXPECT_EQ(cells[2].factor, "threads=2");
}

TEST_F(SuiteFile, MatrixWithoutRuntimesUsesDefaultSettings) {
  const auto cells = Expand(std::string(R"(
name = "plain"
benchmarks = ["max_memory_usage_256"]
harness = { min_reps = 3, max_reps = 4, warmup_runs = 0 }
readiness = { waive = ["load"], cooldown_s = 1.5 }
label = "lab-7"
)") + kModels);
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(cells[0].runtime_label, "llamacpp");
  EXPECT_FALSE(cells[0].settings.contains("threads"));  // the runtime's default: physical cores
  auto suite = Parse(std::string("name = \"p\"\nbenchmarks = [\"max_memory_usage_256\"]\n"
                                 "label = \"lab-7\"\n[harness]\nmin_reps = 3\nmax_reps = 4\n"
                                 "[readiness]\nwaive = [\"load\"]\ncooldown_s = 1.5\n") +
                     kModels);
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  EXPECT_EQ(suite->policy.min_reps, 3);
  EXPECT_EQ(suite->policy.max_reps, 4);
  EXPECT_TRUE(suite->readiness.waive_load);
  EXPECT_FALSE(suite->readiness.waive_thermal);
  EXPECT_DOUBLE_EQ(suite->readiness.cooldown_s, 1.5);
  EXPECT_EQ(suite->label, "lab-7");
}

TEST_F(SuiteFile, BadInputNamesTheFileAndTheKey) {
  const std::string models = kModels;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"name = \"x\"\nbenchmarks = [\"b\"]\nmodes = 1\n" + models, "s.toml: modes: unknown key"},
      {"benchmarks = [\"b\"]\n" + models, "s.toml: name: missing"},
      {"name = \"x\"\n" + models, "s.toml: benchmarks: missing or empty"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n", "s.toml: models: missing"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n[[models]]\npath = \"nope.gguf\"\n",
       "s.toml: models[1].path: " + dir_ + "/nope.gguf: no such file"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n[[models]]\npath = \".\"\n",
       "s.toml: models[1].path: " + dir_ + "/ is not a file"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n[[models]]\npath = \"a-F32.gguf\"\n"
       "[[models]]\npath = \"sub/../a-F32.gguf\"\n",
       "s.toml: models[2]: " + dir_ + "/a-F32.gguf is listed twice"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n[[models]]\npath = \"a-F32.gguf\"\n"
       "reference = \"nope.gguf\"\n",
       "s.toml: models[1].reference: " + dir_ + "/nope.gguf: no such file"},
      {"name = \"x\"\nbenchmarks = \"b\"\n" + models, "s.toml: benchmarks: expected a list"},
      {"name = \"x\"\nmode = \"\"\nbenchmarks = [\"b\"]\n" + models,
       "s.toml: mode: '' is not a mode"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n[baseline]\nruntime = \"llamacpp\"\n" + models,
       "s.toml: baseline: only mode = \"one-factor\" uses a baseline"},
      {"name = \"x\"\nmode = \"grid\"\nbenchmarks = [\"b\"]\n" + models,
       "s.toml: mode: 'grid' is not a mode"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n[[runtimes]]\nname = \"mlc\"\n" + models,
       "s.toml: runtimes[1].name: unknown runtime 'mlc'; the runtimes are: llamacpp"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n[runtimes]\nname = \"openai\"\n" + models,
       "s.toml: runtimes: expected [[runtimes]] tables, one per runtime"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\nruntimes = []\n" + models,
       "s.toml: runtimes: an empty list; give at least one [[runtimes]] or leave it out"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n[[runtimes]]\nname = \"llamacpp\"\n"
       "settings = { threads = \"two\" }\n" + models,
       "s.toml: runtimes[1].settings.threads: expected an integer"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n[[runtimes]]\nname = \"llamacpp\"\n"
       "settings = { thread = 2 }\n" + models,
       "s.toml: runtimes[1].settings.thread: runtime llamacpp does not take the setting thread"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n[[runtimes]]\nname = \"llamacpp\"\n"
       "settings = { threads = [] }\n" + models,
       "s.toml: runtimes[1].settings.threads: an empty list"},
      {"name = \"x\"\nbenchmarks = [\"b\", \"b\"]\n" + models, "s.toml: benchmarks[2]: b is listed twice"},
      {"name = \"x\"\nbenchmarks = [\"b\"]\n[harness]\nmin_reps = 9\nmax_reps = 3\n" + models,
       "s.toml: harness.min_reps: 9 is above max_reps 3"},
      {"name = \"x\"\nbenchmarks = [\"b\"\n", "s.toml: not valid TOML at line"},
  };
  for (const auto& [text, message] : cases) {
    auto suite = Parse(text);
    ASSERT_FALSE(suite.ok()) << text;
    EXPECT_EQ(suite.error().message.rfind(message, 0), 0u)
        << "got: " << suite.error().message << "\nwant prefix: " << message;
    EXPECT_EQ(suite.error().message.find('\n'), std::string::npos) << suite.error().message;
  }
}

TEST_F(SuiteFile, HugeMatrixIsRefusedNamingItsFactors) {
  std::string threads;
  for (int t = 1; t <= 64; ++t) threads += (t > 1 ? ", " : "") + std::to_string(t);
  auto suite = Parse("name = \"x\"\nbenchmarks = [\"a\", \"b\", \"c\", \"d\"]\n"
                     "[[runtimes]]\nname = \"llamacpp\"\nsettings = { threads = [" + threads +
                     "], n_batch = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], n_ubatch = [1, 2, 3] }\n" +
                     kModels);
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  auto cells = ExpandSuite(*suite);
  ASSERT_FALSE(cells.ok());
  EXPECT_EQ(cells.error().message,
            "s.toml: the matrix has 25344 cells (3 models x 4 benchmarks x 11 n_batch x 3 n_ubatch "
            "x 64 threads), more than 10000; shorten the lists or use mode = \"one-factor\"");
}

TEST_F(SuiteFile, CpusIsASettingLikeTheOthers) {
  const auto cells = Expand(std::string(R"(
name = "pin"
benchmarks = ["decode_throughput_256_100"]
[[runtimes]]
name = "llamacpp"
settings = { threads = 1, cpus = ["0", "1"] }
)") + kModels);
  ASSERT_EQ(cells.size(), 6u);
  EXPECT_EQ(cells[0].settings["cpus"], "0");
  EXPECT_EQ(cells[1].settings["cpus"], "1");
  auto bad = Parse(std::string("name = \"x\"\nbenchmarks = [\"b\"]\n[[runtimes]]\nname = "
                               "\"llamacpp\"\nsettings = { cpus = \"3-1\" }\n") + kModels);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("runtimes[1].settings.cpus: CPU list '3-1'"),
            std::string::npos) << bad.error().message;
}

// big.LITTLE: each thread count with its own cores (cpus as a table keyed by the threads values)
// is one dimension, not threads x cpus.
TEST_F(SuiteFile, CpusTableGivesEachThreadsValueItsCpuList) {
  const std::string runtime = R"(
[[runtimes]]
name = "llamacpp"
settings = { threads = [1, 2, 4], cpus = { 1 = "4", 2 = "4-5", 4 = "4-7" }, mmap = false }
)";
  auto suite = Parse("name = \"bl\"\nbenchmarks = [\"prefill_throughput_256\", "
                     "\"decode_throughput_256_100\"]\n" + runtime + kModels);
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  const SuiteRuntime& rt = suite->runtimes[0];
  EXPECT_EQ(rt.cpus_by_threads, (std::map<int64_t, std::string>{{1, "4"}, {2, "4-5"}, {4, "4-7"}}));
  for (const auto& [name, values] : rt.settings) EXPECT_NE(name, "cpus");

  const auto cells = Expand("name = \"bl\"\nbenchmarks = [\"prefill_throughput_256\", "
                            "\"decode_throughput_256_100\"]\n" + runtime + kModels);
  // 3 models x 3 threads x 2 benchmarks: cpus adds no dimension.
  ASSERT_EQ(cells.size(), 3u * 3 * 2);
  EXPECT_EQ(cells[0].settings, (nlohmann::json{{"threads", 1}, {"cpus", "4"}, {"mmap", false}}));
  EXPECT_EQ(cells[1].settings, cells[0].settings);
  EXPECT_EQ(cells[2].settings, (nlohmann::json{{"threads", 2}, {"cpus", "4-5"}, {"mmap", false}}));
  EXPECT_EQ(cells[4].settings, (nlohmann::json{{"threads", 4}, {"cpus", "4-7"}, {"mmap", false}}));
  EXPECT_EQ(fs::path(cells[6].model_path).filename(), "a-Q8_0.gguf");
  EXPECT_EQ(cells[6].settings["cpus"], "4");

  // A thread count above its CPU list's size is kept, as threads = 4, cpus = "4" is: threads
  // sharing cores is a configuration one may want to measure.
  auto shared = Parse(std::string("name = \"x\"\nbenchmarks = [\"b\"]\n[[runtimes]]\nname = "
                                  "\"llamacpp\"\nsettings = { threads = [2, 4], cpus = { 2 = "
                                  "\"4\", 4 = \"4-5\" } }\n") + kModels);
  EXPECT_TRUE(shared.ok()) << shared.error().message;
}

TEST_F(SuiteFile, OneFactorVariesCpusWithThreads) {
  const std::string head = R"(
name = "bl"
mode = "one-factor"
benchmarks = ["decode_throughput_256_100"]
[[runtimes]]
name = "llamacpp"
settings = { threads = [1, 2, 4], cpus = { 1 = "4", 2 = "4-5", 4 = "4-7" }, flash_attn = ["auto", "on"] }
)";
  const auto cells = Expand(head + "[baseline]\nmodel = \"a-Q8_0.gguf\"\nsettings = { threads = 2 }\n" +
                            kModels);
  // baseline + 2 other models + 2 other thread counts + 1 other flash_attn; no cpus step.
  ASSERT_EQ(cells.size(), 6u);
  std::map<std::string, const SuiteCell*> by_factor;
  for (const auto& c : cells) by_factor[c.factor] = &c;
  ASSERT_EQ(by_factor.size(), 6u);
  EXPECT_EQ(by_factor.at("baseline")->settings,
            (nlohmann::json{{"threads", 2}, {"cpus", "4-5"}, {"flash_attn", "auto"}}));
  EXPECT_EQ(by_factor.at("model=a-F32.gguf")->settings["cpus"], "4-5");
  EXPECT_EQ(by_factor.at("threads=1")->settings,
            (nlohmann::json{{"threads", 1}, {"cpus", "4"}, {"flash_attn", "auto"}}));
  EXPECT_EQ(by_factor.at("threads=4")->settings,
            (nlohmann::json{{"threads", 4}, {"cpus", "4-7"}, {"flash_attn", "auto"}}));
  EXPECT_EQ(by_factor.at("flash_attn=\"on\"")->settings,
            (nlohmann::json{{"threads", 2}, {"cpus", "4-5"}, {"flash_attn", "on"}}));

  // Without a baseline: the first threads value, with its CPU list.
  const auto first = Expand(head + kModels);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first[0].factor, "baseline");
  EXPECT_EQ(first[0].settings["threads"], 1);
  EXPECT_EQ(first[0].settings["cpus"], "4");

  // The baseline picks its CPU list through threads: no cpus of its own, no uncovered threads.
  const std::pair<std::string, std::string> bad[] = {
      {"settings = { cpus = \"4\" }",
       "s.toml: baseline.settings.cpus: runtimes[1].settings.cpus gives a CPU list per threads "
       "value; set the baseline's threads instead"},
      {"settings = { threads = 3 }",
       "s.toml: baseline.settings.threads: no CPU list for threads = 3 in "
       "runtimes[1].settings.cpus; add 3 = \"...\" there"},
  };
  for (const auto& [baseline, message] : bad) {
    auto suite = Parse(head + "[baseline]\n" + baseline + "\n" + kModels);
    ASSERT_TRUE(suite.ok()) << suite.error().message;
    auto expanded = ExpandSuite(*suite);
    ASSERT_FALSE(expanded.ok()) << baseline;
    EXPECT_EQ(expanded.error().message, message);
  }
}

TEST_F(SuiteFile, CpusTableIsCheckedWhereItIsWritten) {
  const auto suite_with = [&](const std::string& settings) {
    return "name = \"x\"\nbenchmarks = [\"b\"]\n[[runtimes]]\nname = \"llamacpp\"\nsettings = " +
           settings + "\n" + kModels;
  };
  const std::pair<std::string, std::string> cases[] = {
      {"{ threads = [1, 2, 6], cpus = { 1 = \"4\", 2 = \"4-5\" } }",
       "s.toml: runtimes[1].settings.cpus: no CPU list for threads = 6; add 6 = \"...\""},
      {"{ threads = [1, 2], cpus = { 1 = \"4\", 2 = \"4-5\", 6 = \"2-7\" } }",
       "s.toml: runtimes[1].settings.cpus.6: 6 is not one of the threads values (1, 2); remove "
       "it or add 6 to threads"},
      {"{ threads = [1], cpus = { 1 = \"4\", big = \"4-7\" } }",
       "s.toml: runtimes[1].settings.cpus.big: a key must be a threads value (a positive "
       "integer), e.g. 4 = \"4-7\""},
      {"{ threads = [1], cpus = { 0 = \"0\", 1 = \"4\" } }",
       "s.toml: runtimes[1].settings.cpus.0: a key must be a threads value"},
      {"{ threads = [1], cpus = { 01 = \"4\" } }",
       "s.toml: runtimes[1].settings.cpus.01: a key must be a threads value"},
      {"{ threads = [1, 2], cpus = { 1 = \"4\", 2 = \"5-4\" } }",
       "s.toml: runtimes[1].settings.cpus.2: CPU list '5-4': range 5-4 ends below its start"},
      {"{ threads = [1], cpus = { 1 = 4 } }",
       "s.toml: runtimes[1].settings.cpus.1: expected a CPU list such as \"0-3\", not 4"},
      {"{ threads = [1], cpus = { 1 = [\"4\"] } }",
       "s.toml: runtimes[1].settings.cpus.1: expected a CPU list such as \"4-7\""},
      {"{ cpus = { 1 = \"4\", 2 = \"4-5\" } }",
       "s.toml: runtimes[1].settings.cpus: a table of CPU lists by threads value needs threads; "
       "add threads = [...] with its values as the keys, or give cpus one CPU list"},
  };
  for (const auto& [settings, message] : cases) {
    auto suite = Parse(suite_with(settings));
    ASSERT_FALSE(suite.ok()) << settings;
    EXPECT_EQ(suite.error().message.rfind(message, 0), 0u)
        << "got: " << suite.error().message << "\nwant prefix: " << message;
    EXPECT_EQ(suite.error().message.find('\n'), std::string::npos) << suite.error().message;
  }
}

TEST_F(SuiteFile, ReferencesAndContextOverflow) {
  auto suite = Parse(std::string("name = \"x\"\nbenchmarks = [\"kl_divergence_512\"]\n"
                                 "allow_context_overflow = true\n"
                                 "[[models]]\npath = \"a-Q4_0.gguf\"\nreference = \"a-F32.gguf\"\n"));
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  EXPECT_TRUE(suite->allow_context_overflow);
  ASSERT_EQ(suite->references.size(), 1u);
  EXPECT_EQ(suite->references.at(dir_ + "/a-Q4_0.gguf"), dir_ + "/a-F32.gguf");
}

TEST_F(SuiteFile, BaselineModelMustBeListed) {
  auto suite = Parse(std::string("name = \"x\"\nmode = \"one-factor\"\nbenchmarks = [\"b\"]\n"
                                 "[baseline]\nmodel = \"other.gguf\"\n") + kModels);
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  auto cells = ExpandSuite(*suite);
  ASSERT_FALSE(cells.ok());
  EXPECT_NE(cells.error().message.find("baseline.model"), std::string::npos);
}

TEST_F(SuiteFile, MissingSuiteFileIsOneLine) {
  auto suite = ParseSuiteFile(dir_ + "/absent.toml");
  ASSERT_FALSE(suite.ok());
  EXPECT_NE(suite.error().message.find("no such suite file"), std::string::npos);
}

// [[devices]]: every cell on every device in turn (interleaved), URIs canonical.
TEST_F(SuiteFile, DevicesRunEveryCellOnEachDeviceInTurn) {
  const auto cells = Expand(std::string(R"(
name = "two devices"
benchmarks = ["prefill_throughput_256", "decode_throughput_256_100"]
[[devices]]
uri = "local"
[[devices]]
uri = "ssh://pi@board:2222"
)") + kModels);
  ASSERT_EQ(cells.size(), 3u * 2 * 2);
  EXPECT_EQ(cells[0].device_uri, "local");
  EXPECT_EQ(cells[1].device_uri, "ssh://pi@board:2222");
  EXPECT_EQ(cells[0].benchmark_id, cells[1].benchmark_id);
  EXPECT_EQ(cells[0].model_path, cells[1].model_path);
  EXPECT_EQ(cells[1].device, 1u);
  EXPECT_EQ(cells[1].runtime_label, "llamacpp on ssh://pi@board:2222");
  EXPECT_EQ(cells[3].index, 4);
  const auto one = Expand(std::string("name = \"x\"\nbenchmarks = [\"prefill_throughput_256\"]\n") + kModels);
  ASSERT_EQ(one.size(), 3u);
  EXPECT_EQ(one[0].device_uri, "local");
}

// A model already on the devices: kept as written (checked on each device when its cells run).
TEST_F(SuiteFile, ModelsOnTheDeviceAreKeptAsWritten) {
  auto suite = Parse(std::string(R"(
name = "pushed"
benchmarks = ["prefill_throughput_256"]
[[devices]]
uri = "adb://R58M12345"
[[models]]
path = "device:/data/local/tmp/m-Q4_0.gguf"
)") + kModels);
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  EXPECT_EQ(suite->models[0], "device:/data/local/tmp/m-Q4_0.gguf");
  auto relative = Parse(
      "name = \"x\"\nbenchmarks = [\"prefill_throughput_256\"]\n[[models]]\npath = \"device:m.gguf\"\n");
  ASSERT_FALSE(relative.ok());
  EXPECT_NE(relative.error().message.find("models[1].path: device:m.gguf is not an absolute path"),
            std::string::npos)
      << relative.error().message;
}

TEST_F(SuiteFile, DevicesAreCheckedWhereTheyAreWritten) {
  const std::pair<const char*, const char*> bad[] = {
      {"[[devices]]\nuri = \"board\"\n", "s.toml: devices[1].uri: device 'board': not a device address"},
      {"[[devices]]\nuri = \"adb://X\"\n[[devices]]\nuri = \"adb://X\"\n",
       "devices[2].uri: adb://X is listed twice"},
      {"[[devices]]\nhost = \"b\"\n", "devices[1].host: unknown key; expected one of uri"},
      {"devices = []\n", "devices: expected [[devices]] tables"},
  };
  for (const auto& [toml, expected] : bad) {
    auto suite = Parse(std::string("name = \"x\"\nbenchmarks = [\"prefill_throughput_256\"]\n") +
                       toml + kModels);
    ASSERT_FALSE(suite.ok()) << toml;
    EXPECT_NE(suite.error().message.find(expected), std::string::npos) << suite.error().message;
  }
}

}  // namespace
}  // namespace pipette
