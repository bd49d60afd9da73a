#include "runtimes/llamacpp_stock/stock_runtime.h"

#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <sstream>
#include <thread>

#include "pipette/gguf.h"
#include "platform/cpu_affinity.h"
#include "platform/file_tail.h"
#include "platform/interrupt.h"
#include "platform/proc_memory.h"
#include "platform/process.h"
#include "runtimes/common/resident.h"
#include "runtimes/common/resolve.h"
#include "runtimes/llamacpp_stock/llama_bench.h"
#include "runtimes/openai/served_model.h"
#include "runtimes/openai/server_process.h"

namespace pipette {
namespace {

using nlohmann::json;

constexpr char kName[] = "llamacpp-stock";

// True when `option` ("--poll") appears in `text` as a whole option: not as the start of a longer
// one ("--poll-batch") nor inside one ("--no-poll").
bool HasOption(const std::string& text, const std::string& option) {
  const auto part_of_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  };
  for (size_t at = text.find(option); at != std::string::npos; at = text.find(option, at + 1)) {
    const size_t end = at + option.size();
    if ((at == 0 || !part_of_name(text[at - 1])) &&
        (end == text.size() || !part_of_name(text[end]))) {
      return true;
    }
  }
  return false;
}

// The help line that lists `option`, or "".
std::string LineOf(const std::string& text, const std::string& option) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (HasOption(line, option)) return line;
  }
  return "";
}

// What `binary --help` prints on stdout.
Result<std::string> HelpText(const std::string& binary) {
  auto help = Probe({binary, "--help"});
  if (!help) return MakeError(help.error().message + "; is it a llama.cpp build?");
  if (!help->exit.exited || help->exit.code != 0) {
    return MakeError(fmt::format("{} failed to print its help ({}); is it a llama.cpp build?",
                                 binary, help->exit.Describe()));
  }
  return help->out;
}

// The target of the /proc link `path`, "" when unreadable (a process that is gone or a zombie).
std::string ReadLink(const std::string& path) {
  char buf[4096];
  const ssize_t n = readlink(path.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// Waits (at most 1 s) until the child `pid` runs another program than this one. Between fork and
// exec a child's memory reads as a copy of this process's, which must not count as its peak.
void AwaitExec(int pid) {
  const std::string self = ReadLink("/proc/self/exe");
  const std::string exe = fmt::format("/proc/{}/exe", pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string now = ReadLink(exe);
    if (now.empty() || now != self) return;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

int IntSetting(const json& s, const char* name, int fallback) {
  const auto it = s.find(name);
  return it != s.end() && it->is_number_integer() ? it->get<int>() : fallback;
}
std::string TextSetting(const json& s, const char* name, const std::string& fallback) {
  const auto it = s.find(name);
  return it != s.end() && it->is_string() ? it->get<std::string>() : fallback;
}
bool BoolSetting(const json& s, const char* name, bool fallback) {
  const auto it = s.find(name);
  return it != s.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

// A llama-bench test with the resolved settings; the shape is the caller's.
LlamaBenchTest BenchTest(const json& s) {
  LlamaBenchTest t;
  t.threads = IntSetting(s, "threads", 0);
  t.n_batch = IntSetting(s, "n_batch", t.n_batch);
  t.n_ubatch = IntSetting(s, "n_ubatch", t.n_ubatch);
  t.type_k = TextSetting(s, "type_k", t.type_k);
  t.type_v = TextSetting(s, "type_v", t.type_v);
  t.flash_attn = TextSetting(s, "flash_attn", t.flash_attn);
  t.n_gpu_layers = IntSetting(s, "n_gpu_layers", t.n_gpu_layers);
  t.mmap = BoolSetting(s, "mmap", t.mmap);
  t.poll = IntSetting(s, "poll", t.poll);
  t.cpus = TextSetting(s, "cpus", "");
  t.repetitions = 1;
  return t;
}

// The llama-bench shapes (llama_bench.h): one repetition each, after llama-bench's own warm-up
// except for memory, which is exactly "load, prefill P, decode 1".
LlamaBenchTest PrefillShape(const json& s, int p) {
  LlamaBenchTest t = BenchTest(s);
  t.n_prompt = p;
  return t;
}
LlamaBenchTest DecodeShape(const json& s, int context, int n) {
  LlamaBenchTest t = BenchTest(s);
  t.n_gen = n;
  t.n_depth = context;
  return t;
}
LlamaBenchTest MemoryShape(const json& s, int p) {
  LlamaBenchTest t = BenchTest(s);
  t.n_prompt = p;
  t.n_gen = 1;
  t.warmup = false;
  return t;
}

const char kRepetitions[] =
    "one llama-bench process per repetition (-r 1) after its own warm-up run (a full prompt for "
    "prefill, one token for decode), with pipette's readiness gate between processes; memory: one "
    "process per repetition doing load, prefill P, decode 1 without warm-up";

class StockSession : public RuntimeSession {
 public:
  StockSession(StockBinaries binaries, std::optional<LlamaServerSyntax> server_syntax,
               SessionOptions options, LoadFacts facts, std::string context_override)
      : bins_(std::move(binaries)),
        server_syntax_(std::move(server_syntax)),
        o_(std::move(options)),
        facts_(std::move(facts)),
        context_override_(std::move(context_override)) {}
  ~StockSession() override { Stop(); }

  const LoadFacts& Facts() const override { return facts_; }

  Result<std::vector<int32_t>> Tokenize(const std::string& text) override {
    auto server = Server();
    if (!server) return server.error();
    return (*server)->Tokenize(text);
  }

  Result<PrefillTiming> Prefill(const std::vector<int32_t>& tokens, const std::string&) override {
    if (tokens.empty()) return MakeError("a prefill needs at least one token", "prefill");
    auto run = Bench(PrefillShape(o_.settings, static_cast<int>(tokens.size())), "prefill");
    if (!run) return run.error();
    return PrefillTiming{run->samples_ns.front() / 1e6, false, -1};
  }

  Result<DecodeTiming> Decode(const std::vector<int32_t>& context, const std::string&,
                              int n) override {
    const int p = static_cast<int>(context.size());
    const bool memory = o_.sample_memory && n == 1;
    auto run = memory ? Bench(MemoryShape(o_.settings, p), "memory")
                      : Bench(DecodeShape(o_.settings, p, n), "decode");
    if (!run) return run.error();
    DecodeTiming t;
    // The memory shape times the P-token prompt and the step together (-pg P,1).
    t.total_ms = run->samples_ns.front() / 1e6;
    t.tokens = n;
    t.context_tokens = p;
    return t;
  }

  Result<GenerateTiming> Generate(const std::string& text, int n) override {
    auto server = Server();
    if (!server) return server.error();
    return (*server)->Generate(text, n);
  }

  // Evals through the build's llama-server: its chat template, its sampler chain.
  Result<Completion> Complete(const CompletionRequest& request,
                              const std::function<bool(const std::string&)>& keep_going) override {
    auto server = Server();
    if (!server) return server.error();
    auto c = (*server)->Complete(request, keep_going);
    if (c && (*server)->identity().build_info.size()) {
      c->sampling["server_build"] = (*server)->identity().build_info;
    }
    return c;
  }

  Status WriteLogProbs(const std::vector<int32_t>&, const std::string&) override {
    return MakeError(fmt::format("runtime {} has no log-probabilities; run kl_divergence on the "
                                 "llamacpp runtime",
                                 kName),
                     "logprobs");
  }

  std::vector<int> Pids() const override {
    std::vector<int> pids;
    if (const int pid = bench_pid_.load(); pid > 0) pids.push_back(pid);
    if (const int pid = server_pid_.load(); pid > 0) pids.push_back(pid);
    return pids;
  }

  std::optional<uint64_t> PeakHostBytes() override {
    std::optional<uint64_t> peak;
    if (bench_peak_ > 0) peak = bench_peak_;
    if (server_) {
      if (const auto s = server_->PeakHostBytes()) peak = std::max(peak.value_or(0), *s);
    }
    return peak;
  }
  uint64_t PeakSwapBytes() override {
    return std::max(bench_swap_, server_ ? server_->PeakSwapBytes() : uint64_t{0});
  }
  std::optional<ResidentSplit> ResidentAtPeak() override {
    return LargerResident(bench_at_peak_, server_ ? server_->ResidentAtPeak() : std::nullopt);
  }

  std::string LogTail() const override {
    return o_.log_path.empty() ? "" : ReadFileTail(o_.log_path);
  }

  void Stop() override {
    if (server_) server_->Stop();
    server_pid_ = -1;
  }

 private:
  // One llama-bench process, its memory sampled when the session samples memory. Its stderr goes
  // to the session's log (truncated by each run), or to a temporary file while a server of this
  // session writes the log.
  Result<LlamaBenchRun> Bench(const LlamaBenchTest& test, const std::string& stage) {
    std::unique_ptr<MemorySampler> sampler;
    auto run = RunLlamaBench(bins_, o_.model_path, test, stage, server_ ? "" : o_.log_path,
                             o_.timeout, [&](int pid) {
                               bench_pid_ = pid;
                               SetInterruptTarget(pid);  // Ctrl-C stops llama-bench, then us
                               if (o_.sample_memory) {
                                 AwaitExec(pid);
                                 sampler = std::make_unique<MemorySampler>(pid, 10);
                               }
                               if (o_.on_started) o_.on_started(pid);
                             });
    bench_pid_ = -1;
    SetInterruptTarget(0);
    if (!run && Interrupted()) return MakeError("interrupted by the user during " + stage, stage);
    if (sampler) {
      sampler->Stop();
      bench_peak_ = std::max(bench_peak_, sampler->PeakBytes());
      bench_swap_ = std::max(bench_swap_, sampler->PeakSwapBytes());
      bench_at_peak_ = LargerResident(bench_at_peak_, SplitOf(sampler->AtPeak()));
    }
    // llama-bench says which backends it ran on only after a run (the loop records the facts
    // again when the cell ends).
    if (run && facts_.backends.empty() && !run->backends.empty()) {
      facts_.backends = nlohmann::json::array({{{"name", run->backends}}});
    }
    return run;
  }

  // The build's llama-server for this session, started on first use.
  Result<ServedModel*> Server() {
    if (server_) return server_.get();
    if (!server_syntax_) {
      return MakeError(fmt::format("the llama.cpp build in {} has no llama-server, so runtime {} "
                                   "cannot run text requests (end-to-end benchmarks); build "
                                   "llama-server there",
                                   bins_.bin_dir, kName),
                       "start");
    }
    auto port = FreeLocalPort();
    if (!port) return port.error().Wrap("starting llama-server");
    LlamaServerStart start;
    start.model_path = o_.model_path;
    start.port = *port;
    start.context_tokens = o_.context_tokens;
    start.context_override = context_override_;
    start.taskset_path = FindTaskset();
    auto argv = LlamaServerCommand(bins_, *server_syntax_, start, o_.settings);
    if (!argv) return argv.error();
    ServedModelOptions so;
    so.url = fmt::format("http://127.0.0.1:{}", *port);
    so.server_command = *argv;
    so.log_path = o_.log_path;
    so.timeout = o_.timeout;
    so.sample_memory = o_.sample_memory;
    so.on_started = [this](int pid) {
      server_pid_ = pid;
      if (o_.on_started) o_.on_started(pid);
    };
    auto served = ServedModel::Open(so);
    if (!served) return served.error();
    server_ = std::move(*served);
    return server_.get();
  }

  StockBinaries bins_;
  std::optional<LlamaServerSyntax> server_syntax_;  // nullopt: the build has no llama-server
  SessionOptions o_;
  LoadFacts facts_;
  std::string context_override_;
  std::unique_ptr<ServedModel> server_;
  std::atomic<int> bench_pid_{-1};
  std::atomic<int> server_pid_{-1};
  uint64_t bench_peak_ = 0;  // over the sampled llama-bench processes; 0 = none sampled
  uint64_t bench_swap_ = 0;
  std::optional<ResidentSplit> bench_at_peak_;  // the sampled llama-bench reading at its peak
};

class StockRuntime : public Runtime {
 public:
  StockRuntime(StockBinaries binaries, const StockBuild& build,
               std::optional<LlamaServerSyntax> server_syntax)
      : bins_(std::move(binaries)),
        server_syntax_(std::move(server_syntax)),
        defs_(StockSettingDefs()) {
    identity_.name = kName;
    if (!build.version.empty()) {
      identity_.version = fmt::format("{} (build {})", build.version, build.build_number);
    } else if (build.build_number > 0) {
      identity_.version = fmt::format("b{}", build.build_number);
    } else {
      identity_.version = "unknown";
    }
    identity_.commit = build.commit;
    identity_.build = {{"bin_dir", bins_.bin_dir},
                       {"llama_bench", bins_.llama_bench},
                       {"llama_server", bins_.llama_server},
                       {"compiler", build.compiler},
                       {"target", build.target},
                       {"build_number", build.build_number}};
  }

  const RuntimeIdentity& Identity() const override { return identity_; }
  const std::vector<SettingDef>& Settings() const override { return defs_; }

  RuntimeCapabilities Capabilities() const override {
    RuntimeCapabilities c;
    c.benchmarks = {BenchmarkType::kPrefill, BenchmarkType::kDecode, BenchmarkType::kMemory};
    if (server_syntax_) {  // text requests and evals go through the build's llama-server
      c.benchmarks.push_back(BenchmarkType::kEndToEnd);
      c.benchmarks.push_back(BenchmarkType::kEval);
    }
    c.per_token_timing = false;
    c.process_memory = true;
    c.token_input = true;
    c.own_tokens = true;
    return c;
  }

  // Also checks that this build can run the cell's shape with these settings (an older
  // llama-bench may lack the options a shape or a setting needs), before anything starts.
  Result<json> ResolveSettings(const json& given, const ResolveContext& cell) const override {
    auto s = ResolveByDefinitions(identity_.name, defs_, given, [&](const SettingDef& d) -> json {
      if (d.name == "threads") return cell.physical_cores;
      return nullptr;
    });
    if (!s) return s.error();
    const BenchmarkSpec& b = cell.benchmark;
    const int p = b.prefill_tokens, d = b.decode_tokens;
    std::optional<LlamaBenchTest> test;
    if (b.type == BenchmarkType::kPrefill && p > 0) test = PrefillShape(*s, p);
    if (b.type == BenchmarkType::kDecode && d > 0) test = DecodeShape(*s, p, d);
    if (b.type == BenchmarkType::kMemory) test = MemoryShape(*s, p);
    if (test) {
      auto argv = LlamaBenchCommand(bins_, "model.gguf", *test);
      if (!argv) return MakeError(argv.error().message);
    }
    if (b.type == BenchmarkType::kEndToEnd && server_syntax_) {
      LlamaServerStart start;
      start.model_path = "model.gguf";
      auto argv = LlamaServerCommand(bins_, *server_syntax_, start, *s);
      if (!argv) return MakeError(argv.error().message);
    }
    return s;
  }

  // Starts nothing: every llama-bench run is its own process, and llama-server starts on the
  // session's first text request. Reads the model's header only when the cell's context exceeds
  // the model's training context (for llama-server, which would cap it).
  Result<std::unique_ptr<RuntimeSession>> Start(const SessionOptions& o) override {
    LoadFacts facts;
    facts.extra = {{"repetitions", kRepetitions}};
    std::string context_override;
    if (server_syntax_ && o.context_tokens > 0) {
      if (auto info = ReadGgufInfo(o.model_path);
          info && info->n_ctx_train > 0 && !info->architecture.empty() &&
          static_cast<uint64_t>(o.context_tokens) > info->n_ctx_train) {
        context_override =
            fmt::format("{}.context_length=int:{}", info->architecture, o.context_tokens);
        facts.warnings.push_back(fmt::format(
            "the cell needs {} tokens of context, more than the {} the model was trained for: "
            "llama-server is told the model's context length is {} (it would otherwise cap a "
            "request at {}); llama-bench runs the context as asked",
            o.context_tokens, info->n_ctx_train, o.context_tokens, info->n_ctx_train));
      }
    }
    return std::unique_ptr<RuntimeSession>(
        new StockSession(bins_, server_syntax_, o, std::move(facts), context_override));
  }

 private:
  StockBinaries bins_;
  std::optional<LlamaServerSyntax> server_syntax_;
  std::vector<SettingDef> defs_;
  RuntimeIdentity identity_;
};

}  // namespace

std::vector<SettingDef> StockSettingDefs() {
  SettingDef ngl = NGpuLayersSetting();
  ngl.meaning =
      "layers offloaded to a GPU (-1: llama-bench's default, every layer where the build has a "
      "GPU backend)";
  ngl.resolution = "-1 is recorded as -1 (llama-bench's default; llama-server is given 999)";
  return {ThreadsSetting(),        ngl,
          MmapSetting(),           FlashAttnSetting(),
          NBatchSetting(),         NUbatchSetting(),
          KvTypeSetting("type_k"), KvTypeSetting("type_v"),
          PollSetting(),           CpusSetting()};
}

Result<LlamaServerSyntax> ParseLlamaServerHelp(const std::string& help) {
  if (!HasOption(help, "--port") || !HasOption(help, "--ctx-size")) {
    return MakeError("this is not llama-server's help (it lists no port or context size option)");
  }
  LlamaServerSyntax s;
  s.load_mode = HasOption(help, "--load-mode");
  s.no_mmap = HasOption(help, "--no-mmap");
  s.flash_attn = HasOption(help, "--flash-attn");
  const std::string fa = LineOf(help, "--flash-attn");
  s.flash_attn_auto = s.flash_attn && fa.find("auto") != std::string::npos;
  s.poll = HasOption(help, "--poll");
  s.fit = HasOption(help, "--fit");
  s.parallel = HasOption(help, "--parallel");
  s.no_webui = HasOption(help, "--no-webui");
  s.cache_ram = HasOption(help, "--cache-ram");
  s.no_cache_prompt = HasOption(help, "--no-cache-prompt");
  return s;
}

Result<std::vector<std::string>> LlamaServerCommand(const StockBinaries& binaries,
                                                    const LlamaServerSyntax& syntax,
                                                    const LlamaServerStart& start,
                                                    const json& settings) {
  const auto cannot = [&binaries](const std::string& what) {
    return MakeError(fmt::format("the llama-server of {} cannot {}; use a newer llama.cpp build "
                                 "or leave the setting at its default",
                                 binaries.bin_dir, what),
                     "start");
  };
  const LlamaBenchTest t = BenchTest(settings);  // the same reading of the settings
  if (!t.mmap && !syntax.load_mode && !syntax.no_mmap) {
    return cannot("load the model without mmap (setting mmap)");
  }
  if (t.flash_attn == "on" && !syntax.flash_attn) {
    return cannot("use flash attention (setting flash_attn)");
  }
  if (t.poll != 50 && !syntax.poll) return cannot("set the polling level (setting poll)");

  std::vector<std::string> argv;
  if (!t.cpus.empty()) {
    auto cpus = ParseCpuList(t.cpus);
    if (!cpus) return MakeError("llama-server setting cpus: " + cpus.error().message, "start");
    if (Status s = CheckCpusAvailable(*cpus); !s) {
      return MakeError("llama-server setting cpus: " + s.error().message, "start");
    }
    if (start.taskset_path.empty()) {
      return MakeError(fmt::format("cannot run llama-server on the CPUs {}: taskset (util-linux) "
                                   "is not installed; install it or leave the setting cpus empty",
                                   t.cpus),
                       "start");
    }
    argv = {start.taskset_path, "-c", FormatCpuList(*cpus)};
  }
  const auto add = [&argv](const std::string& option, const std::string& value) {
    argv.push_back(option);
    argv.push_back(value);
  };
  argv.push_back(binaries.llama_server);
  add("-m", start.model_path);
  add("--host", "127.0.0.1");
  add("--port", std::to_string(start.port));
  if (start.context_tokens > 0) add("-c", std::to_string(start.context_tokens));
  if (t.threads > 0) add("-t", std::to_string(t.threads));
  add("-b", std::to_string(t.n_batch));
  add("-ub", std::to_string(t.n_ubatch));
  add("-ctk", t.type_k);
  add("-ctv", t.type_v);
  if (syntax.flash_attn_auto) {
    add("-fa", t.flash_attn);
  } else if (t.flash_attn == "on") {
    argv.push_back("-fa");  // a switch; off and auto are the build's default, off
  }
  add("-ngl", std::to_string(t.n_gpu_layers < 0 ? 999 : t.n_gpu_layers));
  if (syntax.load_mode) {
    add("-lm", t.mmap ? "mmap" : "none");
  } else if (!t.mmap) {
    argv.push_back("--no-mmap");
  }
  if (syntax.poll) add("--poll", std::to_string(t.poll));
  if (syntax.fit) add("-fit", "off");
  if (syntax.parallel) add("-np", "1");
  if (syntax.cache_ram) add("-cram", "0");
  if (syntax.no_cache_prompt) argv.push_back("--no-cache-prompt");
  if (syntax.no_webui) argv.push_back("--no-webui");
  if (!start.context_override.empty()) add("--override-kv", start.context_override);
  return argv;
}

Result<std::shared_ptr<Runtime>> MakeStockRuntime(const std::string& dir) {
  auto bins = FindStockBinaries(dir);
  if (!bins) return bins.error().Wrap(std::string("runtime ") + kName);
  auto build = ReadStockBuild(*bins);
  if (!build) return build.error().Wrap(std::string("runtime ") + kName);
  std::optional<LlamaServerSyntax> server_syntax;
  if (bins->has_server()) {
    auto help = HelpText(bins->llama_server);
    if (!help) return help.error().Wrap(std::string("runtime ") + kName);
    auto syntax = ParseLlamaServerHelp(*help);
    if (!syntax) {
      return MakeError(
          fmt::format("runtime {}: {} printed a help text that is not "
                      "llama-server's; is {} a llama.cpp build?",
                      kName, bins->llama_server, bins->bin_dir));
    }
    server_syntax = *syntax;
  }
  return std::shared_ptr<Runtime>(new StockRuntime(*bins, *build, server_syntax));
}

}  // namespace pipette
