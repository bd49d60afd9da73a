#include "runtimes/openai/openai_runtime.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "platform/file_tail.h"
#include "platform/process.h"
#include "runtimes/common/resolve.h"
#include "runtimes/openai/served_model.h"

namespace pipette {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

bool Mentions(const std::vector<std::string>& argv, const std::string& placeholder) {
  for (const auto& a : argv) {
    if (a.find(placeholder) != std::string::npos) return true;
  }
  return false;
}

// "b1-80fb11a", "version: 0.4.0 (build 1, commit 80fb11a)": the commit where one is named.
std::string CommitIn(const std::string& text) {
  static const std::regex commit(R"((?:commit |b\d+-)([0-9a-f]{7,40})\b)");
  std::smatch m;
  return std::regex_search(text, m, commit) ? m[1].str() : "";
}

// What a program prints for --version (stdout and stderr together): the line that starts with
// "version" (llama-server: "version: 0.4.0 (build 1, commit 80fb11a)", given without the
// "version: "), else its first line ("vllm 0.6.3", "ollama version is 0.1.32"); "" when the
// program fails or prints nothing.
std::string VersionLine(const std::string& program) {
  std::string out;
  auto exit = RunTool({program, "--version"}, &out);
  if (!exit || !exit->exited || exit->code != 0) return "";
  std::istringstream in(out);
  std::string first;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line.rfind("version: ", 0) == 0) return line.substr(9);
    if (line.rfind("version", 0) == 0) return line;
    if (first.empty()) first = line;
  }
  return first;
}

// The server program of a command line: the first argument that is an executable file and not a
// launcher (taskset -c 0 llama-server ...: llama-server), so that its version is the one asked.
std::string ServerProgram(const std::vector<std::string>& argv) {
  static const char* kLaunchers[] = {"taskset", "nice", "env", "numactl", "chrt", "ionice"};
  for (const std::string& a : argv) {
    const std::string name = fs::path(a).filename().string();
    if (std::find(std::begin(kLaunchers), std::end(kLaunchers), name) != std::end(kLaunchers)) {
      continue;
    }
    std::error_code ec;
    if (a.find('/') != std::string::npos && fs::is_regular_file(a, ec) &&
        access(a.c_str(), X_OK) == 0) {
      return a;
    }
  }
  return argv.front();
}

class OpenAiSession : public RuntimeSession {
 public:
  OpenAiSession(std::unique_ptr<ServedModel> served, const std::string& model_path)
      : served_(std::move(served)) {
    const ServerIdentity& id = served_->identity();
    facts_.load_ms = served_->start_ms();
    facts_.extra = {{"server",
                     {{"url", id.base_url},
                      {"models", id.model_ids},
                      {"api_model", served_->api_model()},
                      {"server_header", id.server_header},
                      {"build_info", id.build_info},
                      {"model_path", id.model_path},
                      {"n_ctx", id.n_ctx}}}};
    if (!id.model_path.empty() &&
        fs::path(id.model_path).filename() != fs::path(model_path).filename()) {
      facts_.warnings.push_back(fmt::format(
          "the server serves {}, not the model file {} this result describes; start the server "
          "with that file",
          fs::path(id.model_path).filename().string(), fs::path(model_path).filename().string()));
    }
  }
  ~OpenAiSession() override { Stop(); }

  const LoadFacts& Facts() const override { return facts_; }
  Result<std::vector<int32_t>> Tokenize(const std::string& text) override {
    return served_->Tokenize(text);
  }
  Result<PrefillTiming> Prefill(const std::vector<int32_t>&, const std::string& text) override {
    return served_->Prefill(text);
  }
  // D steps after the first token: D + 1 tokens requested, the first one's arrival (prefill)
  // left out, so that the D timed steps are decode alone.
  Result<DecodeTiming> Decode(const std::vector<int32_t>&, const std::string& text,
                              int n) override {
    auto g = served_->Generate(text, n + 1);
    if (!g) return g.error();
    DecodeTiming t;
    if (static_cast<int>(g->token_ms.size()) == g->generated_tokens) {
      for (size_t i = 1; i < g->token_ms.size(); ++i) {
        t.step_ms.push_back(g->token_ms[i] - g->token_ms[i - 1]);
      }
    }
    t.total_ms = g->token_ms.back() - g->token_ms.front();
    t.tokens = g->generated_tokens - 1;
    t.context_tokens = g->prompt_tokens;
    return t;
  }
  Result<GenerateTiming> Generate(const std::string& text, int n) override {
    return served_->Generate(text, n);
  }
  Result<Completion> Complete(const CompletionRequest& request,
                              const std::function<bool(const std::string&)>& keep_going) override {
    return served_->Complete(request, keep_going);
  }
  Status WriteLogProbs(const std::vector<int32_t>&, const std::string&) override {
    return MakeError("runtime openai has no log-probabilities; run kl_divergence on llamacpp",
                     "logprobs");
  }
  std::vector<int> Pids() const override {
    if (const auto pid = served_->Pid()) return {*pid};
    return {};
  }
  std::optional<uint64_t> PeakHostBytes() override { return served_->PeakHostBytes(); }
  uint64_t PeakSwapBytes() override { return served_->PeakSwapBytes(); }
  std::optional<ResidentSplit> ResidentAtPeak() override { return served_->ResidentAtPeak(); }
  std::string LogTail() const override { return served_->LogTail(); }
  void Stop() override { served_->Stop(); }

 private:
  std::unique_ptr<ServedModel> served_;
  LoadFacts facts_;
};

class OpenAiRuntime : public Runtime {
 public:
  OpenAiRuntime(std::string url, std::vector<std::string> command, std::string api_model)
      : url_(std::move(url)), command_(std::move(command)), api_model_(std::move(api_model)),
        defs_(OpenAiSettingDefs()) {
    identity_.name = "openai";
  }

  Status Identify() {
    if (command_.empty()) {
      auto client = OpenAiClient::Connect(url_, std::chrono::seconds(30));
      if (!client) return client.error();
      const ServerIdentity& id = client->identity();
      identity_.version = !id.build_info.empty()       ? id.build_info
                          : !id.server_header.empty() ? id.server_header
                                                       : "unknown";
      identity_.commit = CommitIn(id.build_info);
      identity_.extra = {{"server", {{"url", id.base_url}, {"models", id.model_ids}}}};
      served_model_path_ = id.model_path;
      return Status::Ok();
    }
    if (access(command_.front().c_str(), X_OK) != 0) {
      return MakeError("the server command's program " + command_.front() +
                       " is missing or not executable; give its full path");
    }
    const std::string program = ServerProgram(command_);
    if (url_.empty() && !Mentions(command_, "{port}")) {
      return MakeError("the server command has no {port} and no URL was given: say where the "
                       "server listens");
    }
    const std::string version = VersionLine(program);
    identity_.version = version.empty() ? fs::path(program).filename().string() : version;
    identity_.commit = CommitIn(version);
    identity_.build = {{"server_program", program}};
    return Status::Ok();
  }

  // A server at a URL serves the model it was started with: a result must describe that file.
  Status CheckModel(const std::string& model_path) const override {
    if (served_model_path_.empty()) return Status::Ok();  // the server does not say (not llama-server)
    const auto served = fs::path(served_model_path_).filename();
    if (served == fs::path(model_path).filename()) return Status::Ok();
    return MakeError(fmt::format("the server at {} serves {}, not {}: give the model file it serves "
                                 "(the result describes that file), or start it with this one",
                                 url_, served.string(), fs::path(model_path).filename().string()));
  }

  const RuntimeIdentity& Identity() const override { return identity_; }
  const std::vector<SettingDef>& Settings() const override { return defs_; }
  RuntimeCapabilities Capabilities() const override {
    RuntimeCapabilities c;
    c.benchmarks = {BenchmarkType::kPrefill, BenchmarkType::kDecode, BenchmarkType::kEndToEnd,
                    BenchmarkType::kEval};
    if (!command_.empty()) {  // pipette's own server: its memory is known
      c.benchmarks.push_back(BenchmarkType::kMemory);
      c.benchmarks.push_back(BenchmarkType::kSoak);
    }
    c.per_token_timing = true;
    c.process_memory = !command_.empty();
    return c;
  }

  Result<json> ResolveSettings(const json& given, const ResolveContext&) const override {
    auto s = ResolveByDefinitions(identity_.name, defs_, given,
                                  [](const SettingDef&) { return json(); });
    if (!s) return s.error();
    if (!command_.empty() && !s->contains("server")) {
      (*s)["server"] = fmt::format("{}", fmt::join(command_, " "));
    }
    if (!api_model_.empty() && !s->contains("api_model")) (*s)["api_model"] = api_model_;
    return s;
  }

  Result<std::unique_ptr<RuntimeSession>> Start(const SessionOptions& o) override {
    ServedModelOptions s;
    s.url = url_;
    s.api_model = api_model_;
    s.log_path = o.log_path;
    s.timeout = o.timeout;
    s.sample_memory = o.sample_memory;
    s.on_started = o.on_started;
    if (!command_.empty()) {
      // {ctx} has one token of slack: through a text API a prefill generates one token, and a
      // decode of D steps asks for D + 1 (the first token's arrival ends the prefill).
      std::string port;
      if (Mentions(command_, "{port}")) {
        auto p = FreeLocalPort();
        if (!p) return p.error();
        port = std::to_string(*p);
        if (s.url.empty()) s.url = "http://127.0.0.1:" + port;
      }
      for (const std::string& a : command_) {
        s.server_command.push_back(Replace(Replace(Replace(a, "{model}", o.model_path), "{port}",
                                                   port),
                                           "{ctx}", std::to_string(o.context_tokens + 1)));
      }
    }
    auto served = ServedModel::Open(s);
    if (!served) return served.error();
    const std::string serves = (*served)->identity().model_path;
    if (!serves.empty() && fs::path(serves).filename() != fs::path(o.model_path).filename()) {
      return MakeError(fmt::format("the server started serves {}, not {}: put {{model}} in the "
                                   "server command (or the model file this result describes)",
                                   fs::path(serves).filename().string(),
                                   fs::path(o.model_path).filename().string()),
                       "start");
    }
    return std::unique_ptr<RuntimeSession>(new OpenAiSession(std::move(*served), o.model_path));
  }

 private:
  std::string url_;
  std::vector<std::string> command_;
  std::string api_model_;
  std::string served_model_path_;  // what a server at a URL says it serves ("" when it does not)
  std::vector<SettingDef> defs_;
  RuntimeIdentity identity_;
};

}  // namespace

std::vector<SettingDef> OpenAiSettingDefs() {
  SettingDef server;
  server.name = "server";
  server.kind = SettingKind::kText;
  server.meaning = "the command line pipette started the server with ({model}, {port}, {ctx})";
  server.recorded_only_when_set = true;
  server.from_choice = true;
  SettingDef api_model;
  api_model.name = "api_model";
  api_model.kind = SettingKind::kText;
  api_model.meaning = "the model name sent in requests";
  api_model.recorded_only_when_set = true;
  api_model.from_choice = true;
  return {server, api_model};
}

Result<std::shared_ptr<Runtime>> MakeOpenAiRuntime(const std::string& url,
                                                   const std::vector<std::string>& server_command,
                                                   const std::string& api_model) {
  auto r = std::make_shared<OpenAiRuntime>(url, server_command, api_model);
  if (auto s = r->Identify(); !s) return s.error();
  return std::shared_ptr<Runtime>(std::move(r));
}

}  // namespace pipette
