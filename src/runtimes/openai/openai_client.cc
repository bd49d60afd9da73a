#include "runtimes/openai/openai_client.h"

#include <curl/curl.h>

#include <cctype>

#include <fmt/format.h>

#include <optional>

#include "base/json_depth.h"
#include "platform/interrupt.h"

namespace pipette {
namespace {

constexpr char kStartStage[] = "start";
constexpr char kInputStage[] = "input";
constexpr size_t kMaxQuoted = 200;  // characters of a server's text quoted in an error

// `s` on one line, cut to `max` characters: a server's text must not break the one-line error.
std::string OneLine(std::string_view s, size_t max = kMaxQuoted) {
  std::string out;
  for (char c : s) {
    if (out.size() >= max) {
      // Drop a multi-byte UTF-8 character the cut went through (and the one before it at worst).
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80)
        out.pop_back();
      if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
      return out + "...";
    }
    const bool space = c == '\n' || c == '\r' || c == '\t';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string Seconds(std::chrono::milliseconds ms) {
  return fmt::format("{:g} s", static_cast<double>(ms.count()) / 1000.0);
}

double MsSince(std::chrono::steady_clock::time_point start,
               std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t - start).count();
}

// "text/html" of "text/html; charset=utf-8".
std::string MediaType(const std::string& content_type) {
  return OneLine(content_type.substr(0, content_type.find(';')), 60);
}

// The server's own error text from an error body: {"error": {"message"}} (OpenAI, llama-server,
// newer vLLM), {"error": "..."} (Ollama), {"message"} (older vLLM), {"detail"} (FastAPI), or a
// short plain-text body. "" when there is none.
std::string ServerMessage(const HttpResponse& r) {
  const auto j = ParseBoundedJson(r.body);
  if (j.is_object()) {
    const auto pick = [](const nlohmann::json& v) -> std::string {
      if (v.is_string()) return v.get<std::string>();
      if (v.is_object() && v.contains("message") && v["message"].is_string()) return v["message"];
      if (v.is_array() && !v.empty()) return v[0].dump();  // FastAPI's validation details
      return "";
    };
    for (const char* key : {"error", "message", "detail"}) {
      if (j.contains(key)) {
        if (std::string m = pick(j[key]); !m.empty()) return OneLine(m);
      }
    }
    return "";
  }
  if (MediaType(r.content_type) == "text/plain") return OneLine(r.body);
  return "";
}

// " (the server's message)" or "".
std::string Quoted(const HttpResponse& r) {
  const std::string m = ServerMessage(r);
  return m.empty() ? "" : " (" + m + ")";
}

// The one line for a request that got no complete answer. `what` is "GET /v1/models" etc.
Error TransportError(const std::string& root, const std::string& what, const HttpResponse& r,
                     std::chrono::milliseconds timeout, const std::string& stage) {
  switch (r.failure) {
    case TransportFailure::kNoConnection:
      return MakeError(fmt::format("no server answers at {}: {}; start it or check the URL", root,
                                   r.failure_detail),
                       stage);
    case TransportFailure::kTimedOut:
      return MakeError(fmt::format("{}: {} did not {} within {}", root, what,
                                   r.status == 0 ? "answer" : "finish", Seconds(timeout)),
                       stage);
    case TransportFailure::kCut:
      return MakeError(fmt::format("{}: the server closed the connection during {} ({}); check "
                                   "the server's log",
                                   root, what, r.failure_detail),
                       stage);
    case TransportFailure::kAborted:
      return MakeError(fmt::format("{}: {} interrupted by the user", root, what), stage);
    default:
      return MakeError(fmt::format("{}: {} failed: {}", root, what, r.failure_detail), stage);
  }
}

// The advice after "GET /v1/models answered HTTP <status>".
std::string ModelsStatusAdvice(long status) {
  if (status == 401 || status == 403)
    return "the server wants an API key, which pipette does not send";
  if (status == 503) return "the server is not ready (still loading its model?); wait and retry";
  if (status >= 500) return "the server failed; check its log";
  return "not an OpenAI-compatible server";
}

// Reads a GET /v1/models answer into `id`; an Error when it is not a model list.
Status ReadModels(const std::string& root, const HttpResponse& r, ServerIdentity* id) {
  const std::string what = root + ": GET /v1/models answered";
  auto j = ParseBoundedJson(r.body);
  if (j.is_discarded()) {
    const std::string type = MediaType(r.content_type);
    if (type.find("json") != std::string::npos) {
      return MakeError(what + " with invalid JSON: not an OpenAI-compatible server", kStartStage);
    }
    return MakeError(fmt::format("{} with {}, not JSON: not an OpenAI-compatible server", what,
                                 type.empty() ? "a body" : type),
                     kStartStage);
  }
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array()) {
    return MakeError(what +
                         " JSON without a \"data\" list of models: not an OpenAI-compatible "
                         "server",
                     kStartStage);
  }
  for (const auto& m : j["data"]) {
    if (m.is_object() && m.contains("id") && m["id"].is_string()) id->model_ids.push_back(m["id"]);
  }
  id->server_header = r.server;
  id->models_json = std::move(j);
  return Status::Ok();
}

// Fills what llama-server's GET /props offers; a server without it changes nothing.
void ReadProps(HttpClient& http, const std::string& root, std::chrono::milliseconds timeout,
               ServerIdentity* id) {
  const HttpResponse r = http.Get(root + "/props", timeout);
  if (!r.ok()) return;
  auto j = ParseBoundedJson(r.body);
  if (!j.is_object()) return;
  if (j.contains("build_info") && j["build_info"].is_string()) id->build_info = j["build_info"];
  if (j.contains("model_path") && j["model_path"].is_string()) id->model_path = j["model_path"];
  if (j.contains("total_slots") && j["total_slots"].is_number_integer()) {
    id->total_slots = j["total_slots"];
  }
  const auto& settings = j.contains("default_generation_settings")
                             ? j["default_generation_settings"]
                             : nlohmann::json::object();
  if (settings.is_object() && settings.contains("n_ctx") && settings["n_ctx"].is_number_integer()) {
    id->n_ctx = settings["n_ctx"];
  }
  id->props_json = std::move(j);
}

int64_t IntOr(const nlohmann::json& obj, const char* key, int64_t fallback) {
  return obj.contains(key) && obj[key].is_number_integer() ? obj[key].get<int64_t>() : fallback;
}

double NumberOr(const nlohmann::json& obj, const char* key, double fallback) {
  return obj.contains(key) && obj[key].is_number() ? obj[key].get<double>() : fallback;
}

// Token ids in a list of ints, or of {"id": int} (llama-server's with_pieces form).
std::optional<std::vector<int32_t>> TokenIds(const nlohmann::json& list) {
  if (!list.is_array()) return std::nullopt;
  std::vector<int32_t> ids;
  for (const auto& t : list) {
    if (t.is_number_integer()) {
      ids.push_back(t.get<int32_t>());
    } else if (t.is_object() && t.contains("id") && t["id"].is_number_integer()) {
      ids.push_back(t["id"].get<int32_t>());
    } else {
      return std::nullopt;
    }
  }
  return ids;
}

// Reads the events of one completion stream as they arrive.
class StreamReader {
 public:
  StreamReader(std::string root, std::chrono::steady_clock::time_point started,
               const OpenAiClient::ChunkObserver& on_chunk, std::string stage,
               const std::function<bool(const std::string&)>& keep_going)
      : root_(std::move(root)), on_chunk_(on_chunk), stage_(std::move(stage)),
        keep_going_(keep_going) {
    out_.started = started;
  }

  // The HttpClient line handler: false stops the stream (error() then says why).
  bool OnLine(const SseLine& line) {
    if (line.field == "data") return OnData(line);
    if (line.field == "error") {  // llama-server's way of failing inside a started stream
      return Fail("the server reported an error mid-stream: " + ErrorText(line.value));
    }
    if (line.field == "event" || line.field == "id" || line.field == "retry") return true;
    return Fail(fmt::format("the server sent a line that is not a Server-Sent Event: '{}'",
                            OneLine(line.field + ":" + line.value, 80)));
  }

  const std::optional<Error>& error() const { return error_; }
  bool done() const { return done_; }
  int events() const { return events_; }
  StreamedCompletion& result() { return out_; }

 private:
  bool OnData(const SseLine& line) {
    ++events_;
    if (done_) return true;
    if (line.value == "[DONE]") {
      done_ = true;
      out_.end_ms = MsSince(out_.started, line.arrival);
      return true;
    }
    const auto j = ParseBoundedJson(line.value);
    if (!j.is_object()) {
      return Fail(fmt::format("the server sent an event that is not a JSON object: '{}'",
                              OneLine(line.value, 80)));
    }
    if (j.contains("error")) {  // vLLM reports a failure inside a stream as a data event
      return Fail("the server reported an error mid-stream: " + ErrorText(j["error"].dump()));
    }
    if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
      OnChoice(j["choices"][0], line.arrival);
      if (out_.stopped) return false;
    }
    if (j.contains("usage") && j["usage"].is_object()) {
      out_.prompt_tokens = IntOr(j["usage"], "prompt_tokens", out_.prompt_tokens);
      out_.completion_tokens = IntOr(j["usage"], "completion_tokens", out_.completion_tokens);
    }
    if (j.contains("timings") && j["timings"].is_object()) {
      const auto& t = j["timings"];
      out_.has_server_timings = true;
      out_.server_timings = {IntOr(t, "prompt_n", -1), NumberOr(t, "prompt_ms", -1),
                             IntOr(t, "predicted_n", -1), NumberOr(t, "predicted_ms", -1)};
    }
    return true;
  }

  void OnChoice(const nlohmann::json& choice, std::chrono::steady_clock::time_point arrival) {
    if (!choice.is_object()) return;
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
      out_.finish_reason = choice["finish_reason"];
    }
    CompletionChunk chunk;
    chunk.arrival_ms = MsSince(out_.started, arrival);
    if (choice.contains("text") && choice["text"].is_string()) chunk.text = choice["text"];
    if (choice.contains("delta") && choice["delta"].is_object()) {  // a chat stream
      const auto& delta = choice["delta"];
      if (delta.contains("content") && delta["content"].is_string()) chunk.text = delta["content"];
    }
    for (const char* key : {"token_ids", "tokens"}) {
      if (!choice.contains(key)) continue;
      if (auto ids = TokenIds(choice[key])) chunk.token_ids = std::move(*ids);
    }
    if (chunk.text.empty() && chunk.token_ids.empty()) return;
    text_ += chunk.text;
    out_.chunks.push_back(std::move(chunk));
    if (on_chunk_) on_chunk_(out_.chunks.back());
    if (keep_going_ && out_.chunks.size() % HttpCompletionRequest::kKeepGoingChunks == 0 &&
        !keep_going_(text_)) {
      out_.stopped = true;
      out_.end_ms = MsSince(out_.started, std::chrono::steady_clock::now());
    }
  }

  // The "message" of a JSON error value, else the value itself, on one line.
  static std::string ErrorText(const std::string& value) {
    const auto j = ParseBoundedJson(value);
    if (j.is_object() && j.contains("message") && j["message"].is_string()) {
      return OneLine(j["message"].get<std::string>());
    }
    return OneLine(value);
  }

  bool Fail(const std::string& message) {
    error_ = MakeError(root_ + ": " + message, stage_);
    return false;
  }

  std::string root_;
  const OpenAiClient::ChunkObserver& on_chunk_;
  std::string stage_;
  const std::function<bool(const std::string&)>& keep_going_;
  std::string text_;  // all chunks' text so far
  StreamedCompletion out_;
  std::optional<Error> error_;
  bool done_ = false;
  int events_ = 0;
};

nlohmann::json CompletionBody(const HttpCompletionRequest& r) {
  nlohmann::json body = {{"max_tokens", r.max_tokens},
                         {"temperature", r.temperature},
                         {"seed", r.seed},
                         {"stream", true},
                         {"stream_options", {{"include_usage", true}}},
                         {"cache_prompt", false}};  // llama-server: no reuse across repetitions
  if (r.chat) {
    body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", r.prompt}}});
    body["reasoning_format"] = "none";
  } else {
    body["prompt"] = r.prompt;
  }
  if (!r.api_model.empty()) body["model"] = r.api_model;
  if (r.exact_tokens) {
    body["ignore_eos"] = true;
    body["min_tokens"] = r.max_tokens;
  }
  return body;
}

}  // namespace

Result<std::string> NormalizeBaseUrl(const std::string& base_url) {
  std::string u = OneLine(base_url, 1000);
  // Schemes are case-insensitive (RFC 3986): "HTTP://h" is http.
  if (const size_t colon = u.find("://"); colon != std::string::npos && colon < 6) {
    for (size_t i = 0; i < colon; ++i) u[i] = static_cast<char>(std::tolower(u[i]));
  }
  if (!u.starts_with("http://") && !u.starts_with("https://")) {
    return MakeError(fmt::format("'{}' is not an http:// or https:// URL; give the server's "
                                 "address, e.g. http://127.0.0.1:8080",
                                 u),
                     kStartStage);
  }
  // libcurl's own URL parser says whether it is a URL it can request: a host, a port in range.
  CURLU* parsed = curl_url();
  const CURLUcode rc = parsed ? curl_url_set(parsed, CURLUPART_URL, u.c_str(), 0) : CURLUE_OUT_OF_MEMORY;
  char* host = nullptr;
  const bool has_host = rc == CURLUE_OK &&
                        curl_url_get(parsed, CURLUPART_HOST, &host, 0) == CURLUE_OK && host &&
                        *host;
  curl_free(host);
  curl_url_cleanup(parsed);
  if (rc != CURLUE_OK || !has_host) {
    return MakeError(fmt::format("'{}' is not a URL a server can answer at ({}); give the "
                                 "server's address, e.g. http://127.0.0.1:8080",
                                 u, rc != CURLUE_OK ? curl_url_strerror(rc) : "no host"),
                     kStartStage);
  }
  while (u.ends_with('/')) u.pop_back();
  if (u.ends_with("/v1")) u.resize(u.size() - 3);
  while (u.ends_with('/')) u.pop_back();
  return u;
}

std::string StreamedCompletion::Text() const {
  std::string text;
  for (const auto& c : chunks) text += c.text;
  return text;
}

OpenAiClient::OpenAiClient(HttpClient http, ServerIdentity identity,
                           std::chrono::milliseconds timeout)
    : http_(std::move(http)), identity_(std::move(identity)), timeout_(timeout) {}

Result<OpenAiClient> OpenAiClient::Connect(const std::string& base_url,
                                           std::chrono::milliseconds timeout) {
  Result<std::string> root = NormalizeBaseUrl(base_url);
  if (!root.ok()) return root.error();
  Result<HttpClient> http = HttpClient::Create();
  if (!http.ok()) return Error{http.error().message, kStartStage};
  http->SetAbortCheck([] { return Interrupted(); });

  const HttpResponse models = http->Get(*root + "/v1/models", timeout);
  if (models.failure != TransportFailure::kNone) {
    return TransportError(*root, "GET /v1/models", models, timeout, kStartStage);
  }
  if (!models.ok()) {
    return MakeError(fmt::format("{}: GET /v1/models answered HTTP {}{}: {}", *root, models.status,
                                 Quoted(models), ModelsStatusAdvice(models.status)),
                     kStartStage);
  }
  ServerIdentity id;
  id.base_url = *root;
  if (Status s = ReadModels(*root, models, &id); !s.ok()) return s.error();
  ReadProps(*http, *root, timeout, &id);
  return OpenAiClient(std::move(*http), std::move(id), timeout);
}

Result<std::vector<int32_t>> OpenAiClient::TokenizeAs(TokenizeForm form, const std::string& text,
                                                      bool add_special, bool* rejected) {
  *rejected = false;
  nlohmann::json body;
  if (form == TokenizeForm::kLlamaServer) {
    body = {{"content", text}, {"add_special", add_special}};
  } else {
    body = {{"prompt", text}, {"add_special_tokens", add_special}};
    if (!identity_.model_ids.empty()) body["model"] = identity_.model_ids.front();
  }
  const std::string& root = identity_.base_url;
  const HttpResponse r = http_.PostJson(root + "/tokenize", body.dump(), timeout_);
  if (r.failure != TransportFailure::kNone) {
    return TransportError(root, "POST /tokenize", r, timeout_, kInputStage);
  }
  const std::string no_tokenizer = fmt::format(
      "{} offers no /tokenize endpoint (HTTP {}), so prompts of an exact token count cannot be "
      "built; use a server that has one (llama-server, vLLM)",
      root, r.status);
  if (r.status == 404 || r.status == 405 || r.status == 501) {
    return MakeError(no_tokenizer, kInputStage);  // neither form can work: same path
  }
  // While probing, a rejected request or an answer without tokens means "try the other form".
  const bool probing = tokenize_form_ == TokenizeForm::kUnknown;
  if (probing && (r.status == 400 || r.status == 422)) {
    *rejected = true;
    return MakeError(no_tokenizer, kInputStage);
  }
  if (!r.ok()) {
    return MakeError(
        fmt::format("{}: POST /tokenize answered HTTP {}{}", root, r.status, Quoted(r)),
        kInputStage);
  }
  const auto j = ParseBoundedJson(r.body);
  std::optional<std::vector<int32_t>> ids;
  if (j.is_object() && j.contains("tokens")) ids = TokenIds(j["tokens"]);
  // No list, or none for a non-empty text: the server ignored this form's fields (llama-server
  // reads vLLM's form as an empty "content").
  if (!ids || (ids->empty() && !text.empty())) {
    *rejected = probing;
    return MakeError(fmt::format("{}: POST /tokenize answered without a list of tokens for a "
                                 "non-empty text; check that the server is OpenAI-compatible",
                                 root),
                     kInputStage);
  }
  return *std::move(ids);
}

Result<std::vector<int32_t>> OpenAiClient::Tokenize(const std::string& text, bool add_special) {
  bool rejected = false;
  if (tokenize_form_ != TokenizeForm::kUnknown) {
    return TokenizeAs(tokenize_form_, text, add_special, &rejected);
  }
  for (TokenizeForm form : {TokenizeForm::kLlamaServer, TokenizeForm::kVllm}) {
    auto ids = TokenizeAs(form, text, add_special, &rejected);
    if (ids.ok()) tokenize_form_ = form;
    if (ids.ok() || !rejected) return ids;
  }
  return MakeError(fmt::format("{} offers no /tokenize endpoint that takes llama-server's or "
                               "vLLM's request, so prompts of an exact token count cannot be "
                               "built; use a server that has one (llama-server, vLLM)",
                               identity_.base_url),
                   kInputStage);
}

Result<StreamedCompletion> OpenAiClient::Complete(const HttpCompletionRequest& request,
                                                  const ChunkObserver& on_chunk) {
  const std::string& root = identity_.base_url;
  const std::string body = CompletionBody(request).dump();
  const std::string path = request.chat ? "/v1/chat/completions" : "/v1/completions";
  const std::string what = "POST " + path;
  const auto started = std::chrono::steady_clock::now();
  StreamReader reader(root, started, on_chunk, request.stage, request.keep_going);
  const HttpResponse r =
      http_.PostJsonStream(root + path, body, request.timeout,
                           [&reader](const SseLine& line) { return reader.OnLine(line); });
  const auto ended = std::chrono::steady_clock::now();

  if (reader.error()) return *reader.error();
  // Cancelled by the caller: what arrived is the answer (the server stops when we hang up).
  if (reader.result().stopped) return std::move(reader.result());
  const bool finished = reader.done() || !reader.result().finish_reason.empty();
  if (r.failure != TransportFailure::kNone && !reader.done()) {
    if (r.failure == TransportFailure::kCut && r.event_stream) {
      return MakeError(fmt::format("{}: the server closed the stream after {} chunks without "
                                   "finishing ({}); check the server's log",
                                   root, reader.events(), r.failure_detail),
                       request.stage);
    }
    if (r.failure == TransportFailure::kTimedOut && r.event_stream) {
      return MakeError(fmt::format("{}: {} did not finish within {} ({} chunks received)", root,
                                   what, Seconds(request.timeout), reader.events()),
                       request.stage);
    }
    return TransportError(root, what, r, request.timeout, request.stage);
  }
  if (r.status < 200 || r.status >= 300) {
    const std::string message = ServerMessage(r);
    return MakeError(fmt::format("{}: {} answered HTTP {}: {}", root, what, r.status,
                                 message.empty() ? "no message; check the server's log" : message),
                     request.stage);
  }
  if (!r.event_stream) {
    return MakeError(
        fmt::format("{}: {} answered with {}, not an event stream: not an "
                    "OpenAI-compatible server",
                    root, what,
                    r.content_type.empty() ? "no content type" : MediaType(r.content_type)),
        request.stage);
  }
  if (!finished) {
    return MakeError(fmt::format("{}: the server closed the stream after {} chunks without "
                                 "finishing; check the server's log",
                                 root, reader.events()),
                     request.stage);
  }
  StreamedCompletion out = std::move(reader.result());
  if (!reader.done()) out.end_ms = MsSince(started, ended);
  return out;
}

}  // namespace pipette
