// The llamacpp-stock runtime: the pinned build's real llama-bench and llama-server on a real tiny
// model (stories260K, converted to GGUF with pipette's importer, trained context 512).
#include "runtimes/llamacpp_stock/stock_runtime.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "models/llama_tools.h"
#include "platform/cpu_affinity.h"
#include "platform/process.h"
#include "tests/support/test_data.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kPrefix = PIPETTE_LLAMA_PREFIX;
const std::string kBinDir = kPrefix + "/bin";
const std::string kStoriesDir = pipette::testing::DataDir() + "/models/stories260K";

const std::string& WorkDir() {
  static const std::string dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "pipette-stock-runtime-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    return tmpl;
  }();
  return dir;
}

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
    const Status s =
        ImportLlama2c(kStoriesDir + "/stories260K.bin", kStoriesDir + "/tok512.bin", out);
    ASSERT_TRUE(s.ok()) << s.error().message;
    path = out;
  });
  return path;
}

bool OneLine(const std::string& s) { return s.find('\n') == std::string::npos; }

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The value after `option` in `argv`, or "" when absent.
std::string ValueOf(const std::vector<std::string>& argv, const std::string& option) {
  const auto it = std::find(argv.begin(), argv.end(), option);
  return it != argv.end() && it + 1 != argv.end() ? *(it + 1) : "";
}

std::shared_ptr<Runtime> PinnedRuntime() {
  static std::shared_ptr<Runtime> runtime = [] {
    auto r = MakeStockRuntime(kBinDir);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : nullptr;
  }();
  return runtime;
}

ResolveContext Cell(const std::string& benchmark_id, BenchmarkType type, int p, int d) {
  ResolveContext c;
  c.benchmark.id = benchmark_id;
  c.benchmark.type = type;
  c.benchmark.prefill_tokens = p;
  c.benchmark.decode_tokens = d;
  c.context_tokens = p + d;
  c.physical_cores = 3;
  return c;
}

// ---- Identity, settings, capabilities ---------------------------------------------------------

TEST(StockRuntime, IdentityIsTheBinariesOwn) {
  auto rt = PinnedRuntime();
  ASSERT_TRUE(rt);
  const RuntimeIdentity& id = rt->Identity();
  EXPECT_EQ(id.name, "llamacpp-stock");
  EXPECT_EQ(id.commit, "80fb11a");
  EXPECT_EQ(id.version, "0.4.0 (build 1)");
  EXPECT_EQ(id.build["bin_dir"], kBinDir);
  EXPECT_EQ(id.build["llama_bench"], kBinDir + "/llama-bench");
  EXPECT_EQ(id.build["llama_server"], kBinDir + "/llama-server");
  EXPECT_EQ(id.build["build_number"], 1);
  EXPECT_FALSE(id.build["compiler"].get<std::string>().empty());
  EXPECT_FALSE(id.build["target"].get<std::string>().empty());

  const RuntimeCapabilities c = rt->Capabilities();
  const auto has = [&c](BenchmarkType t) {
    return std::find(c.benchmarks.begin(), c.benchmarks.end(), t) != c.benchmarks.end();
  };
  EXPECT_TRUE(has(BenchmarkType::kPrefill) && has(BenchmarkType::kDecode) &&
              has(BenchmarkType::kMemory) && has(BenchmarkType::kEndToEnd));
  EXPECT_FALSE(has(BenchmarkType::kKlDivergence) || has(BenchmarkType::kSoak));
  EXPECT_FALSE(c.per_token_timing);
  EXPECT_TRUE(c.process_memory && c.token_input && c.own_tokens);
}

TEST(StockRuntime, SettingsAreLlamacppsWithoutContextSize) {
  std::vector<std::string> names;
  for (const SettingDef& d : StockSettingDefs()) names.push_back(d.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"threads", "n_gpu_layers", "mmap", "flash_attn", "n_batch",
                                      "n_ubatch", "type_k", "type_v", "poll", "cpus"}));
  const auto defs = StockSettingDefs();
  const SettingDef* ngl = FindSetting(defs, "n_gpu_layers");
  ASSERT_NE(ngl, nullptr);
  EXPECT_EQ(ngl->min, -1);
  EXPECT_EQ(ngl->default_value, -1);
  EXPECT_NE(ngl->resolution.find("recorded as -1"), std::string::npos) << ngl->resolution;
}

TEST(StockRuntime, ResolveFillsThreadsAndKeepsCpusCanonical) {
  auto rt = PinnedRuntime();
  ASSERT_TRUE(rt);
  const std::vector<int> allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  std::string given_cpus;  // "0,1" spelled out, to come back as "0-1"
  for (int cpu : allowed) {
    given_cpus.append(given_cpus.empty() ? "" : ",").append(std::to_string(cpu));
  }
  auto s = rt->ResolveSettings({{"cpus", given_cpus}, {"n_batch", 256}},
                               Cell("prefill_throughput_64", BenchmarkType::kPrefill, 64, 0));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ((*s)["threads"], 3);
  EXPECT_EQ((*s)["n_gpu_layers"], -1);
  EXPECT_EQ((*s)["mmap"], false);
  EXPECT_EQ((*s)["flash_attn"], "auto");
  EXPECT_EQ((*s)["n_batch"], 256);
  EXPECT_EQ((*s)["n_ubatch"], 512);
  EXPECT_EQ((*s)["type_k"], "f16");
  EXPECT_EQ((*s)["poll"], 50);
  EXPECT_EQ((*s)["cpus"], FormatCpuList(allowed));
  EXPECT_FALSE(s->contains("n_ctx"));

  // cpus is recorded only when set.
  auto plain = rt->ResolveSettings(json::object(),
                                   Cell("decode_throughput_32_16", BenchmarkType::kDecode, 32, 16));
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_FALSE(plain->contains("cpus"));
}

TEST(StockRuntime, RefusesSettingsItDoesNotTake) {
  auto rt = PinnedRuntime();
  ASSERT_TRUE(rt);
  for (const char* name : {"n_ctx", "test_leak_bytes"}) {
    auto s = rt->ResolveSettings({{name, 512}},
                                 Cell("prefill_throughput_64", BenchmarkType::kPrefill, 64, 0));
    ASSERT_FALSE(s.ok()) << name;
    const std::string& m = s.error().message;
    EXPECT_TRUE(OneLine(m)) << m;
    EXPECT_NE(m.find(std::string("runtime llamacpp-stock does not take the setting ") + name),
              std::string::npos)
        << m;
    // The test-only setting is not offered.
    EXPECT_EQ(m.substr(m.find("it takes:")).find("test_leak_bytes"), std::string::npos) << m;
  }
  auto bad = rt->ResolveSettings({{"type_k", "q9"}},
                                 Cell("prefill_throughput_64", BenchmarkType::kPrefill, 64, 0));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("type_k"), std::string::npos) << bad.error().message;
}

TEST(StockRuntime, MissingDirectoryIsOneLine) {
  const std::string missing = WorkDir() + "/no-such-build";
  auto r = MakeStockRuntime(missing);
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_TRUE(OneLine(m)) << m;
  EXPECT_NE(m.find("runtime llamacpp-stock"), std::string::npos) << m;
  EXPECT_NE(m.find(missing), std::string::npos) << m;
  EXPECT_NE(m.find("does not exist"), std::string::npos) << m;
  EXPECT_EQ(m.find("--runtime"), std::string::npos) << m;
}

// A build whose llama-bench predates the depth option (-d) and --no-warmup, with llama-cli but
// no llama-server: the shapes that need those options are refused when the cell is resolved,
// before anything runs, and no end-to-end benchmarks are offered.
TEST(StockRuntime, OlderBuildWithoutServer) {
  const std::string dir = WorkDir() + "/old-build";
  fs::create_directories(dir);
  std::string help;
  auto exit = RunTool({kBinDir + "/llama-bench", "--help"}, &help);
  ASSERT_TRUE(exit.ok() && exit->exited && exit->code == 0);
  std::string old_help;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    if (line.find("--n-depth") == std::string::npos &&
        line.find("--no-warmup") == std::string::npos) {
      old_help += line + "\n";
    }
  }
  std::ofstream(dir + "/help.txt") << old_help;
  std::ofstream(dir + "/llama-bench") << "#!/bin/sh\ncat " << dir << "/help.txt\n";
  fs::permissions(dir + "/llama-bench", fs::perms::owner_all, fs::perm_options::add);

  // Neither llama-server nor llama-cli: the identity cannot be read, said in one line.
  auto none = MakeStockRuntime(dir);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(OneLine(none.error().message)) << none.error().message;
  EXPECT_NE(none.error().message.find("neither llama-server nor llama-cli"), std::string::npos)
      << none.error().message;

  std::ofstream(dir + "/llama-cli") << "#!/bin/sh\necho 'version: 4589 (1d1e6a9)'\n"
                                    << "echo 'built with cc (Debian 12.2.0-14) 12.2.0 for "
                                       "x86_64-linux-gnu'\n";
  fs::permissions(dir + "/llama-cli", fs::perms::owner_all, fs::perm_options::add);
  auto r = MakeStockRuntime(dir);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)->Identity().version, "b4589");
  EXPECT_EQ((*r)->Identity().commit, "1d1e6a9");
  EXPECT_EQ((*r)->Identity().build["llama_server"], "");
  const auto benchmarks = (*r)->Capabilities().benchmarks;
  EXPECT_EQ(std::find(benchmarks.begin(), benchmarks.end(), BenchmarkType::kEndToEnd),
            benchmarks.end());

  auto decode = (*r)->ResolveSettings(
      json::object(), Cell("decode_throughput_32_16", BenchmarkType::kDecode, 32, 16));
  ASSERT_FALSE(decode.ok());
  EXPECT_TRUE(OneLine(decode.error().message));
  EXPECT_NE(decode.error().message.find("cannot run at a depth"), std::string::npos)
      << decode.error().message;
  auto memory = (*r)->ResolveSettings(json::object(),
                                      Cell("max_memory_usage_64", BenchmarkType::kMemory, 64, 0));
  ASSERT_FALSE(memory.ok());
  EXPECT_NE(memory.error().message.find("skip its warm-up"), std::string::npos)
      << memory.error().message;
  auto prefill = (*r)->ResolveSettings(
      json::object(), Cell("prefill_throughput_64", BenchmarkType::kPrefill, 64, 0));
  EXPECT_TRUE(prefill.ok()) << prefill.error().message;

  // A text request has no server to go to.
  SessionOptions o;
  o.model_path = WorkDir() + "/any.gguf";
  o.settings = *prefill;
  auto session = (*r)->Start(o);
  ASSERT_TRUE(session.ok()) << session.error().message;
  auto tokens = (*session)->Tokenize("hello");
  ASSERT_FALSE(tokens.ok());
  EXPECT_EQ(tokens.error().stage, "start");
  EXPECT_NE(tokens.error().message.find("has no llama-server"), std::string::npos)
      << tokens.error().message;
}

// ---- llama-server's command line --------------------------------------------------------------

TEST(LlamaServerSyntaxTest, PinnedAndLaterBuilds) {
  std::string help;
  auto exit = RunTool({kBinDir + "/llama-server", "--help"}, &help);
  ASSERT_TRUE(exit.ok() && exit->exited && exit->code == 0);
  auto s = ParseLlamaServerHelp(help);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->load_mode && s->no_mmap && s->flash_attn && s->flash_attn_auto && s->poll &&
              s->fit && s->parallel && s->no_webui && s->cache_ram && s->no_cache_prompt);

  // 3.22.1 (de3ff81) dropped --mmap/--no-mmap for --load-mode.
  std::string later;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    if (line.find("--no-mmap") == std::string::npos) later += line + "\n";
  }
  auto l = ParseLlamaServerHelp(later);
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->load_mode);
  EXPECT_FALSE(l->no_mmap);
  EXPECT_TRUE(l->poll);  // --poll-batch does not count as --poll, nor the reverse
}

TEST(LlamaServerSyntaxTest, OlderBuildAndNotAHelp) {
  const std::string older =
      "-t,    --threads N        number of threads\n"
      "-c,    --ctx-size N       size of the prompt context (default: 4096)\n"
      "-fa,   --flash-attn       enable Flash Attention (default: disabled)\n"
      "--no-mmap                 do not memory-map model\n"
      "--poll-batch <0|1>        use polling to wait for work\n"
      "-np,   --parallel N       number of parallel sequences to decode (default: 1)\n"
      "--port PORT               port to listen (default: 8080)\n";
  auto s = ParseLlamaServerHelp(older);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_FALSE(s->load_mode || s->flash_attn_auto || s->poll || s->fit || s->no_webui ||
               s->cache_ram || s->no_cache_prompt);
  EXPECT_TRUE(s->no_mmap && s->flash_attn && s->parallel);

  auto no = ParseLlamaServerHelp("usage: llama-bench [options]\n  -p, --n-prompt <n>\n");
  ASSERT_FALSE(no.ok());
  EXPECT_TRUE(OneLine(no.error().message));
}

TEST(LlamaServerCommandTest, PinnedSyntax) {
  StockBinaries b;
  b.bin_dir = "/b";
  b.llama_server = "/b/llama-server";
  LlamaServerStart start;
  start.model_path = "/m/model.gguf";
  start.port = 18080;
  start.context_tokens = 72;
  const json settings = {{"threads", 2},        {"n_gpu_layers", -1}, {"mmap", false},
                         {"flash_attn", "off"}, {"n_batch", 256},     {"n_ubatch", 128},
                         {"type_k", "q8_0"},    {"type_v", "f16"},    {"poll", 0}};
  auto argv = LlamaServerCommand(b, LlamaServerSyntax{}, start, settings);
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  const std::vector<std::string> want = {"/b/llama-server",
                                         "-m",
                                         "/m/model.gguf",
                                         "--host",
                                         "127.0.0.1",
                                         "--port",
                                         "18080",
                                         "-c",
                                         "72",
                                         "-t",
                                         "2",
                                         "-b",
                                         "256",
                                         "-ub",
                                         "128",
                                         "-ctk",
                                         "q8_0",
                                         "-ctv",
                                         "f16",
                                         "-fa",
                                         "off",
                                         "-ngl",
                                         "999",
                                         "-lm",
                                         "none",
                                         "--poll",
                                         "0",
                                         "-fit",
                                         "off",
                                         "-np",
                                         "1",
                                         "-cram",
                                         "0",
                                         "--no-cache-prompt",
                                         "--no-webui"};
  EXPECT_EQ(*argv, want);

  // Pinned to CPUs: under taskset, which execs the server (its pid stays the server's).
  start.taskset_path = "/usr/bin/taskset";
  start.context_override = "llama.context_length=int:600";
  const std::string cpu = std::to_string(AllowedCpus().front());
  json pinned = settings;
  pinned["cpus"] = cpu;
  pinned["mmap"] = true;
  argv = LlamaServerCommand(b, LlamaServerSyntax{}, start, pinned);
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  EXPECT_EQ((std::vector<std::string>(argv->begin(), argv->begin() + 4)),
            (std::vector<std::string>{"/usr/bin/taskset", "-c", cpu, "/b/llama-server"}));
  EXPECT_EQ(ValueOf(*argv, "-lm"), "mmap");
  EXPECT_EQ(ValueOf(*argv, "--override-kv"), "llama.context_length=int:600");
}

TEST(LlamaServerCommandTest, OlderSyntax) {
  StockBinaries b;
  b.bin_dir = "/old";
  b.llama_server = "/old/llama-server";
  LlamaServerSyntax old;
  old.load_mode = old.flash_attn_auto = old.poll = old.fit = old.no_webui = old.cache_ram =
      old.no_cache_prompt = false;
  LlamaServerStart start;
  start.model_path = "m.gguf";
  start.port = 1;
  auto argv = LlamaServerCommand(b, old, start, {{"flash_attn", "on"}, {"n_gpu_layers", 0}});
  ASSERT_TRUE(argv.ok()) << argv.error().message;
  EXPECT_TRUE(Contains(*argv, "-fa"));
  EXPECT_EQ(ValueOf(*argv, "-fa"), "-ngl");  // a switch: no value follows
  EXPECT_EQ(ValueOf(*argv, "-ngl"), "0");
  EXPECT_TRUE(Contains(*argv, "--no-mmap"));
  EXPECT_FALSE(Contains(*argv, "-c"));  // no context given: the model's
  EXPECT_FALSE(Contains(*argv, "--poll") || Contains(*argv, "-fit") || Contains(*argv, "-lm"));
  argv = LlamaServerCommand(b, old, start, {{"flash_attn", "auto"}});
  ASSERT_TRUE(argv.ok());
  EXPECT_FALSE(Contains(*argv, "-fa"));

  // Settings the old server cannot express.
  auto poll = LlamaServerCommand(b, old, start, {{"poll", 0}});
  ASSERT_FALSE(poll.ok());
  EXPECT_EQ(poll.error().stage, "start");
  EXPECT_NE(poll.error().message.find("setting poll"), std::string::npos) << poll.error().message;
  old.no_mmap = false;
  auto mmap = LlamaServerCommand(b, old, start, {{"mmap", false}});
  ASSERT_FALSE(mmap.ok());
  EXPECT_TRUE(OneLine(mmap.error().message));
  EXPECT_NE(mmap.error().message.find("/old"), std::string::npos) << mmap.error().message;
  EXPECT_NE(mmap.error().message.find("setting mmap"), std::string::npos) << mmap.error().message;
}

// ---- Real work --------------------------------------------------------------------------------

class StockSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = Stories260K();
    if (model_.empty())
      GTEST_SKIP() << pipette::testing::NeedData("stories260K");
    runtime_ = PinnedRuntime();
    ASSERT_TRUE(runtime_);
  }

  // A session for a cell of `context_tokens`, settings resolved from `given`.
  std::unique_ptr<RuntimeSession> Start(int context_tokens, bool sample_memory,
                                        json given = json::object()) {
    given["threads"] = 1;
    auto s = runtime_->ResolveSettings(
        given, Cell("prefill_throughput_64", BenchmarkType::kPrefill, 64, 0));
    EXPECT_TRUE(s.ok()) << s.error().message;
    SessionOptions o;
    o.model_path = model_;
    o.settings = *s;
    o.log_path = WorkDir() + "/runtime.log";
    o.timeout = std::chrono::seconds(120);
    o.sample_memory = sample_memory;
    o.context_tokens = context_tokens;
    o.on_started = [this](int pid) { started_.push_back(pid); };
    auto session = runtime_->Start(o);
    EXPECT_TRUE(session.ok()) << session.error().message;
    return session.ok() ? std::move(*session) : nullptr;
  }

  std::string model_;
  std::shared_ptr<Runtime> runtime_;
  std::vector<int> started_;
};

TEST_F(StockSessionTest, StartStartsNothing) {
  auto s = Start(64, false);
  ASSERT_TRUE(s);
  EXPECT_TRUE(started_.empty());
  EXPECT_TRUE(s->Pids().empty());
  EXPECT_FALSE(s->PeakHostBytes().has_value());
  EXPECT_EQ(s->Facts().load_ms, 0);
  EXPECT_NE(s->Facts().extra.value("repetitions", "").find("one llama-bench process"),
            std::string::npos);
  EXPECT_TRUE(s->Facts().warnings.empty());
  const Status lp = s->WriteLogProbs({1, 2, 3}, WorkDir() + "/x.pplp");
  ASSERT_FALSE(lp.ok());
  EXPECT_EQ(lp.error().stage, "logprobs");
  EXPECT_EQ(lp.error().message,
            "runtime llamacpp-stock has no log-probabilities; run kl_divergence on the llamacpp "
            "runtime");
}

TEST_F(StockSessionTest, Prefill) {
  auto s = Start(64, false);
  ASSERT_TRUE(s);
  auto t = s->Prefill(std::vector<int32_t>(64, 0), "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_GT(t->prefill_ms, 0);
  EXPECT_FALSE(t->derived_from_ttft);
  EXPECT_EQ(t->request_ms, -1);
  EXPECT_EQ(started_.size(), 1u);
  EXPECT_TRUE(s->Pids().empty());                // the process has ended
  EXPECT_FALSE(s->PeakHostBytes().has_value());  // not sampled
  EXPECT_FALSE(s->ResidentAtPeak().has_value());
  std::printf("[ measured ] prefill of 64 tokens: %.3f ms, %.0f tokens/s\n", t->prefill_ms,
              64 / (t->prefill_ms / 1e3));
  // A second call is a second process.
  ASSERT_TRUE(s->Prefill(std::vector<int32_t>(64, 0), "").ok());
  EXPECT_EQ(started_.size(), 2u);
  EXPECT_NE(started_[0], started_[1]);
  auto empty = s->Prefill({}, "");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().stage, "prefill");
}

TEST_F(StockSessionTest, DecodeAfterContext) {
  auto s = Start(48, false);
  ASSERT_TRUE(s);
  auto t = s->Decode(std::vector<int32_t>(32, 0), "", 16);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_GT(t->total_ms, 0);
  EXPECT_TRUE(t->step_ms.empty());
  EXPECT_EQ(t->tokens, 16);
  EXPECT_EQ(t->context_tokens, 32);
  std::printf("[ measured ] decode of 16 tokens after 32: %.3f ms, %.0f tokens/s\n", t->total_ms,
              16 / (t->total_ms / 1e3));
}

TEST_F(StockSessionTest, MemoryOfAFreshSession) {
  auto s = Start(65, true);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->PeakHostBytes().has_value());
  auto t = s->Decode(std::vector<int32_t>(64, 0), "", 1);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->tokens, 1);
  EXPECT_EQ(t->context_tokens, 64);
  const auto peak = s->PeakHostBytes();
  ASSERT_TRUE(peak.has_value());
  EXPECT_GT(*peak, 1u << 20);
  // The ended llama-bench process's reading with the largest resident set, within the peak.
  const auto split = s->ResidentAtPeak();
  ASSERT_TRUE(split.has_value());
  EXPECT_GT(split->anon_bytes, 0u);
  EXPECT_GT(split->file_bytes, 0u);
  EXPECT_LE(split->anon_bytes + split->file_bytes + split->shmem_bytes, split->resident_bytes);
  EXPECT_LE(split->resident_bytes, *peak);
  EXPECT_EQ(started_.size(), 1u);
  std::printf("[ measured ] peak host memory, load + prefill 64 + decode 1: %.2f MiB\n",
              *peak / (1024.0 * 1024.0));
}

TEST_F(StockSessionTest, GenerateThroughLlamaServer) {
  auto s = Start(64 + 8, false);
  ASSERT_TRUE(s);
  const std::string text = "Once upon a time, there was a little girl named Lily. She liked to";
  auto tokens = s->Tokenize(text);
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  ASSERT_GT(tokens->size(), 5u);
  ASSERT_LE(tokens->size(), 64u);
  ASSERT_EQ(started_.size(), 1u);  // the server
  EXPECT_EQ(s->Pids(), std::vector<int>{started_[0]});
  auto g = s->Generate(text, 8);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->prompt_tokens, static_cast<int>(tokens->size()));
  EXPECT_EQ(g->generated_tokens, 8);
  ASSERT_EQ(g->token_ms.size(), 8u);
  for (size_t i = 1; i < g->token_ms.size(); ++i) EXPECT_GT(g->token_ms[i], g->token_ms[i - 1]);
  EXPECT_GE(g->end_ms, g->token_ms.back());
  EXPECT_FALSE(g->text.empty());
  std::printf("[ measured ] llama-server, %zu prompt + 8 tokens: ttft %.3f ms, end %.3f ms\n",
              tokens->size(), g->token_ms.front(), g->end_ms);
  const auto peak = s->PeakHostBytes();  // the server is ours
  ASSERT_TRUE(peak.has_value());
  EXPECT_GT(*peak, 1u << 20);
  EXPECT_FALSE(s->LogTail().empty());  // the server's log
  // llama-bench still runs beside it (its log then goes elsewhere).
  ASSERT_TRUE(s->Prefill(std::vector<int32_t>(16, 0), "").ok());
  s->Stop();
  EXPECT_TRUE(s->Pids().empty());
  s->Stop();  // idempotent
}

// A context above the model's training context (512): llama-server would cap a request at 512,
// so it is told the model's context length, and the session says so.
TEST_F(StockSessionTest, ContextAboveTrainingContext) {
  auto s = Start(640, false);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->Facts().warnings.size(), 1u);
  const std::string& w = s->Facts().warnings[0];
  EXPECT_NE(w.find("640"), std::string::npos) << w;
  EXPECT_NE(w.find("512"), std::string::npos) << w;
  std::string text;
  for (int i = 0; i < 40; ++i) text += "Once upon a time, there was a little girl named Lily. ";
  auto tokens = s->Tokenize(text);
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  ASSERT_GT(tokens->size(), 512u);
  ASSERT_LT(tokens->size(), 632u);
  auto g = s->Generate(text, 8);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->prompt_tokens, static_cast<int>(tokens->size()));
  EXPECT_EQ(g->generated_tokens, 8);
}

TEST_F(StockSessionTest, ModelThatIsNotAGguf) {
  const std::string bad = WorkDir() + "/not-a-model.gguf";
  std::ofstream(bad) << "hello";
  model_ = bad;
  auto s = Start(64, false);
  ASSERT_TRUE(s);  // nothing runs at start
  auto t = s->Prefill(std::vector<int32_t>(64, 0), "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().stage, "load");
  EXPECT_TRUE(OneLine(t.error().message)) << t.error().message;
}

// Another llama.cpp build, named by $PIPETTE_TEST_STOCK_DIR (e.g. the prefix/bin that
// `scripts/llama.sh --release 3.22.1` prints): identity, a prefill, a decode and a text request
// through its own binaries and their syntax. Skipped when the variable is not set.
TEST_F(StockSessionTest, AnotherBuildFromTheEnvironment) {
  const char* dir = getenv("PIPETTE_TEST_STOCK_DIR");
  if (dir == nullptr || *dir == 0) GTEST_SKIP() << "PIPETTE_TEST_STOCK_DIR is not set";
  auto r = MakeStockRuntime(dir);
  ASSERT_TRUE(r.ok()) << r.error().message;
  runtime_ = *r;
  std::printf("[ build    ] %s %s, commit %s\n", runtime_->Identity().name.c_str(),
              runtime_->Identity().version.c_str(), runtime_->Identity().commit.c_str());
  auto s = Start(64 + 8, false);
  ASSERT_TRUE(s);
  auto p = s->Prefill(std::vector<int32_t>(64, 0), "");
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto d = s->Decode(std::vector<int32_t>(32, 0), "", 16);
  ASSERT_TRUE(d.ok()) << d.error().message;
  const std::string text = "Once upon a time, there was a little girl named Lily.";
  auto tokens = s->Tokenize(text);
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  auto g = s->Generate(text, 8);
  ASSERT_TRUE(g.ok()) << g.error().message << "; log: " << s->LogTail();
  EXPECT_EQ(g->prompt_tokens, static_cast<int>(tokens->size()));
  EXPECT_EQ(g->generated_tokens, 8);
  std::printf("[ measured ] prefill 64: %.3f ms; decode 16 after 32: %.3f ms; text: %.3f ms\n",
              p->prefill_ms, d->total_ms, g->end_ms);
}

}  // namespace
}  // namespace pipette
