// The low-level client of the `openai` runtime (DESIGN.md 2): talks to any OpenAI-compatible
// HTTP server (llama-server, vLLM, Ollama, LM Studio, MLX-LM) and times a streamed completion
// from outside the server (DESIGN.md 4.4: steady_clock, from just before the request is sent).
//
// What llama-server (pinned build) does, checked by openai_client_test.cc:
// - POST /tokenize with add_special=true prepends BOS (id 1 for llama vocabularies); without it
//   (add_special=false, or left out) it does not. /v1/completions tokenizes a text prompt with
//   BOS, so usage.prompt_tokens == Tokenize(prompt, true).size().
// - A stream sends one `data:` event per generated token, then one event with empty text,
//   finish_reason, `usage` (with include_usage) and `timings`, then `data: [DONE]`. (By its code,
//   a token that ends inside a multi-byte UTF-8 character is held back and sent with the next, so
//   non-ASCII text can give fewer chunks than tokens: count tokens from usage, not chunks.)
// - ignore_eos is honoured: exactly max_tokens tokens, finish_reason "length". cache_prompt=false
//   makes every request evaluate its whole prompt (timings.prompt_n == prompt tokens).
//
// Every error is one line naming the server (its base URL) and what to do; none names a
// command-line flag.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipette/status.h"
#include "runtimes/openai/http.h"

namespace pipette {

// The server's root URL: "http://h:p" for "http://h:p", "http://h:p/", "http://h:p/v1" or
// "http://h:p/v1/" (a path before "/v1" is kept, for servers behind a proxy). Errors (stage
// "start"): not an http:// or https:// URL.
Result<std::string> NormalizeBaseUrl(const std::string& base_url);

// What the server says about itself. Fields the server does not offer stay empty or -1; none is
// guessed.
struct ServerIdentity {
  std::string base_url;                // normalized: "http://127.0.0.1:8080" (no "/" or "/v1")
  std::vector<std::string> model_ids;  // GET /v1/models data[].id, in the server's order
  std::string server_header;           // HTTP `Server:` of that answer, e.g. "llama.cpp"
  // From llama-server's GET /props (other servers have none):
  std::string build_info;    // build number and commit as reported: the pinned build's "b1-80fb11a"
  std::string model_path;    // the model file as the server was given it
  int64_t n_ctx = -1;        // default_generation_settings.n_ctx: context per slot, tokens
  int64_t total_slots = -1;  // parallel sequences the server runs
  nlohmann::json models_json;  // the /v1/models answer, as sent (for the record)
  nlohmann::json props_json;   // the /props answer, as sent; null when the server has none
};

// One streamed completion request. Sent as {"model", "prompt", "max_tokens", "temperature": 0,
// "seed": 0, "stream": true, "stream_options": {"include_usage": true}, "cache_prompt": false,
// and with exact_tokens "ignore_eos": true, "min_tokens": max_tokens}. Servers ignore the
// extensions they do not know (cache_prompt is llama-server's, ignore_eos llama-server's and
// vLLM's, min_tokens vLLM's), so the caller must check completion_tokens.
struct HttpCompletionRequest {
  std::string prompt;
  int max_tokens = 16;
  // Ask the server to generate exactly max_tokens tokens: end-of-generation suppressed
  // (DESIGN.md 4.2 step 5).
  bool exact_tokens = true;
  // The "model" field; empty: omitted (a server serving one model needs none).
  std::string api_model;
  // Bounds the whole request, stream included; the server's first byte and its last alike.
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  // Error::stage of any failure.
  std::string stage = "generate";
  // A chat request instead: POST /v1/chat/completions with one user message (`prompt`), the
  // server applying the model's chat template; text from choices[0].delta.content. llama-server
  // is asked to leave reasoning in the text ("reasoning_format": "none"): the scorer strips it.
  bool chat = false;
  double temperature = 0;
  int64_t seed = 0;
  // Asked with the text so far every kKeepGoingChunks chunks; false cancels the stream (the
  // connection is closed; StreamedCompletion::stopped).
  std::function<bool(const std::string&)> keep_going;
  static constexpr int kKeepGoingChunks = 16;
};

// One event of the stream that carried text or token ids.
struct CompletionChunk {
  double arrival_ms = 0;           // since the request started (StreamedCompletion::started)
  std::string text;                // choices[0].text; may be "" when only token ids came
  std::vector<int32_t> token_ids;  // choices[0].token_ids or .tokens where a server sends them
};

// llama-server's own timing of the request (its last event's `timings`), ms and tokens.
struct ServerTimings {
  int64_t prompt_n = -1;  // prompt tokens evaluated (cached ones excluded)
  double prompt_ms = -1;
  int64_t predicted_n = -1;  // tokens generated
  double predicted_ms = -1;
};

struct StreamedCompletion {
  std::chrono::steady_clock::time_point started;  // just before the request was sent
  std::vector<CompletionChunk> chunks;            // in arrival order; times never decrease
  double end_ms = 0;               // [DONE] (or the end of a stream that finished without it)
  int64_t prompt_tokens = -1;      // usage.prompt_tokens; -1 when the server sent no usage
  int64_t completion_tokens = -1;  // usage.completion_tokens; -1 when absent
  std::string finish_reason;       // "length", "stop", ...; "" if never sent
  bool stopped = false;            // the request's keep_going cancelled the stream
  bool has_server_timings = false;
  ServerTimings server_timings;  // meaningful only with has_server_timings

  // All chunks' text, in order.
  std::string Text() const;
};

// Not thread-safe (one request at a time; Tokenize() remembers which request form the server
// understood). Move-only; holds one keep-alive connection. Requests made while the user
// interrupts pipette (platform/interrupt.h) stop with an "interrupted" error.
class OpenAiClient {
 public:
  // Called with each chunk as it arrives, on the calling thread, inside the timed region (keep it
  // short).
  using ChunkObserver = std::function<void(const CompletionChunk&)>;

  // Checks that an OpenAI-compatible server answers at `base_url` ("http://host:port", with or
  // without a trailing "/" or "/v1"): GET /v1/models must answer JSON with a "data" list; then
  // reads llama-server's GET /props where offered. `timeout` bounds each of these requests and
  // every later Tokenize(). Errors (stage "start"): not an http(s) URL, nothing listens, no
  // answer within `timeout`, a non-2xx status, a body that is not JSON or has no "data" list.
  static Result<OpenAiClient> Connect(const std::string& base_url,
                                      std::chrono::milliseconds timeout);

  const ServerIdentity& identity() const { return identity_; }

  // The server's token ids for `text`; with `add_special`, the special tokens the model adds
  // (BOS) are included. Tries llama-server's form (POST /tokenize {"content", "add_special"}),
  // then vLLM's ({"model", "prompt", "add_special_tokens"}), and keeps using the first that
  // works. Errors (stage "input"): the server has no /tokenize endpoint (so prompts of an exact
  // token count cannot be built), transport failures, an answer without a "tokens" list.
  Result<std::vector<int32_t>> Tokenize(const std::string& text, bool add_special);

  // POST /v1/completions, streamed and timed (see HttpCompletionRequest). `on_chunk` may be empty.
  // Errors (stage request.stage): nothing listens, the connection is cut before the stream
  // finished, no answer or no end within request.timeout, a non-2xx status (with the server's
  // own message), an answer that is not an event stream, an event that is not JSON or reports
  // an error, a stream that ends without [DONE] or a finish_reason.
  Result<StreamedCompletion> Complete(const HttpCompletionRequest& request,
                                      const ChunkObserver& on_chunk = {});

 private:
  enum class TokenizeForm { kUnknown, kLlamaServer, kVllm };
  OpenAiClient(HttpClient http, ServerIdentity identity, std::chrono::milliseconds timeout);
  // Sends one request form. Sets *rejected (and returns an Error) when the server did not
  // understand this form, so that the other may be tried.
  Result<std::vector<int32_t>> TokenizeAs(TokenizeForm form, const std::string& text,
                                          bool add_special, bool* rejected);

  HttpClient http_;
  ServerIdentity identity_;
  std::chrono::milliseconds timeout_;
  TokenizeForm tokenize_form_ = TokenizeForm::kUnknown;
};

}  // namespace pipette
