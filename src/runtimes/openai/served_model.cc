#include "runtimes/openai/served_model.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "platform/file_tail.h"
#include "platform/listening.h"
#include "runtimes/common/resident.h"

namespace pipette {

namespace {

// The port of "http://host:port[/...]", 0 when the URL names none.
int PortOf(const std::string& url) {
  const size_t host = url.find("://");
  const size_t start = host == std::string::npos ? 0 : host + 3;
  const size_t end = url.find('/', start);
  const std::string authority = url.substr(start, end == std::string::npos ? end : end - start);
  const size_t colon = authority.rfind(':');
  if (colon == std::string::npos || authority.back() == ']') return 0;
  try {
    return std::stoi(authority.substr(colon + 1));
  } catch (...) {
    return 0;
  }
}

}  // namespace

Result<std::unique_ptr<ServedModel>> ServedModel::Open(const ServedModelOptions& o) {
  std::unique_ptr<ServedModel> m(new ServedModel);
  m->log_path_ = o.log_path;
  m->timeout_ = o.timeout;
  if (!o.server_command.empty()) {
    auto server = ServerProcess::Start(o.server_command, o.url, o.log_path, o.timeout);
    if (!server) return server.error();
    m->server_ = std::make_unique<ServerProcess>(std::move(*server));
    m->start_ms_ = m->server_->ready_ms();
    // Something answered at the URL; it must be the server just started, not another one that
    // holds the port (ours then ends, failing to bind it): wait until ours is seen listening
    // there, or has ended. A server whose listening socket is a child's is not seen: after 5 s
    // alive it is taken at its word.
    const int port = PortOf(o.url);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (port > 0 && m->server_->Running() && !ListensOnPort(m->server_->Pid(), port) &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!m->server_->Running()) {
      const ExitInfo exit = m->server_->Stop();
      return MakeError(fmt::format("the server command ended ({}) but something else answers at "
                                   "{}: the port is taken; give a free port (or {{port}})",
                                   exit.Describe(), o.url),
                       "start");
    }
    if (o.sample_memory) m->sampler_ = std::make_unique<MemorySampler>(m->server_->Pid(), 10);
    if (o.on_started) o.on_started(m->server_->Pid());
  }
  auto client = OpenAiClient::Connect(o.url, o.timeout);
  if (!client) return client.error();
  m->client_ = std::make_unique<OpenAiClient>(std::move(*client));
  const auto& ids = m->client_->identity().model_ids;
  if (!o.api_model.empty()) {
    if (std::find(ids.begin(), ids.end(), o.api_model) == ids.end()) {
      return MakeError(fmt::format("{} serves no model named '{}'; it serves: {}",
                                   m->client_->identity().base_url, o.api_model,
                                   fmt::join(ids, ", ")),
                       "start");
    }
    m->api_model_ = o.api_model;
  } else if (ids.empty()) {
    return MakeError(m->client_->identity().base_url + " serves no model (its /v1/models is empty)",
                     "start");
  } else {
    m->api_model_ = ids.front();
  }
  return m;
}

ServedModel::~ServedModel() { Stop(); }

// A request that failed because the server pipette started is gone says so (how it ended, and
// its log), rather than giving advice for a server the user runs.
Error ServedModel::ServerError(const Error& e) {
  if (!server_ || server_->Running()) return e;
  const ExitInfo exit = server_->Stop();
  return MakeError(fmt::format("the server pipette started ended ({}) during {}{}",
                               exit.Describe(), e.stage.empty() ? "a request" : e.stage,
                               log_path_.empty() ? "" : "; its log: " + log_path_),
                   e.stage);
}

Result<std::vector<int32_t>> ServedModel::Tokenize(const std::string& text) {
  auto t = client_->Tokenize(text, true);
  if (!t) return ServerError(t.error());
  return t;
}

Result<GenerateTiming> ServedModel::Generate(const std::string& text, int n) {
  HttpCompletionRequest r;
  r.prompt = text;
  r.max_tokens = n;
  r.api_model = api_model_;
  r.timeout = timeout_;
  auto c = client_->Complete(r);
  if (!c) return ServerError(c.error());
  if (c->prompt_tokens < 0 || c->completion_tokens < 0) {
    return MakeError(identity().base_url + " did not report its token counts (usage), so the "
                     "request's shape cannot be checked",
                     "validate");
  }
  if (c->completion_tokens != n) {
    return MakeError(fmt::format("{} generated {} tokens (finish_reason \"{}\"), not the {} asked "
                                 "for: it does not force the count (ignore_eos, min_tokens)",
                                 identity().base_url, c->completion_tokens, c->finish_reason, n),
                     "validate");
  }
  GenerateTiming g;
  g.prompt_tokens = static_cast<int>(c->prompt_tokens);
  g.generated_tokens = static_cast<int>(c->completion_tokens);
  g.end_ms = c->end_ms;
  // request_ms stays unknown: pipette's clock is the only one here, so there is no inner timed
  // region to compare with (no harness_overhead).
  for (const CompletionChunk& chunk : c->chunks) g.token_ms.push_back(chunk.arrival_ms);
  if (!g.token_ms.empty()) g.end_ms = std::max(g.end_ms, g.token_ms.back());
  g.text = c->Text();
  return g;
}

Result<PrefillTiming> ServedModel::Prefill(const std::string& text) {
  auto g = Generate(text, 1);
  if (!g) return g.error();
  return PrefillTiming{g->token_ms.front(), true, -1};
}

Result<StreamedCompletion> ServedModel::Chat(
    const std::string& message, int max_tokens, double temperature, int64_t seed,
    const std::function<bool(const std::string&)>& keep_going) {
  HttpCompletionRequest r;
  r.chat = true;
  r.prompt = message;
  r.max_tokens = max_tokens;
  r.exact_tokens = false;
  r.temperature = temperature;
  r.seed = seed;
  r.keep_going = keep_going;
  r.api_model = api_model_;
  r.timeout = timeout_;
  auto c = client_->Complete(r);
  if (!c) return ServerError(c.error());
  return c;
}

Result<bool> ServedModel::SeedHonoured() {
  if (seed_honoured_) return *seed_honoured_;
  constexpr std::string_view kProbe = "Tell me a short story.";
  std::string first;
  for (int i = 0; i < 2; ++i) {
    auto c = Chat(std::string(kProbe), 16, 1.0, 1234567, {});
    if (!c) return c.error();
    if (i == 0) first = c->Text();
    else seed_honoured_ = c->Text() == first;
  }
  return *seed_honoured_;
}

Result<Completion> ServedModel::Complete(
    const CompletionRequest& request, const std::function<bool(const std::string&)>& keep_going) {
  bool seeded = true;
  if (request.temperature > 0) {
    auto honoured = SeedHonoured();
    if (!honoured) return honoured.error();
    seeded = *honoured;
  }
  auto s = Chat(request.message, request.max_tokens, request.temperature, request.seed,
                keep_going);
  if (!s) {
    // A prompt the context cannot hold is that attempt's fault, not the server's: stage
    // "context" keeps the session (llama-server and vLLM both answer 400 and say so).
    const std::string& m = s.error().message;
    if (m.find("HTTP 400") != std::string::npos &&
        (m.find("context size") != std::string::npos ||
         m.find("context length") != std::string::npos)) {
      return MakeError(m, "context");
    }
    return s.error();
  }
  Completion c;
  c.text = s->Text();
  c.stop = s->stopped                    ? "stopped"
           : s->finish_reason == "length" ? "truncated"
                                          : "eos";
  c.prompt_tokens = static_cast<int>(std::max<int64_t>(s->prompt_tokens, 0));
  c.output_tokens = s->completion_tokens >= 0 ? static_cast<int>(s->completion_tokens)
                                              : static_cast<int>(s->chunks.size());
  if (!s->chunks.empty()) {
    c.time_to_first_token_ms = s->chunks.front().arrival_ms;
    c.decode_ms = s->chunks.back().arrival_ms - s->chunks.front().arrival_ms;
  }
  c.total_ms = std::max(s->end_ms, s->chunks.empty() ? 0.0 : s->chunks.back().arrival_ms);
  const nlohmann::json& props = identity().props_json;
  c.prompt_format = "server_chat_template";
  if (props.is_object() && props.contains("chat_template") && props["chat_template"].is_string()) {
    c.chat_template = props["chat_template"];
  }
  c.sampling = {{"temperature", request.temperature},
                {"seed", request.seed},
                {"seeded", seeded},
                {"applied_by", "server"}};
  if (!seeded) {
    c.sampling["seed_check"] =
        "two requests with one seed at temperature 1 gave different text: the server ignores "
        "the seed, so attempts are not reproducible";
  }
  return c;
}

std::optional<int> ServedModel::Pid() const {
  if (!server_) return std::nullopt;
  return server_->Pid();
}

std::optional<uint64_t> ServedModel::PeakHostBytes() {
  if (!server_) return std::nullopt;
  if (sampler_) {
    sampler_->Sample();
    return sampler_->PeakBytes();
  }
  const auto m = ReadProcMemory(server_->Pid());
  if (!m) return std::nullopt;
  return std::max(m->vm_hwm, m->vm_rss + m->vm_swap);
}

uint64_t ServedModel::PeakSwapBytes() const { return sampler_ ? sampler_->PeakSwapBytes() : 0; }

std::optional<ResidentSplit> ServedModel::ResidentAtPeak() {
  if (!server_) return std::nullopt;
  return ResidentAtPeakOf(sampler_.get(), server_->Pid());
}

std::string ServedModel::LogTail() const { return log_path_.empty() ? "" : ReadFileTail(log_path_); }

void ServedModel::Stop() {
  if (sampler_) sampler_->Stop();
  if (server_) server_->Stop();
}

}  // namespace pipette
