// The `llamacpp-stock` runtime (DESIGN.md 2): an unmodified llama.cpp build's binaries measured
// through pipette/runtime.h, so that llama.cpp versions can be compared with one methodology.
//
// How it runs each unit of work (llama_bench.h says exactly what llama-bench times):
//  - Prefill and decode: one llama-bench process per call, timing one repetition (-r 1) after
//    llama-bench's own warm-up (a full prompt for prefill, one decode step for decode). Each
//    process loads the model itself; the harness's readiness gate runs between processes. The
//    token ids are llama-bench's own (BOS, then pseudo-random ids of the exact count), so the
//    runtime declares own_tokens and the harness builds no prompt for these.
//  - Memory (Decode(context, text, 1) in a session started with SessionOptions::sample_memory):
//    one llama-bench process doing exactly "load, prefill P, decode 1" (-pg P,1 without warm-up),
//    its memory sampled every 10 ms from its start; PeakHostBytes() is the peak over the
//    session's processes. The last reading precedes the process's exit by at most 10 ms (a
//    process that has exited has no memory left to read). DecodeTiming::total_ms then covers the
//    prompt and the step together.
//  - Text (Tokenize, Generate; end-to-end benchmarks): the build's llama-server, started on the
//    first such call and kept for the session (runtimes/openai/served_model.h), with the session's
//    settings, one slot, no prompt cache, and a context of SessionOptions::context_tokens.
//  - No log-probabilities (kl_divergence), no soak: those need the `llamacpp` runtime.
//
// Settings are llamacpp's (same names, ranges and defaults; runtimes/common/resolve.h) except
// n_ctx, which llama-bench sizes itself (the test's n_prompt + n_gen + n_depth), and the test-only
// test_leak_bytes. n_gpu_layers -1 is recorded as -1: llama-bench's default, every layer on a GPU
// where the build has one (llama-server is then given 999, the same).
//
// Thread-safety: a Runtime is thread-compatible (its const methods may be called from several
// threads at once); a session is not thread-safe (one thread calls it), except Pids().
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipette/runtime.h"
#include "pipette/status.h"
#include "runtimes/llamacpp_stock/stock_binaries.h"

namespace pipette {

// The settings llamacpp-stock takes (Runtime::Settings()): threads, n_gpu_layers, mmap,
// flash_attn, n_batch, n_ubatch, type_k, type_v, poll, cpus.
std::vector<SettingDef> StockSettingDefs();

// Makes the runtime for the llama.cpp build whose binaries are in `dir` (its bin folder, or the
// build folder holding bin/): finds llama-bench (and llama-server, without which end-to-end
// benchmarks are not offered) and reads the build's identity from the binaries (a few short
// processes, tens of ms). Errors (one line, naming the folder and what to do): the folder is
// missing or holds no llama-bench, the binaries do not answer as llama.cpp's do, or the build has
// neither llama-server nor llama-cli to report its version.
Result<std::shared_ptr<Runtime>> MakeStockRuntime(const std::string& dir);

// ---- llama-server's command line (exposed for tests) ------------------------------------------

// Options of llama-server that appeared, changed or went away between llama.cpp versions, as its
// --help lists them. Every field is true for the pinned build (80fb11a), except that builds of
// 3.22.1 (de3ff81) and later have no `no_mmap`.
struct LlamaServerSyntax {
  bool load_mode = true;        // -lm/--load-mode none|mmap (newer builds)
  bool no_mmap = true;          // --no-mmap (older builds; removed in favour of --load-mode)
  bool flash_attn = true;       // -fa/--flash-attn at all
  bool flash_attn_auto = true;  // -fa on|off|auto; false: -fa is a switch (on), default off
  bool poll = true;             // --poll 0..100
  bool fit = true;              // -fit on|off: adjusts unset options to the device's memory
  bool parallel = true;         // -np/--parallel N
  bool no_webui = true;         // --no-webui
  bool cache_ram = true;        // -cram/--cache-ram MiB: a host-memory prompt cache (0: off)
  bool no_cache_prompt = true;  // --no-cache-prompt
};

// Pure: reads the syntax from the text `llama-server --help` prints. Error (one line): the text
// does not look like llama-server's help (no --port or no --ctx-size option).
Result<LlamaServerSyntax> ParseLlamaServerHelp(const std::string& help_text);

// What one llama-server start needs besides the settings.
struct LlamaServerStart {
  std::string model_path;
  int port = 0;            // on 127.0.0.1
  int context_tokens = 0;  // -c; 0: the model's training context
  // "<arch>.context_length=int:N" when the context exceeds the model's training context (the
  // server otherwise caps a slot at it); "" for none.
  std::string context_override;
  std::string taskset_path = "taskset";  // used when the settings name cpus
};

// The command line: [taskset -c CPUS] llama-server -m MODEL --host 127.0.0.1 --port PORT [-c N]
// [-t] -b -ub -ctk -ctv [-fa] -ngl [-lm|--no-mmap] [--poll] [-fit off] [-np 1] [-cram 0]
// [--no-cache-prompt] [--no-webui] [--override-kv ...], from resolved `settings` (missing ones at
// their defaults; -ngl -1 becomes 999). Every option the server's automatic sizing could change
// is given, and -fit off keeps it from changing any. Errors (one line, stage "start"): a setting
// this build's llama-server cannot express (the model without mmap, flash_attn on without a
// flash-attention option, poll other than 50 without a poll option), a CPU list that does not
// parse or names CPUs this process may not use, CPUs without a taskset path. Starts nothing.
Result<std::vector<std::string>> LlamaServerCommand(const StockBinaries& binaries,
                                                    const LlamaServerSyntax& syntax,
                                                    const LlamaServerStart& start,
                                                    const nlohmann::json& settings);

}  // namespace pipette
