// llamacpp-stock, low level: the pinned build's real llama-bench on a real tiny model
// (stories260K converted to GGUF by the build's own converter).
#include "runtimes/llamacpp_stock/llama_bench.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "platform/cpu_affinity.h"
#include "platform/process.h"
#include "runtimes/llamacpp_stock/stock_binaries.h"
#include "tests/support/test_data.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const std::string kPrefix = PIPETTE_LLAMA_PREFIX;
const std::string kBinDir = kPrefix + "/bin";
const std::string kStoriesDir = pipette::testing::DataDir() + "/models/stories260K";

const std::string& WorkDir() {
  static const std::string dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "pipette-llama-bench-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    return tmpl;
  }();
  return dir;
}

// Removes WorkDir() after the tests.
class RemoveWorkDir : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(WorkDir(), ec);
  }
};
[[maybe_unused]] ::testing::Environment* const kRemoveWorkDir =
    ::testing::AddGlobalTestEnvironment(new RemoveWorkDir);

// stories260K as an F32 GGUF (made once), or "" when ../shared is absent.
std::string Stories260K() {
  static std::once_flag once;
  static std::string path;
  std::call_once(once, [] {
    if (!fs::exists(kStoriesDir + "/stories260K.bin")) return;
    const std::string out = WorkDir() + "/stories260K-F32.gguf";
    std::string log;
    auto exit = RunTool({kBinDir + "/llama-convert-llama2c-to-ggml", "--copy-vocab-from-model",
                         kStoriesDir + "/tok512.bin", "--llama2c-model",
                         kStoriesDir + "/stories260K.bin", "--llama2c-output-model", out},
                        &log);
    ASSERT_TRUE(exit.ok()) << exit.error().message;
    ASSERT_TRUE(exit->exited && exit->code == 0) << log;
    path = out;
  });
  return path;
}

std::string PinnedCommit() {
  std::ifstream in(kPrefix + "/COMMIT");
  std::string commit;
  std::getline(in, commit);
  return commit;
}

bool OneLine(const std::string& s) { return s.find('\n') == std::string::npos; }

class LlamaBenchRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = Stories260K();
    if (model_.empty())
      GTEST_SKIP() << pipette::testing::NeedData("stories260K");
    auto b = FindStockBinaries(kBinDir);
    ASSERT_TRUE(b.ok()) << b.error().message;
    bins_ = *b;
  }

  static pipette::LlamaBenchTest Prefill64() {
    pipette::LlamaBenchTest t;
    t.n_prompt = 64;
    t.threads = 1;
    t.repetitions = 3;
    return t;
  }

  std::string model_;
  StockBinaries bins_;
};

TEST(StockBinaries, FindsThePinnedBuild) {
  auto b = FindStockBinaries(kBinDir);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->llama_bench, kBinDir + "/llama-bench");
  EXPECT_EQ(b->llama_server, kBinDir + "/llama-server");
  EXPECT_TRUE(b->has_server());
  const LlamaBenchSyntax& s = b->bench_syntax;
  EXPECT_TRUE(s.load_mode && s.mmap && s.flash_attn && s.flash_attn_auto && s.depth &&
              s.no_warmup && s.poll && s.prompt_gen);
  // The build folder itself (holding bin/) is accepted too.
  auto from_prefix = FindStockBinaries(kPrefix + "/");
  ASSERT_TRUE(from_prefix.ok()) << from_prefix.error().message;
  EXPECT_EQ(from_prefix->bin_dir, kBinDir);
}

TEST(StockBinaries, MissingOrEmptyFolderSaysWhatItMustBe) {
  const std::string missing = WorkDir() + "/no-such-build";
  auto b = FindStockBinaries(missing);
  ASSERT_FALSE(b.ok());
  const std::string& m = b.error().message;
  EXPECT_TRUE(OneLine(m)) << m;
  EXPECT_NE(m.find(missing), std::string::npos) << m;
  EXPECT_NE(m.find("does not exist"), std::string::npos) << m;
  EXPECT_NE(m.find("the runtime directory"), std::string::npos) << m;
  EXPECT_NE(m.find("llama-bench and llama-server"), std::string::npos) << m;
  EXPECT_NE(m.find("cmake --build build --target llama-bench llama-server"), std::string::npos);
  EXPECT_EQ(m.find("--runtime"), std::string::npos) << m;

  const std::string empty = WorkDir() + "/empty-build";
  fs::create_directories(empty + "/bin");
  b = FindStockBinaries(empty);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(OneLine(b.error().message));
  EXPECT_NE(b.error().message.find(empty + " has no llama-bench"), std::string::npos)
      << b.error().message;
}

TEST(StockBinaries, ServerMayBeMissing) {
  const std::string dir = WorkDir() + "/bench-only";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_symlink(kBinDir + "/llama-bench", dir + "/llama-bench");
  auto b = FindStockBinaries(dir);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_FALSE(b->has_server());
  auto build = ReadStockBuild(*b);
  ASSERT_FALSE(build.ok());
  EXPECT_NE(build.error().message.find("neither llama-server nor llama-cli"), std::string::npos)
      << build.error().message;
}

TEST(StockBinaries, NotLlamaBench) {
  const std::string dir = WorkDir() + "/impostor";
  fs::create_directories(dir);
  {
    std::ofstream f(dir + "/llama-bench");
    f << "#!/bin/sh\necho hello\n";
  }
  fs::permissions(dir + "/llama-bench", fs::perms::owner_all);
  auto b = FindStockBinaries(dir);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(OneLine(b.error().message));
  EXPECT_NE(b.error().message.find("does not answer --help like llama-bench"), std::string::npos)
      << b.error().message;
}

TEST(StockBinaries, ReadsTheBuildIdentity) {
  auto b = FindStockBinaries(kBinDir);
  ASSERT_TRUE(b.ok()) << b.error().message;
  auto build = ReadStockBuild(*b);
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_EQ(build->commit, "80fb11a");
  EXPECT_EQ(PinnedCommit().rfind(build->commit, 0), 0u) << PinnedCommit();
  EXPECT_EQ(build->version, "0.4.0");
  EXPECT_GE(build->build_number, 1);
  EXPECT_FALSE(build->compiler.empty());
  EXPECT_FALSE(build->target.empty());
}

TEST(StockBinaries, ParsesBothVersionForms) {
  auto newer = ParseStockVersion(
      "load_backend: loaded CPU backend\nversion: 0.4.0 (build 1, commit 80fb11a)\n"
      "built with GNU 12.2.0 for Linux x86_64\n");
  ASSERT_TRUE(newer.ok()) << newer.error().message;
  EXPECT_EQ(newer->version, "0.4.0");
  EXPECT_EQ(newer->build_number, 1);
  EXPECT_EQ(newer->commit, "80fb11a");
  EXPECT_EQ(newer->compiler, "GNU 12.2.0");
  EXPECT_EQ(newer->target, "Linux x86_64");

  auto older = ParseStockVersion(
      "version: 4589 (1a2b3c4)\nbuilt with cc (Debian 12.2.0-14) 12.2.0 for x86_64-linux-gnu\n");
  ASSERT_TRUE(older.ok()) << older.error().message;
  EXPECT_EQ(older->version, "");
  EXPECT_EQ(older->build_number, 4589);
  EXPECT_EQ(older->commit, "1a2b3c4");
  EXPECT_EQ(older->compiler, "cc (Debian 12.2.0-14) 12.2.0");
  EXPECT_EQ(older->target, "x86_64-linux-gnu");

  EXPECT_FALSE(ParseStockVersion("usage: llama-bench [options]\n").ok());
}

// Help text of an older llama-bench (spring 2025): -mmp, -fa 0|1, no -d, no --no-warmup.
const char kOlderHelp[] =
    "usage: llama-bench [options]\n\noptions:\n  -h, --help\n"
    "  -o, --output <csv|json|jsonl|md|sql>      (default: md)\n\ntest parameters:\n"
    "  -m, --model <filename>                    (default: models/7B/ggml-model-q4_0.gguf)\n"
    "  -p, --n-prompt <n>                        (default: 512)\n"
    "  -n, --n-gen <n>                           (default: 128)\n"
    "  -pg <pp,tg>                               (default: )\n"
    "  --poll <0...100>                          (default: 50)\n"
    "  -ngl, --n-gpu-layers <n>                  (default: 99)\n"
    "  -fa, --flash-attn <0|1>                   (default: 0)\n"
    "  -mmp, --mmap <0|1>                        (default: 1)\n";

TEST(LlamaBenchCommandTest, OlderSyntax) {
  auto syntax = ParseLlamaBenchHelp(kOlderHelp);
  ASSERT_TRUE(syntax.ok()) << syntax.error().message;
  EXPECT_FALSE(syntax->load_mode);
  EXPECT_TRUE(syntax->mmap);
  EXPECT_TRUE(syntax->flash_attn);
  EXPECT_FALSE(syntax->flash_attn_auto);
  EXPECT_FALSE(syntax->depth);
  EXPECT_FALSE(syntax->no_warmup);
  EXPECT_TRUE(syntax->poll);
  EXPECT_TRUE(syntax->prompt_gen);
  EXPECT_FALSE(ParseLlamaBenchHelp("usage: llama-server [options]\n").ok());

  StockBinaries old;
  old.bin_dir = "/old/bin";
  old.llama_bench = "/old/bin/llama-bench";
  old.bench_syntax = *syntax;
  pipette::LlamaBenchTest t;
  t.n_gen = 8;
  t.flash_attn = "on";
  auto argv = LlamaBenchCommand(old, "m.gguf", t);
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  EXPECT_EQ(*argv, (std::vector<std::string>{"/old/bin/llama-bench",
                                             "-m",
                                             "m.gguf",
                                             "-p",
                                             "0",
                                             "-n",
                                             "8",
                                             "-b",
                                             "2048",
                                             "-ub",
                                             "512",
                                             "-ctk",
                                             "f16",
                                             "-ctv",
                                             "f16",
                                             "-fa",
                                             "1",
                                             "-mmp",
                                             "0",
                                             "--poll",
                                             "50",
                                             "-r",
                                             "5",
                                             "-o",
                                             "json"}));
  t.n_depth = 8;
  auto no_depth = LlamaBenchCommand(old, "m.gguf", t);
  ASSERT_FALSE(no_depth.ok());
  EXPECT_EQ(no_depth.error().stage, "start");
  EXPECT_NE(no_depth.error().message.find("no -d option"), std::string::npos);
}

TEST(LlamaBenchCommandTest, PinnedSyntax) {
  StockBinaries b;
  b.bin_dir = "/b";
  b.llama_bench = "/b/llama-bench";
  pipette::LlamaBenchTest t;
  t.n_prompt = 64;
  t.n_gen = 1;
  t.threads = 2;
  t.repetitions = 1;
  t.warmup = false;
  t.cpus = "0";
  auto argv = LlamaBenchCommand(b, "/m.gguf", t, "/usr/bin/taskset");
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  EXPECT_EQ(*argv, (std::vector<std::string>{"/usr/bin/taskset",
                                             "-c",
                                             "0",
                                             "/b/llama-bench",
                                             "-m",
                                             "/m.gguf",
                                             "-p",
                                             "0",
                                             "-n",
                                             "0",
                                             "-pg",
                                             "64,1",
                                             "-t",
                                             "2",
                                             "-b",
                                             "2048",
                                             "-ub",
                                             "512",
                                             "-ctk",
                                             "f16",
                                             "-ctv",
                                             "f16",
                                             "-lm",
                                             "none",
                                             "--poll",
                                             "50",
                                             "-r",
                                             "1",
                                             "--no-warmup",
                                             "-o",
                                             "json"}));

  t = {};
  EXPECT_NE(LlamaBenchCommand(b, "/m.gguf", t).error().message.find("n_prompt or n_gen"),
            std::string::npos);
  t.n_prompt = 8;
  t.flash_attn = "yes";
  EXPECT_NE(LlamaBenchCommand(b, "/m.gguf", t).error().message.find("auto, on or off"),
            std::string::npos);
  t.flash_attn = "auto";
  EXPECT_NE(LlamaBenchCommand(b, "/a,b.gguf", t).error().message.find("comma"), std::string::npos);
  t.cpus = "4095";
  EXPECT_NE(LlamaBenchCommand(b, "/m.gguf", t).error().message.find("cpus"), std::string::npos);
}

TEST(ParseLlamaBenchOutputTest, Refusals) {
  pipette::LlamaBenchTest t;
  t.n_prompt = 8;
  t.repetitions = 2;
  const auto error = [&t](const std::string& out) {
    auto r = ParseLlamaBenchOutput(out, t, "prefill");
    EXPECT_FALSE(r.ok());
    if (r.ok()) return std::string();
    EXPECT_EQ(r.error().stage, "prefill");
    EXPECT_TRUE(OneLine(r.error().message)) << r.error().message;
    return r.error().message;
  };
  EXPECT_NE(error("| model | size |\n").find("is not JSON"), std::string::npos);
  EXPECT_NE(error("[]").find("0 entries"), std::string::npos);
  EXPECT_NE(error(R"([{"n_prompt": 8, "n_gen": 0, "samples_ns": [1]}])").find("1 samples for 2"),
            std::string::npos);
  EXPECT_NE(error(R"([{"n_prompt": 16, "n_gen": 0, "samples_ns": [1, 2]}])").find("another test"),
            std::string::npos);
  EXPECT_NE(error(R"([{"n_prompt": 8, "n_gen": 0, "samples_ns": [1, 0]}])").find("positive"),
            std::string::npos);
  auto ok = ParseLlamaBenchOutput(
      R"([{"build_commit": "abc1234", "build_number": 7000, "backends": "CPU", "n_prompt": 8,
           "n_gen": 0, "samples_ns": [1000, 2000]}])",
      t, "prefill");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->samples_ns, (std::vector<double>{1000, 2000}));
  EXPECT_EQ(ok->build.commit, "abc1234");
  EXPECT_EQ(ok->build.build_number, 7000);
}

TEST_F(LlamaBenchRunTest, Prefill) {
  int pid = 0;
  const std::string log = WorkDir() + "/prefill.log";
  auto run = RunLlamaBench(bins_, model_, Prefill64(), "prefill", log, milliseconds(60000),
                           [&pid](int p) { pid = p; });
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_GT(pid, 0);
  ASSERT_EQ(run->samples_ns.size(), 3u);
  for (double s : run->samples_ns) EXPECT_GT(s, 0);
  EXPECT_EQ(run->build.commit, "80fb11a");
  EXPECT_EQ(run->backends, "CPU");
  EXPECT_EQ(run->test["n_prompt"], 64);
  EXPECT_EQ(run->test["n_gen"], 0);
  EXPECT_EQ(run->test["n_threads"], 1);
  EXPECT_EQ(run->test["load_mode"], "none");
  EXPECT_TRUE(fs::exists(log));
}

TEST_F(LlamaBenchRunTest, DecodeAtDepth) {
  pipette::LlamaBenchTest t;
  t.n_gen = 16;
  t.n_depth = 64;
  t.threads = 1;
  t.repetitions = 3;
  auto run = RunLlamaBench(bins_, model_, t, "decode", "", milliseconds(60000));
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_EQ(run->samples_ns.size(), 3u);
  for (double s : run->samples_ns) EXPECT_GT(s, 0);
  EXPECT_EQ(run->build.commit, "80fb11a");
  EXPECT_EQ(run->test["n_prompt"], 0);
  EXPECT_EQ(run->test["n_gen"], 16);
  EXPECT_EQ(run->test["n_depth"], 64);
}

TEST_F(LlamaBenchRunTest, MemoryShapeOnOneCpu) {
  pipette::LlamaBenchTest t;
  t.n_prompt = 64;
  t.n_gen = 1;
  t.threads = 1;
  t.repetitions = 1;
  t.warmup = false;
  t.cpus = std::to_string(AllowedCpus().front());
  auto run = RunLlamaBench(bins_, model_, t, "memory", "", milliseconds(60000));
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_EQ(run->samples_ns.size(), 1u);
  EXPECT_EQ(run->test["n_prompt"], 64);
  EXPECT_EQ(run->test["n_gen"], 1);
  EXPECT_NE(run->argv.front().find("taskset"), std::string::npos);
  EXPECT_EQ(run->argv[2], t.cpus);
}

TEST_F(LlamaBenchRunTest, NotAGguf) {
  const std::string bogus = WorkDir() + "/not-a-model.gguf";
  std::ofstream(bogus) << "this is text, not a GGUF file\n";
  auto run = RunLlamaBench(bins_, bogus, Prefill64(), "prefill", "", milliseconds(60000));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().stage, "load");
  EXPECT_TRUE(OneLine(run.error().message)) << run.error().message;
  EXPECT_NE(run.error().message.find("could not load the model " + bogus), std::string::npos)
      << run.error().message;

  run = RunLlamaBench(bins_, WorkDir() + "/absent.gguf", Prefill64(), "prefill", "",
                      milliseconds(60000));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().stage, "load");
  EXPECT_NE(run.error().message.find("does not exist"), std::string::npos);
}

TEST_F(LlamaBenchRunTest, RefusedValueNamesTheSetting) {
  pipette::LlamaBenchTest t = Prefill64();
  t.type_k = "q9_9";
  auto run = RunLlamaBench(bins_, model_, t, "prefill", "", milliseconds(60000));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().stage, "start");
  EXPECT_TRUE(OneLine(run.error().message)) << run.error().message;
  EXPECT_NE(run.error().message.find("refused the setting type_k = q9_9 (exit code 1"),
            std::string::npos)
      << run.error().message;
}

TEST_F(LlamaBenchRunTest, TimeoutKills) {
  pipette::LlamaBenchTest t = Prefill64();
  t.repetitions = 100000;
  int pid = 0;
  const std::string log = WorkDir() + "/timeout.log";
  auto run =
      RunLlamaBench(bins_, model_, t, "prefill", log, milliseconds(5), [&pid](int p) { pid = p; });
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().stage, "prefill");
  EXPECT_TRUE(OneLine(run.error().message)) << run.error().message;
  EXPECT_NE(run.error().message.find("did not finish the prefill test within 5 ms"),
            std::string::npos)
      << run.error().message;
  EXPECT_NE(run.error().message.find("killed it"), std::string::npos);
  EXPECT_NE(run.error().message.find(log), std::string::npos);
  ASSERT_GT(pid, 0);
  EXPECT_NE(kill(pid, 0), 0);  // reaped: no such process (or a recycled pid, vanishingly rare)
}

TEST_F(LlamaBenchRunTest, KilledSaysHow) {
  auto run = RunLlamaBench(bins_, model_, Prefill64(), "prefill", "", milliseconds(60000),
                           [](int pid) { kill(pid, SIGSEGV); });
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().stage, "prefill");
  EXPECT_TRUE(OneLine(run.error().message)) << run.error().message;
  EXPECT_NE(run.error().message.find("killed by signal 11 (SIGSEGV) during the prefill test"),
            std::string::npos)
      << run.error().message;
}

}  // namespace
}  // namespace pipette
