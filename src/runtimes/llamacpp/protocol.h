// The wire protocol between the harness's `llamacpp` runtime and pipette-llamacpp-driver
// (`pipette-driver/1`, docs/driver-protocol.md): one JSON object per line each way, request then
// reply. Both sides include this header, so a field is spelled in one place.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/status.h"

namespace pipette::protocol {

inline constexpr const char* kProtocol = "pipette-driver/1";

// Commands (the request's "cmd").
inline constexpr const char* kLoad = "load";
inline constexpr const char* kTokenize = "tokenize";
inline constexpr const char* kPrefill = "prefill";
inline constexpr const char* kDecode = "decode";
inline constexpr const char* kGenerate = "generate";
inline constexpr const char* kLogProbs = "logprobs";
inline constexpr const char* kComplete = "complete";  // a sampled completion of a user message
inline constexpr const char* kContinue = "continue";  // more tokens of the running completion
// Parallel completions (eval --parallel N): sequences of one batch, each in a slot 0..n_seq-1.
inline constexpr const char* kSeqStart = "seq_start";  // a completion in a free slot
inline constexpr const char* kSeqStep = "seq_step";    // decode steps of every running slot
inline constexpr const char* kSeqStop = "seq_stop";    // end a slot's completion (caller's stop)
inline constexpr const char* kClear = "clear";
inline constexpr const char* kWarnings = "warnings";
inline constexpr const char* kQuit = "quit";
inline constexpr const char* kMemory = "memory";  // the driver's own memory, read on its device
inline constexpr const char* kProbe = "probe";    // device readings (platform/probe.h)

// Engine settings of a load request, by their runtime.settings names (DESIGN.md 4.2 step 2). The
// defaults are the driver's; the harness always sends every recorded setting.
struct DriverSettings {
  int threads = 1;         // CPU threads for prefill and decode
  int n_gpu_layers = -1;   // layers offloaded to a GPU; -1 = all when a GPU backend exists, else 0
  bool mmap = false;       // false: weights read into resident memory (comparable memory figures)
  std::string flash_attn = "auto";  // "auto" | "on" | "off"
  int n_batch = 2048;      // logical batch (tokens per llama_decode call during prefill)
  int n_ubatch = 512;      // physical batch
  std::string type_k = "f16";  // KV cache types, ggml type names
  std::string type_v = "f16";
  int n_ctx = 0;           // context size in tokens; 0 = the model's training context
  int poll = 50;           // threadpool busy-poll level 0..100 (llama-bench's default)
  // Fault injection for tests of the soak benchmark: every generate request allocates and touches
  // this many bytes that are never freed (an artificial leak). 0 in every real measurement.
  int64_t test_leak_bytes = 0;
  // CPUs the driver process runs on, as taskset -c lists them ("0-3"); empty: any. Applied to
  // the whole process before the model loads, so llama.cpp's and OpenMP's threads inherit it.
  std::string cpus;
  // Sequences decoded together (eval --parallel; not a runtime setting: the harness adds it to
  // the load request of an eval cell). The context then holds n_seq sequences of n_ctx tokens
  // each, every one in its own KV stream (llama.cpp's n_seq_max, kv_unified off), so that each
  // sequence sees the context, positions and cells one sequence alone would. 1..64.
  int n_seq = 1;
};

inline void from_json(const nlohmann::json& j, DriverSettings& s) {
  s.threads = j.value("threads", s.threads);
  s.n_gpu_layers = j.value("n_gpu_layers", s.n_gpu_layers);
  s.mmap = j.value("mmap", s.mmap);
  s.flash_attn = j.value("flash_attn", s.flash_attn);
  s.n_batch = j.value("n_batch", s.n_batch);
  s.n_ubatch = j.value("n_ubatch", s.n_ubatch);
  s.type_k = j.value("type_k", s.type_k);
  s.type_v = j.value("type_v", s.type_v);
  s.n_ctx = j.value("n_ctx", s.n_ctx);
  s.poll = j.value("poll", s.poll);
  s.test_leak_bytes = j.value("test_leak_bytes", s.test_leak_bytes);
  s.cpus = j.value("cpus", s.cpus);
  s.n_seq = j.value("n_seq", s.n_seq);
}

// Optional fields (test_leak_bytes, cpus, n_seq) are written only when set.
inline void to_json(nlohmann::json& j, const DriverSettings& s) {
  j = {{"threads", s.threads},       {"n_gpu_layers", s.n_gpu_layers}, {"mmap", s.mmap},
       {"flash_attn", s.flash_attn}, {"n_batch", s.n_batch},           {"n_ubatch", s.n_ubatch},
       {"type_k", s.type_k},         {"type_v", s.type_v},             {"n_ctx", s.n_ctx},
       {"poll", s.poll}};
  if (s.test_leak_bytes > 0) j["test_leak_bytes"] = s.test_leak_bytes;
  if (!s.cpus.empty()) j["cpus"] = s.cpus;
  if (s.n_seq > 1) j["n_seq"] = s.n_seq;
}

// Requests.
inline nlohmann::json LoadRequest(const std::string& model, const nlohmann::json& settings) {
  return {{"cmd", kLoad}, {"model", model}, {"settings", settings}};
}
inline nlohmann::json TokenizeRequest(const std::string& text, bool add_special) {
  return {{"cmd", kTokenize}, {"text", text}, {"add_special", add_special}};
}
inline nlohmann::json PrefillRequest(const std::vector<int32_t>& tokens) {
  return {{"cmd", kPrefill}, {"tokens", tokens}};
}
inline nlohmann::json DecodeRequest(const std::vector<int32_t>& context, int n) {
  return {{"cmd", kDecode}, {"context", context}, {"n", n}};
}
inline nlohmann::json GenerateRequest(const std::string& text, int n, bool add_special) {
  return {{"cmd", kGenerate}, {"text", text}, {"n", n}, {"add_special", add_special}};
}
inline nlohmann::json LogProbsRequest(const std::vector<int32_t>& tokens, const std::string& path) {
  return {{"cmd", kLogProbs}, {"tokens", tokens}, {"path", path}};
}

// A sampled completion (quality evals): the first `n` output tokens of `message`; `continue`
// asks for `n` more. Sampling: top_k, top_p, min_p, temperature, then a draw seeded by `seed`
// (greedy at temperature 0).
struct CompleteRequest {
  std::string message;
  bool chat_template = true;
  int max_tokens = 0;
  int n = 0;
  double temperature = 0.6;
  uint32_t seed = 0;
  int top_k = 40;
  double top_p = 0.95;
  double min_p = 0.05;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CompleteRequest, message, chat_template, max_tokens,
                                                n, temperature, seed, top_k, top_p, min_p)
inline nlohmann::json ToRequest(const CompleteRequest& r) {
  nlohmann::json j = r;
  j["cmd"] = kComplete;
  return j;
}
inline nlohmann::json ContinueRequest(int n) { return {{"cmd", kContinue}, {"n", n}}; }

// Parallel completions (a driver loaded with n_seq sequences). seq_start: the completion `r`
// (its `n` unused) in free slot `slot`; a check point is reported each time its output reaches a
// multiple of `check_every` tokens without having ended (the caller's doom-loop detector judges
// the text there, as it judges Complete's text after every `n` tokens).
inline nlohmann::json SeqStartRequest(const CompleteRequest& r, int slot, int check_every) {
  nlohmann::json j = r;
  j.erase("n");
  j["cmd"] = kSeqStart;
  j["slot"] = slot;
  j["check_every"] = check_every;
  return j;
}
// Up to `n` decode steps of all running slots together; the reply comes early, after a step in
// which a completion ended, so that its slot can take the next one.
inline nlohmann::json SeqStepRequest(int n) { return {{"cmd", kSeqStep}, {"n", n}}; }
inline nlohmann::json SeqStopRequest(int slot) { return {{"cmd", kSeqStop}, {"slot", slot}}; }

// Replies (besides "ok"; a failure is {"ok": false, "error", "stage"}).
struct PrefillReply {
  int64_t prefill_ns = 0;  // clear (untimed), then the tokens in n_batch chunks, synchronized
};
struct DecodeReply {
  std::vector<int64_t> step_ns;  // one per generated token
  std::vector<int32_t> tokens;
};
struct GenerateReply {
  int64_t tokenize_ns = 0;
  int64_t prefill_ns = 0;
  std::vector<int64_t> token_ns;  // request start -> token i detokenized
  int n_prompt_tokens = 0;
  std::vector<int32_t> prompt_tokens;
  std::string text;
};
// One complete/continue call's output (times in ns since the completion started; prompt fields on
// the first call only). A failure with stage "context" means the prompt and max_tokens do not
// fit the context and nothing ran.
struct CompletionReply {
  std::string text;
  int tokens = 0;
  bool done = false;
  std::string stop;  // when done: "eos" | "truncated"
  int prompt_tokens = 0;
  std::string prompt_format;  // "chat_template" | "raw"
  std::string chat_template;  // the template as the model carries it (tokenizer.chat_template)
  int64_t first_token_ns = -1;
  int64_t prefill_ns = 0;
  int64_t decode_ns = 0;
  // What applied the template: "llama.cpp common jinja" | "llama_chat_apply_template (built-in)";
  // empty for raw (and from a driver of a build before the field).
  std::string template_engine;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CompletionReply, text, tokens, done, stop,
                                                prompt_tokens, prompt_format, chat_template,
                                                first_token_ns, prefill_ns, decode_ns,
                                                template_engine)

// A check point of a slot's completion: its output reached `tokens` (a multiple of check_every)
// without ending; `bytes` is the length of this reply's `text` up to there, `decode_ns` the
// completion's decode time up to there.
struct SeqCheck {
  int tokens = 0;
  int64_t bytes = 0;
  int64_t decode_ns = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SeqCheck, tokens, bytes, decode_ns)
// One slot's share of a seq_start or seq_step reply: the text of its new tokens, as
// CompletionReply says them (ns since its seq_start; decode_ns: the time of the shared decode
// steps it took part in, after its first token).
struct SeqChunk {
  int slot = 0;
  std::string text;
  int tokens = 0;
  bool done = false;
  std::string stop;  // when done: "eos" | "truncated"
  int64_t first_token_ns = -1;
  int64_t decode_ns = 0;
  std::vector<SeqCheck> checks;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SeqChunk, slot, text, tokens, done, stop,
                                                first_token_ns, decode_ns, checks)
// seq_start: the prompt as built (fields as CompletionReply's) and the first token's chunk. A
// failure with stage "context" means the prompt and max_tokens do not fit the slot's context
// (n_ctx) and nothing ran: the slot stays free, the others are untouched.
struct SeqStartReply {
  int prompt_tokens = 0;
  std::string prompt_format;
  std::string chat_template;
  std::string template_engine;
  int64_t prefill_ns = 0;  // the prompt's llama_decode calls, this sequence alone
  SeqChunk chunk;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SeqStartReply, prompt_tokens, prompt_format,
                                                chat_template, template_engine, prefill_ns, chunk)
// seq_step: one chunk per slot that was running when the step began, in slot order.
struct SeqStepReply {
  std::vector<SeqChunk> slots;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SeqStepReply, slots)

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PrefillReply, prefill_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DecodeReply, step_ns, tokens)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GenerateReply, tokenize_ns, prefill_ns, token_ns,
                                                n_prompt_tokens, prompt_tokens, text)

struct TokenizeReply {
  std::vector<int32_t> tokens;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TokenizeReply, tokens)  // "tokens" required

// Whether every number in `j` is an integer: the replies above hold no other kind, and a float
// converted to an integer field out of its range is undefined behaviour. Recurses as deep as `j`
// nests (replies are parsed at most kMaxJsonDepth deep).
inline bool OnlyIntegers(const nlohmann::json& j) {
  if (j.is_number_float()) return false;
  if (j.is_structured()) {
    for (const auto& v : j) {
      if (!OnlyIntegers(v)) return false;
    }
  }
  return true;
}

// A reply (an object with "ok": true) decoded as T. A field of another type, a float where the
// protocol has integers, a required field missing (a driver of another build, a faulty or
// hostile device) is an Error of `stage`, never an exception: the harness outlives anything a
// device sends.
template <typename T>
Result<T> ReadReply(const nlohmann::json& reply, const std::string& stage) {
  try {
    if (!reply.is_object()) throw std::invalid_argument("not a JSON object");
    if (!OnlyIntegers(reply)) throw std::invalid_argument("a number that is not an integer");
    return reply.get<T>();
  } catch (const std::exception& e) {
    return MakeError("the runtime's " + stage + " reply does not fit the protocol (" +
                         std::string(e.what()).substr(0, 200) + "); is the driver from this build?",
                     stage);
  }
}

}  // namespace pipette::protocol
