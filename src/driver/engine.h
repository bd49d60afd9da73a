// The measured engine inside pipette-llamacpp-driver: libllama driven the way DESIGN.md 4.2
// prescribes. Every timing is taken here with std::chrono::steady_clock (nanoseconds) around the
// engine calls after llama_synchronize(), so process start-up and IPC stay outside the timed
// region (DESIGN.md 4.4).
//
// Not thread-safe: the driver runs one command at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipette/status.h"
#include "runtimes/llamacpp/protocol.h"

struct llama_model;
struct llama_context;
struct llama_vocab;
struct ggml_threadpool;

namespace pipette::driver {

class ChatPrompter;

// Engine settings: the load request's (runtimes/llamacpp/protocol.h).
using EngineSettings = protocol::DriverSettings;

struct ModelFacts {
  std::string desc;        // llama_model_desc, e.g. "llama 15M F16"
  uint64_t n_params = 0;
  uint64_t size_bytes = 0;  // bytes of weights as loaded
  int n_vocab = 0;
  int n_ctx_train = 0;
  bool add_bos = false;
};

// Sizes as llama.cpp uses them after creating the context (tokens). n_ctx is one sequence's
// context (llama_n_ctx_seq; the whole context when n_seq is 1), n_ctx_total all sequences'.
struct EngineCounts {
  uint32_t n_ctx = 0, n_batch = 0, n_ubatch = 0;
  uint32_t n_seq = 1, n_ctx_total = 0;
};

// Per-token timing of a greedy run. step_ns[i] is the duration of decode step i: llama_decode of
// one token, synchronize, read the logits and pick the next token (argmax, end-of-generation
// tokens suppressed).
struct DecodeTiming {
  std::vector<int64_t> step_ns;
  std::vector<int32_t> tokens;  // the generated tokens, one per step
};

struct GenerateTiming {
  int64_t tokenize_ns = 0;     // request start -> prompt tokens ready
  int64_t prefill_ns = 0;      // prompt llama_decode calls, synchronized
  std::vector<int64_t> token_ns;  // request start -> token i detokenized, i = 0..n-1
  int n_prompt_tokens = 0;
  std::vector<int32_t> prompt_tokens;
  std::string text;            // the generated text
};

// A sampled completion of one user message (quality evals, DESIGN.md 7). Sampling is llama.cpp's
// common chain with its defaults (top_k, top_p, min_p, then temperature and a seeded draw; greedy
// at temperature 0), so a completion is reproducible from its seed on the same build.
struct CompletionParams {
  std::string message;           // the user message
  bool use_chat_template = true; // apply the model's chat template when it has one
  int max_tokens = 0;            // output tokens at most (the prompt must leave room for them)
  float temperature = 0.6f;
  uint32_t seed = 0;
  int top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
};

// What one complete/continue call produced. Times are ns since the completion started.
struct CompletionChunk {
  std::string text;          // the text of this call's new tokens
  int tokens = 0;            // new output tokens (end-of-generation tokens are not output)
  bool done = false;         // no more tokens will come
  std::string stop;          // when done: "eos" or "truncated" (max_tokens reached)
  int prompt_tokens = 0;     // first call only
  std::string prompt_format; // first call only: "chat_template" or "raw" (no template)
  std::string chat_template; // first call only: the template as the model carries it, empty for raw
  std::string template_engine;  // first call only: what applied it (driver/chat_prompt.h
                                // kEngineJinja or kEngineBuiltin), empty for raw
  std::string prompt;        // first call only: the prompt as built (not sent to the harness)
  int64_t first_token_ns = -1;  // first output token sampled (time to first token)
  int64_t prefill_ns = 0;       // the prompt's llama_decode calls
  int64_t decode_ns = 0;        // cumulative time in decode steps after the first token
  // Parallel completions only (StartSeq, StepSeqs): the check points this chunk passed, each
  // {output tokens so far (a multiple of check_every), bytes of `text` up to there, decode_ns
  // up to there}.
  std::vector<protocol::SeqCheck> checks;
};

class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Loads the model and creates the context. Errors: unreadable model, unknown KV type or
  // flash_attn value, context creation failure. May be called once.
  Status Load(const std::string& path, const EngineSettings& settings);

  const ModelFacts& facts() const { return facts_; }
  const EngineSettings& settings() const { return settings_; }  // resolved
  EngineCounts Counts() const;  // zeros before Load()

  // Tokenizes `text`; `add_special` adds the beginning-of-sequence token if the model uses one.
  Result<std::vector<int32_t>> Tokenize(const std::string& text, bool add_special) const;

  // Clears the KV cache (untimed), then processes `tokens` from an empty cache in n_batch chunks.
  // Returns the synchronized prefill time in ns.
  Result<int64_t> Prefill(const std::vector<int32_t>& tokens);

  // Clears the KV cache, prefills `context` untimed, then runs `n` timed greedy decode steps.
  Result<DecodeTiming> Decode(const std::vector<int32_t>& context, int n);

  // The whole text request, timed from the call: tokenize, prefill, then `n` greedy tokens, each
  // detokenized. token_ns[0] is the time to first token.
  Result<GenerateTiming> Generate(const std::string& text, int n, bool add_special);

  // Clears the KV cache, evaluates `tokens` with outputs at every position and writes the
  // next-token log-probabilities (log-softmax of the logits) to `path`: "PPLP", uint32 positions,
  // uint32 n_vocab, then positions x n_vocab float32, little-endian (docs/driver-protocol.md).
  // Errors: context too small, decode failure, unwritable file.
  Status WriteLogProbs(const std::vector<int32_t>& tokens, const std::string& path);

  // Starts a sampled completion (clearing the KV cache) and returns its first `n` output tokens
  // at most. The prompt: the model's chat template applied to the message (driver/chat_prompt.h:
  // llama.cpp's Jinja engine for a Jinja template, llama_chat_apply_template for a built-in
  // name), or the raw message. Errors: stage "context" when prompt + max_tokens exceed n_ctx
  // (nothing ran), stage "template" when the model's template cannot be applied (one line naming
  // the model and why), "generate" otherwise.
  Result<CompletionChunk> Complete(const CompletionParams& params, int n);
  // Up to `n` more output tokens of the running completion.
  Result<CompletionChunk> Continue(int n);

  // ---- Parallel completions (settings n_seq > 1; docs/driver-protocol.md seq_*) ----
  // Each slot 0..n_seq-1 is a llama.cpp sequence with its own KV stream of n_ctx tokens and its
  // own sampler chain (seeded as Complete seeds it), so a completion's tokens are those Complete
  // would give, as far as the batched arithmetic equals the single one (see StepSeqs).
  //
  // Starts a completion in free slot `slot`: the prompt as Complete builds it, the slot's cells
  // cleared, the prompt decoded as that sequence alone (n_batch chunks, the other slots
  // waiting), its first token sampled. `check_every` > 0 reports a check point each time the
  // output reaches a multiple of it without ending. Errors as Complete's (stage "context":
  // nothing ran, the slot stays free); a slot out of range or busy is stage "protocol".
  Result<CompletionChunk> StartSeq(int slot, const CompletionParams& params, int check_every);
  // Up to `n` decode steps of every running slot together: each step is one llama_batch with
  // one token per running sequence, then each sequence's token sampled by its chain. Returns
  // after `n` steps, or early after a step in which a completion ended (its slot is then free).
  // One chunk per slot that was running, in slot order. Errors (decode failure): every running
  // completion is lost, every slot free.
  Result<std::vector<std::pair<int, CompletionChunk>>> StepSeqs(int n);
  // Ends the completion in `slot` (the caller's detector stopped it) and frees its cells;
  // a free slot is no error.
  Status StopSeq(int slot);

  void ClearKvCache();

 private:
  struct Sampling;
  Result<CompletionChunk> Produce(int n, CompletionChunk out);
  // What Complete and StartSeq share: the prompt built (its facts in `out`), tokenized into
  // `tokens`, checked against the context (stage "context"), and its sampler chain.
  Result<std::unique_ptr<Sampling>> BeginCompletion(const CompletionParams& p, CompletionChunk& out,
                                                    std::vector<int32_t>& tokens);
  // Samples slot `slot`'s next token from output row `idx` of the last decode (a StartSeq or
  // StepSeqs step); updates its state and `out`.
  void SampleSeq(int slot, int idx, CompletionChunk& out);
  void FreeSeq(int slot);
  Status DecodeBatch(const int32_t* tokens, int n);
  int32_t GreedyNext() const;
  // An error (stage `stage`) when the last position's logits hold a NaN or +infinity (the masked
  // end-of-generation tokens are -infinity on purpose).
  Status CheckLogitsFinite(size_t n_tokens, const char* stage) const;
  std::string Piece(int32_t token) const;
  Status CheckFits(size_t n_tokens) const;

  llama_model* model_ = nullptr;
  llama_context* ctx_ = nullptr;
  const llama_vocab* vocab_ = nullptr;
  ggml_threadpool* threadpool_ = nullptr;
  std::unique_ptr<ChatPrompter> prompter_;  // made by Load()
  EngineSettings settings_;
  ModelFacts facts_;
  std::vector<int32_t> eog_tokens_;  // end-of-generation token ids
  std::vector<std::unique_ptr<char[]>> leaked_;
  // The running completion (test_leak_bytes above: kept so they stay resident).
  std::unique_ptr<Sampling> sampling_;
  // The running parallel completions, one per slot (null: free); n_seq entries after Load.
  std::vector<std::unique_ptr<Sampling>> seqs_;
};

}  // namespace pipette::driver
