// llamacpp-stock, one measurement: runs an unmodified llama.cpp build's llama-bench for exactly
// one test and returns its raw per-repetition samples (DESIGN.md 2, 4.2). The harness wraps this
// in the runtime interface; nothing here knows about benchmarks, records or statistics.
//
// What llama-bench measures (tools/llama-bench/llama-bench.cpp at the pinned commit 80fb11a;
// "L123" are its line numbers; older builds differ where LlamaBenchSyntax says so):
//  - Tests. Each -p value gives a prompt test {n_prompt, n_gen = 0}, each -n value a generation
//    test {0, n_gen}, each -pg P,G pair one combined test; a value of 0 gives no test (L1375-
//    1485). An absent -p or -n means 512 or 128 (L1146-1151), so both are always passed: -p P -n 0
//    is exactly one prompt test, -p 0 -n D -d P exactly one generation test, and -p 0 -n 0
//    -pg P,G exactly one combined test. The context is n_prompt + n_gen + n_depth tokens (L1329),
//    created fresh for the test (L2374) with an empty KV cache (L2383).
//  - Tokens. A prompt of N tokens (test_prompt, L2173-2200) is processed in llama_decode calls of
//    at most n_batch tokens (llama.cpp splits each into n_ubatch graphs); its first token is BOS
//    when the vocabulary adds one (at a depth too), all others are std::rand() % n_vocab (never
//    seeded: the same sequence in every process); one llama_synchronize at the end (L2198). A
//    generation of N tokens (test_gen, L2202-2220) is N single-token llama_decode calls, each
//    synchronized (L2217); the first token is BOS (or random), the rest random; nothing is sampled
//    and no logits are read, so no token is really "generated" and end-of-generation cannot stop
//    it.
//  - Depth (-d). Before each repetition the KV cache is cleared (L2441); with n_depth > 0 the
//    first repetition then prefills n_depth random tokens and saves the KV state (L2460-2471),
//    later ones restore that state (L2443-2452). Neither is timed: the timed region (L2480-2510)
//    starts after the depth and covers the prompt test then the generation test. So a prompt
//    test at depth times n_prompt tokens appended to n_depth, and a generation test at depth
//    times n_gen decode steps after an n_depth context (DESIGN.md 4.1's decode_throughput_P_D).
//  - Warm-up (L2411-2438; skipped by --no-warmup): once per test, before the repetitions and
//    without the depth: a full prompt of n_prompt tokens (L2418) if n_prompt > 0, then a single
//    generation step (L2430) if n_gen > 0. It is not one run at the full shape of a generation
//    test.
//  - Clock. get_time_ns (L40-43) reads std::chrono::high_resolution_clock, which is the wall clock
//    (system_clock) in libstdc++, not a monotonic one: a clock step during a repetition distorts
//    that sample. Samples are integer nanoseconds (samples_ns, L1837); avg_ns is their mean.
//  - Output (-o json, json_printer L1813-1843): "[", one object per test with the fields of
//    L1614-1625 (build_commit, build_number, cpu_info, gpu_info, backends, model_filename,
//    model_type, model_size, model_n_params, n_batch, n_ubatch, n_threads, cpu_mask, cpu_strict,
//    poll, type_k, type_v, n_gpu_layers, ..., flash_attn (-1 auto, 0, 1; a bool in older builds),
//    load_mode, ..., n_prompt, n_gen, n_depth, test_time, avg_ns, stddev_ns, avg_ts, stddev_ts)
//    plus samples_ns and samples_ts, then "]". The "[" is printed before the model loads.
//  - Failures. llama.cpp's own log is silenced unless -v (L2282-2284), so stderr holds only
//    llama-bench's lines: "llama_bench: error: failed to load model '...'" (L2366-2370) or
//    "failed to create context" (L2374-2379), exit code 1; a bad option prints "error: invalid
//    parameter for argument: -x" to stderr and its usage to stdout, exit code 1 (L1114-1117).
//
// Memory (DESIGN.md 4.1 max_memory_usage_P): a test with n_prompt = P, n_gen = 1 runs as
// -pg P,1: one JSON object with n_prompt P, n_gen 1, n_depth 0 whose samples_ns time the P-token
// prompt plus one decode step; its context is P + 1 tokens. With repetitions = 1 and warmup =
// false the process does exactly "load, prefill P, decode 1"; llama-bench does not report memory,
// so the caller samples the process (on_started gives its pid).
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipette/status.h"
#include "runtimes/llamacpp_stock/stock_binaries.h"

namespace pipette {

// One llama-bench test. The timed region of one repetition is n_prompt prompt tokens followed by
// n_gen single-token decode steps, after an untimed context of n_depth tokens:
//   prefill_throughput_P      n_prompt = P
//   decode_throughput_P_D     n_gen = D, n_depth = P
//   max_memory_usage_P        n_prompt = P, n_gen = 1 (runs as -pg P,1), repetitions = 1,
//                             warmup = false
// Settings mirror llama.cpp's; "the build's default" means the option is left out and the
// value that ran is in LlamaBenchRun::test (n_threads, n_gpu_layers, flash_attn, ...).
struct LlamaBenchTest {
  int n_prompt = 0;  // tokens; >= 0
  int n_gen = 0;     // tokens; >= 0; n_prompt + n_gen >= 1
  int n_depth = 0;   // tokens of untimed context before each repetition; >= 0
  // CPU threads; 0 = the build's default (llama-bench: the physical, or performance, cores).
  int threads = 0;
  int n_batch = 2048;  // tokens per llama_decode call of a prompt (logical batch); >= 1
  int n_ubatch = 512;  // tokens per compute graph (physical batch); >= 1
  // KV cache element types, ggml names ("f16", "q8_0", ...).
  std::string type_k = "f16";
  std::string type_v = "f16";
  // "auto" (the build's default: llama.cpp decides per backend; older builds: off), "on", "off".
  std::string flash_attn = "auto";
  // Layers offloaded to a GPU; -1 = the build's default, which offloads every layer in every
  // version (older builds: 99; newer: -1, all). Without a GPU backend nothing is offloaded.
  int n_gpu_layers = -1;
  // Memory-map the weights. Off by default so that the weights are resident and peak memory is
  // comparable (DESIGN.md 4.2 step 2).
  bool mmap = false;
  // How hard idle worker threads poll for work, 0..100 (llama.cpp's default 50).
  int poll = 50;
  int repetitions = 5;  // timed repetitions = samples; >= 1
  // llama-bench's own warm-up before the repetitions (see the file comment: for a generation test
  // it is one decode step, not the full shape). false needs a build with --no-warmup.
  bool warmup = true;
  // CPUs the process may run on, taskset -c syntax ("0-3", "0,2"); "" = any. Applied by starting
  // llama-bench under taskset(1), which execs it: every thread it creates inherits the mask, and
  // the pid stays llama-bench's.
  std::string cpus;
};

// What one run returned.
struct LlamaBenchRun {
  // Duration of each timed repetition, nanoseconds, in run order; exactly `repetitions` values,
  // each > 0. Divide n_prompt + n_gen by a sample for tokens/s.
  std::vector<double> samples_ns;
  // The build as llama-bench reported it (build_commit, build_number; version, compiler and
  // target are empty).
  StockBuild build;
  // Backends the test ran on, as llama-bench names them ("CPU", "CUDA", "Metal,BLAS").
  std::string backends;
  // The JSON object llama-bench printed for the test, unchanged: for the record (cpu_info,
  // gpu_info, n_threads, type_k, flash_attn, model_type, test_time, ...).
  nlohmann::json test;
  // The command that ran (taskset first when cpus is set), for the record and the log.
  std::vector<std::string> argv;
};

// The command line for `test` with the binaries' syntax: taskset -c CPUS (when cpus is set;
// `taskset_path` then names it) then llama-bench -m MODEL -p -n [-pg] [-d] [-t] -b -ub -ctk -ctv
// [-fa] [-ngl] -lm|-mmp [--poll] -r [--no-warmup] -o json. Errors (one line, stage "start"):
// a value out of range, a model path with a comma (llama-bench splits -m at commas), a setting
// this build's llama-bench cannot express (e.g. n_depth on a build without -d), a CPU list that
// does not parse or names CPUs this process may not use. Starts nothing; reads only this process's
// CPU affinity (for cpus).
Result<std::vector<std::string>> LlamaBenchCommand(const StockBinaries& binaries,
                                                   const std::string& model_path,
                                                   const LlamaBenchTest& test,
                                                   const std::string& taskset_path = "taskset");

// Pure: parses llama-bench's -o json output for `test`. Errors (one line, `stage`): not JSON, not
// exactly one test object, a test other than the one asked for (n_prompt, n_gen, n_depth
// differ), no samples_ns, a sample count other than test.repetitions, a sample that is not a
// positive number.
Result<LlamaBenchRun> ParseLlamaBenchOutput(const std::string& output, const LlamaBenchTest& test,
                                            const std::string& stage);

// Runs llama-bench for `test` on the GGUF model at `model_path` and waits for it.
//  - `stage` names the work for errors after the start ("prefill", "decode", "memory"); errors
//    before llama-bench runs have stage "start", and a model or context llama-bench cannot load
//    or create has stage "load".
//  - stdout (the JSON) is captured; stderr goes to `log_path` (truncated first; empty = a
//    temporary file removed afterwards). llama-bench writes nothing to stderr while timing.
//  - `timeout` bounds the whole run: start, model load, warm-up, depth and every repetition.
//    A run still going then is killed (SIGKILL) and reaped.
//  - `on_started` (optional) is called once, on the calling thread, with llama-bench's pid right
//    after it starts (before the model loads): the place to start sampling its memory or to
//    register it for Ctrl-C (platform/interrupt.h). It must return promptly. The pid is reaped
//    before RunLlamaBench returns, so stop using it then.
// Errors (one line, naming llama-bench and what to do; the log path where it helps): a bad test
// or settings (as LlamaBenchCommand), a missing model file, llama-bench not starting, killed by
// a signal (which one, and "interrupted by the user" after Ctrl-C) or exiting non-zero (with its
// last stderr line: a model that does not load, an option value the build refuses), not
// finishing within `timeout`, or output ParseLlamaBenchOutput refuses.
// Thread-safe: runs may proceed concurrently on different threads (each is its own process).
Result<LlamaBenchRun> RunLlamaBench(const StockBinaries& binaries, const std::string& model_path,
                                    const LlamaBenchTest& test, const std::string& stage,
                                    const std::string& log_path, std::chrono::milliseconds timeout,
                                    const std::function<void(int pid)>& on_started = {});

}  // namespace pipette
