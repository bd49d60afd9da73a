// The runtime interface (DESIGN.md 2): the one way the harness reaches an engine. A runtime is
// one of the four axes of a configuration (model + quantization + runtime + device), so it says
// who it is (recorded in `runtime`), which settings it takes (one definition per setting, used by
// the CLI, suite files, validation, the record and config_id alike), what it can measure, and it
// executes one unit of work at a time (prefill, decode, generate, log-probabilities), returning
// typed timings. The methodology (warm-up, readiness gate, repetitions, validation, statistics)
// stays in the harness and is the same for every runtime.
//
// Runtimes of this build (src/runtimes/, made by OpenRuntime in pipette/runtimes.h):
//   llamacpp        pipette-llamacpp-driver, a process linked to the pinned llama.cpp
//   llamacpp-stock  an unmodified llama.cpp build's llama-bench and llama-server binaries
//   openai          any OpenAI-compatible HTTP server (llama-server, vLLM, Ollama, ...)
//
// Errors are values (pipette/status.h) whose stage names the work that failed ("load",
// "prefill", "decode", "generate", "logprobs", "start"); a runtime process that crashes, hangs or
// is killed becomes such an error, never a crash of the harness. Messages name settings by their
// name (n_ctx), never by a command-line flag.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/benchmark.h"
#include "pipette/status.h"

namespace pipette {

// ---- Settings ---------------------------------------------------------------------------------

enum class SettingKind {
  kInteger,  // a JSON integer in [min, max]
  kBoolean,  // true or false
  kChoice,   // one of `choices`
  kCpuList,  // CPUs in taskset -c syntax ("0-3", "0,2"), recorded canonical ("0-3")
  kText,     // any non-empty string
};

// One setting a runtime takes. `name` is the key in a result's runtime.settings and in a suite's
// [[runtimes]] settings table.
struct SettingDef {
  std::string name;
  SettingKind kind = SettingKind::kInteger;
  int64_t min = 0, max = 0;          // kInteger: inclusive range
  std::vector<std::string> choices;  // kChoice
  // The value when none is given. Null: resolved when the cell is resolved, from the benchmark
  // and the device (`resolution` says how, e.g. threads -> the physical cores).
  nlohmann::json default_value;
  std::string resolution;  // how a null default is resolved, for help texts
  std::string unit;        // "threads", "tokens", "layers", "bytes", "" when unitless
  std::string meaning;     // one line
  // Recorded (and part of config_id) only when given: a setting added after results were stored
  // must not change the config_id of configurations that never used it.
  bool recorded_only_when_set = false;
  // A fault-injection setting for tests; a record that has it carries a warning.
  bool test_only = false;
  // Recorded from where the runtime lives (RuntimeChoice: openai's server command), never given
  // as a setting: CheckSettings refuses it.
  bool from_choice = false;
};

// The definition named `name`, or nullptr.
const SettingDef* FindSetting(const std::vector<SettingDef>& defs, const std::string& name);

// Checks `value` against `def`. Error (one line, naming the setting): wrong type ("n_batch:
// expected an integer, not \"x\""), out of range, not a choice, not a CPU list.
Status CheckSetting(const SettingDef& def, const nlohmann::json& value);

// Checks every entry of `given` (an object: name -> value) against `defs`. Errors: a name the
// runtime does not take ("runtime openai does not take the setting type_k; it takes: ..."),
// or a value CheckSetting refuses.
Status CheckSettings(const std::string& runtime_name, const std::vector<SettingDef>& defs,
                     const nlohmann::json& given);

// For runtime implementations (Runtime::ResolveSettings): `given` checked against `defs`
// (CheckSettings), then every definition's value: the given one, else its default; a null default
// becomes `resolve_null(def)`; a setting recorded only when set is left out unless given; CPU
// lists become canonical ("0,1,2,3" -> "0-3") after checking that the CPUs are available here.
// Errors name the setting.
// `device_cpus` > 0: the cell runs on another device with that many logical CPUs (0 to N-1), and
// CPU lists are checked against those instead of this machine's.
Result<nlohmann::json> ResolveByDefinitions(
    const std::string& runtime, const std::vector<SettingDef>& defs, const nlohmann::json& given,
    const std::function<nlohmann::json(const SettingDef&)>& resolve_null, int device_cpus = 0);

// ---- What a runtime is and can do ------------------------------------------------------------

// Recorded as the record's `runtime` (DESIGN.md 5); name, version and commit are part of
// config_id, so they must be known before anything runs.
struct RuntimeIdentity {
  std::string name;     // "llamacpp", "llamacpp-stock", "openai"
  std::string version;  // as the engine reports it, e.g. "llama.cpp@80fb11a", "b7000"
  std::string commit;   // the engine's source commit where known, else ""
  nlohmann::json build = nlohmann::json::object();  // build flags, compiler, binaries' paths
  // Anything else the runtime knows about itself before a model is loaded (the server's URL
  // and its reported identity for openai). Recorded under runtime.*, not part of config_id.
  nlohmann::json extra = nlohmann::json::object();
};

struct RuntimeCapabilities {
  std::vector<BenchmarkType> benchmarks;  // benchmark types it can run
  bool per_token_timing = false;  // times each decode step (inter_token_latency)
  bool process_memory = false;    // its process is ours: peak memory can be sampled
  bool token_input = false;       // takes token ids; else text only (prefill derived from ttft)
  // Feeds its own token ids of the exact count for prefill and decode (llama-bench: BOS, then
  // pseudo-random ids): the harness builds no prompt for those and records that it did not.
  bool own_tokens = false;
  // The most completions it decodes together as sequences of one batch (eval --parallel N,
  // RuntimeSession::StartCompletion); 1: one at a time (Complete only).
  int parallel_completions = 1;
};

// ---- Units of work and their typed measurements ----------------------------------------------

// A prefill of the given tokens from an empty KV cache.
struct PrefillTiming {
  double prefill_ms = 0;
  // True when the runtime cannot time prefill itself and the value is the time to the first
  // generated token (recorded as derived).
  bool derived_from_ttft = false;
  // Wall time of the whole request as the harness would see it, when the runtime can tell (-1 =
  // unknown): the difference to prefill_ms is the harness overhead.
  double request_ms = -1;
};

// D greedy tokens after a context of P tokens (the context's prefill untimed).
struct DecodeTiming {
  std::vector<double> step_ms;  // one per generated token when known per token, else empty
  double total_ms = 0;          // the D steps
  int tokens = 0;               // tokens generated (validated against D)
  int context_tokens = 0;       // context the decode ran after (validated against P)
};

// A text request: tokenization, prefill, D tokens, detokenization.
struct GenerateTiming {
  // Arrival of each generated token (ms since the request started). A server that streams
  // several tokens in one event (llama-server holds back a token that ends inside a UTF-8
  // character) gives fewer entries than generated_tokens: the first and last stay exact, the
  // per-token series is then not known.
  std::vector<double> token_ms;
  double end_ms = 0;             // request start to the last token detokenized
  double prefill_ms = -1;        // the engine's own prefill time, -1 when it does not say
  double request_ms = -1;        // the whole request seen from outside, -1 = unknown
  int prompt_tokens = 0;         // as the engine counted them (validated against P)
  int generated_tokens = 0;      // validated against D
  std::string text;              // the completion
};

// A sampled completion of one user message (quality evals, DESIGN.md 7): the model's chat
// template applied as the engine applies it (the raw message when the model has none), then
// sampling with the engine's default chain at `temperature`, its draw seeded by `seed`, so the
// same request on the same build gives the same text.
struct CompletionRequest {
  std::string message;
  int max_tokens = 0;  // output tokens at most; prompt + max_tokens must fit the context
  double temperature = 0.6;
  uint32_t seed = 0;
};

struct Completion {
  std::string text;
  // "eos" (the model ended it), "truncated" (max_tokens reached) or "stopped" (keep_going
  // returned false: the caller's doom-loop detector).
  std::string stop;
  int prompt_tokens = 0;      // after the template, as the engine tokenized it
  int output_tokens = 0;
  std::string prompt_format;  // "chat_template" or "raw" (the model has no template)
  std::string chat_template;  // the template applied, as the model carries it; empty for raw
  // What applied it: "llama.cpp common jinja" (llama.cpp's Jinja engine, as llama-server applies
  // a GGUF's tokenizer.chat_template) or "llama_chat_apply_template (built-in)" (a built-in
  // template name); empty for raw and for runtimes that do not say.
  std::string template_engine;
  double time_to_first_token_ms = 0;  // request start to the first output token sampled
  double decode_ms = 0;  // time in decode steps after the first token (generation throughput =
                         // (output_tokens - 1) / decode_ms), without the caller's checks
  double total_ms = 0;   // request start to the end, seen from outside
  nlohmann::json sampling = nlohmann::json::object();  // the chain as applied: top_k, ..., seed
};

// A completion that ended in a slot of a session decoding several together (StartCompletion).
// Its timings under N sequences: time_to_first_token_ms from StartCompletion's call to its first
// token (its prompt decoded alone, the other slots waiting); decode_ms the wall time of the
// shared decode steps it took part in (each step decodes one token of every running sequence
// and samples them all), so (output_tokens - 1) / decode_ms is its own generation speed while
// it shared the batch; total_ms from StartCompletion to its end, including the other slots'
// prompts and the caller's work between steps.
struct SlotCompletion {
  int slot = 0;
  Completion completion;
};

// The resident memory of a measured process at one reading of /proc/<pid>/status, split as Linux
// splits it, in bytes: anon_bytes + file_bytes + shmem_bytes = that reading's VmRSS.
struct ResidentSplit {
  uint64_t resident_bytes = 0;  // VmRSS + VmSwap of the reading (what "largest" compares)
  uint64_t anon_bytes = 0;      // RssAnon: private anonymous pages (heap, loaded or copied
                                // weights, KV cache, compute buffers)
  uint64_t file_bytes = 0;      // RssFile: resident pages of mapped files (mmapped weights, the
                                // program and its libraries); shared with the page cache
  uint64_t shmem_bytes = 0;     // RssShmem: shared memory (POSIX/SysV shm, tmpfs, shared anon)
};

// What a session learned while loading: recorded in runtime.* and logs.warnings.
struct LoadFacts {
  double load_ms = 0;  // runtime start to model ready (DESIGN.md 4.3 load_time); 0 = not timed
  nlohmann::json backends = nlohmann::json::array();  // [{name, description, type}]
  nlohmann::json effective = nlohmann::json::object();  // settings as the engine applied them
  nlohmann::json build = nlohmann::json::object();  // added to runtime.build (system_info, ...)
  nlohmann::json extra = nlohmann::json::object();  // added to runtime.* (server identity, ...)
  std::vector<std::string> warnings;  // fallbacks the engine reported
};

// One loaded model in a running runtime. Not thread-safe: the harness calls it from one thread.
// Destroying a session stops its processes.
class RuntimeSession {
 public:
  virtual ~RuntimeSession() = default;

  virtual const LoadFacts& Facts() const = 0;
  // The model's tokenization of `text` with its special tokens (BOS) where the model adds them.
  virtual Result<std::vector<int32_t>> Tokenize(const std::string& text) = 0;
  // Units of work. `tokens` are the prompt's ids and `text` the text that tokenizes to them
  // (empty when the runtime takes token ids and the benchmark needs no text); a runtime uses
  // whichever it can send.
  virtual Result<PrefillTiming> Prefill(const std::vector<int32_t>& tokens,
                                        const std::string& text) = 0;
  virtual Result<DecodeTiming> Decode(const std::vector<int32_t>& context,
                                      const std::string& text, int n) = 0;
  virtual Result<GenerateTiming> Generate(const std::string& text, int n) = 0;
  // A sampled completion; `keep_going(text so far)` is asked after every few tokens and ends the
  // completion ("stopped") when it returns false. Errors: stage "context" when the prompt and
  // max_tokens do not fit the context (the session is usable after it); any other error may
  // leave the engine dead (start a new session). Runtimes without it return an error.
  virtual Result<Completion> Complete(const CompletionRequest& request,
                                      const std::function<bool(const std::string&)>& keep_going) {
    (void)request, (void)keep_going;
    return MakeError("this runtime cannot generate completions", "generate");
  }
  // Parallel completions (Capabilities().parallel_completions > 1, a session started with
  // SessionOptions::parallel N): up to N completions decoded together, each in a slot 0..N-1
  // with its own context of n_ctx tokens and its own sampler seeded as Complete seeds it, so each
  // completion is the text Complete gives for its request where the engine's batched arithmetic
  // equals its single-sequence arithmetic (docs/driver-protocol.md says where it does).
  //
  // Starts `request` in free slot `slot`: its prompt decoded, its first token sampled. Errors:
  // stage "context" when its prompt and max_tokens do not fit n_ctx (nothing ran: the slot stays
  // free, the other slots go on); stage "template"; any other error may leave the engine dead
  // (every running completion is lost: start a new session). Runtimes without it return an error.
  virtual Status StartCompletion(int slot, const CompletionRequest& request) {
    (void)slot, (void)request;
    return MakeError("this runtime cannot run completions in parallel", "generate");
  }
  // Advances every running slot together by a few dozen tokens at most (less when one ends), and
  // asks keep_going(slot, its text so far) wherever Complete would ask it (after every 32
  // output tokens), so that the caller's doom-loop detector stops each completion at the same
  // token as there ("stopped"; tokens decoded past that point are dropped). Returns the
  // completions that ended, whose slots are free again; a completion that ended in
  // StartCompletion is returned by the next call; empty when no slot runs. Errors: the engine
  // failed, every running completion is lost (start a new session).
  virtual Result<std::vector<SlotCompletion>> AdvanceCompletions(
      const std::function<bool(int slot, const std::string& text)>& keep_going) {
    (void)keep_going;
    return MakeError("this runtime cannot run completions in parallel", "generate");
  }
  // Log-probabilities of every position of `tokens` (all vocabulary entries) written to `path`
  // in the driver's PPLP format (kl_divergence). Runtimes without it return an error.
  virtual Status WriteLogProbs(const std::vector<int32_t>& tokens, const std::string& path) = 0;

  // Processes whose CPU time is the measurement's own (never counted as load by the readiness
  // gate); empty when the engine runs elsewhere.
  virtual std::vector<int> Pids() const = 0;
  // Peak host memory of the measured process(es) since the session started, bytes (max of VmHWM
  // and VmRSS + VmSwap, sampled every 10 ms when SessionOptions::sample_memory); nullopt when the
  // process is not ours (never 0 for unknown).
  virtual std::optional<uint64_t> PeakHostBytes() = 0;
  virtual uint64_t PeakSwapBytes() { return 0; }
  // The resident set at the peak, split: of the readings behind PeakHostBytes(), the one whose
  // VmRSS + VmSwap was largest (VmHWM may have been set between readings, so its
  // resident_bytes can be below PeakHostBytes(); without sampling, the one reading taken now).
  // Over several processes, the reading of the process with the largest resident set. nullopt
  // when the process is not ours or the kernel does not split VmRSS (Linux before 4.5).
  virtual std::optional<ResidentSplit> ResidentAtPeak() { return std::nullopt; }
  // The last bytes of the engine's log.
  virtual std::string LogTail() const = 0;
  // Stops the engine (a clean quit where possible). Idempotent.
  virtual void Stop() = 0;
};

// A model path that names a file already on the cell's device, not on the host:
// "device:/data/local/tmp/model.gguf" (`--model device:/PATH`). The runtime that runs on that
// device opens it there; nothing is copied.
inline constexpr std::string_view kDeviceModelPrefix = "device:";

struct SessionOptions {
  // The host's GGUF file (a remote device gets a copy of it), or kDeviceModelPrefix + the path of
  // a file already on a remote device.
  std::string model_path;
  std::string model_sha256;  // the model file's SHA-256 when known (a remote device keys its copy)
  nlohmann::json settings;  // resolved (ResolveSettings): every recorded setting
  std::string log_path;     // the engine's log
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};  // per request
  bool sample_memory = false;  // sample the process's memory every 10 ms (memory benchmarks)
  int context_tokens = 0;      // the cell's context need (P + D), for engines sized per start
  // Completions decoded together (eval --parallel; at most Capabilities().parallel_completions):
  // the engine's context holds this many sequences of n_ctx tokens each. Not a setting: the
  // record keeps it in its eval block, and it changes no config_id.
  int parallel = 1;
  std::function<void(int pid)> on_started;  // the engine's pid once it runs (tests kill it)
};

// What settings resolution needs to know about the cell.
struct ResolveContext {
  BenchmarkSpec benchmark;
  int context_tokens = 0;  // the shape's context need (P + D; P + 1 for memory)
  int physical_cores = 1;  // of the cell's device
  // The logical CPUs of the cell's device when it is not this machine (CPU lists name its CPUs);
  // 0: this machine.
  int device_cpus = 0;
};

// A runtime: thread-compatible (const methods may be called from several threads).
class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual const RuntimeIdentity& Identity() const = 0;
  virtual const std::vector<SettingDef>& Settings() const = 0;
  virtual RuntimeCapabilities Capabilities() const = 0;
  // The settings to record and run with: `given` checked (CheckSettings), defaults filled in,
  // null defaults resolved, settings recorded only when set left out unless given, CPU lists
  // canonical. Errors: bad settings, or settings that contradict the cell (n_ctx below the
  // shape's need).
  virtual Result<nlohmann::json> ResolveSettings(const nlohmann::json& given,
                                                 const ResolveContext& cell) const = 0;
  // Checks, before anything runs, that the runtime will measure `model_path` (a server that runs
  // already serves one model: it must be that file). Errors: bad input, one line.
  virtual Status CheckModel(const std::string& model_path) const {
    (void)model_path;
    return Status::Ok();
  }
  // Starts the engine and loads the model. Errors: stage "start" or "load".
  virtual Result<std::unique_ptr<RuntimeSession>> Start(const SessionOptions& options) = 0;
};

}  // namespace pipette
