// A model served over the OpenAI API, as the units of work of pipette/runtime.h: tokenization
// (the server's own /tokenize), a text request of exactly D tokens timed on pipette's clock from
// chunk arrivals, and a prefill derived from the time to first token. Used by the `openai`
// runtime and by `llamacpp-stock` for end-to-end latency through its llama-server.
//
// Not thread-safe. Destroying it stops a server it started.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipette/runtime.h"
#include "pipette/status.h"
#include "platform/proc_memory.h"
#include "runtimes/openai/openai_client.h"
#include "runtimes/openai/server_process.h"

namespace pipette {

struct ServedModelOptions {
  std::string url;                      // where the server listens (or will); required
  std::vector<std::string> server_command;  // non-empty: pipette starts the server with it
  std::string api_model;                // "model" of requests; empty: the server's first model
  std::string log_path;                 // a started server's log
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};  // start-up and each request
  bool sample_memory = false;           // sample a started server's memory every 10 ms
  std::function<void(int pid)> on_started;
};

class ServedModel {
 public:
  // Starts the server (when a command is given) and connects. Errors (stage "start"): a server
  // that does not start or serve in time, nothing listening, not OpenAI-compatible, no model.
  static Result<std::unique_ptr<ServedModel>> Open(const ServedModelOptions& options);
  ~ServedModel();

  const ServerIdentity& identity() const { return client_->identity(); }
  const std::string& api_model() const { return api_model_; }
  double start_ms() const { return start_ms_; }  // command start to serving; 0 for a URL

  // BOS included where the model adds one, as /v1/completions counts the prompt.
  Result<std::vector<int32_t>> Tokenize(const std::string& text);
  // Exactly `n` tokens forced (ignore_eos, min_tokens); the counts are the server's usage, which
  // the harness validates against the shape. Errors: the server's, or a stream that did not say
  // how many tokens it made (never guessed).
  Result<GenerateTiming> Generate(const std::string& text, int n);
  // The time to the first of one generated token: prefill as seen from outside (derived).
  Result<PrefillTiming> Prefill(const std::string& text);
  // RuntimeSession::Complete through the chat endpoint: the server applies the model's chat
  // template (its /props `chat_template` is recorded where it says), samples at the request's
  // temperature with its seed. Time to first token is the first chunk's arrival, decode time the
  // span to the last chunk; token counts are the server's usage (the chunks counted when a
  // cancelled stream sent none). Whether the server honours seeds is checked once, at the first
  // sampled request: two requests with one seed at temperature 1 must give the same text, else
  // sampling.seeded is false (the attempts are then not reproducible). Stop reasons from
  // finish_reason: "length" is truncated, anything else the model's end.
  Result<Completion> Complete(const CompletionRequest& request,
                              const std::function<bool(const std::string&)>& keep_going);

  std::optional<int> Pid() const;  // a started server's, else nullopt
  std::optional<uint64_t> PeakHostBytes();
  uint64_t PeakSwapBytes() const;
  std::optional<ResidentSplit> ResidentAtPeak();  // RuntimeSession::ResidentAtPeak
  std::string LogTail() const;
  void Stop();

 private:
  ServedModel() = default;
  Error ServerError(const Error& e);
  Result<StreamedCompletion> Chat(const std::string& message, int max_tokens, double temperature,
                                  int64_t seed,
                                  const std::function<bool(const std::string&)>& keep_going);
  Result<bool> SeedHonoured();

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<MemorySampler> sampler_;
  std::unique_ptr<OpenAiClient> client_;
  std::string api_model_;
  std::string log_path_;
  std::chrono::milliseconds timeout_{};
  double start_ms_ = 0;
  std::optional<bool> seed_honoured_;  // checked at the first sampled Complete
};

}  // namespace pipette
