// llamacpp-stock, the binaries (DESIGN.md 2): an unmodified llama.cpp build's `llama-bench` and
// `llama-server`, found in a folder the user names (the runtime directory), with the build's
// identity as the binaries report it and the command-line syntax its llama-bench takes.
//
// llama.cpp adds and renames options between versions (e.g. `-mmp 0|1` became `-lm none|mmap`,
// `-fa 0|1` became `-fa on|off|auto`), so the syntax is read once from `llama-bench --help` and
// one pipette drives old and new builds alike (llama_bench.h builds the command from it).
//
// Thread-safety: every function here is thread-safe (no shared state); the ones that run a
// binary block the calling thread until it ends or its time limit passes.
#pragma once

#include <string>

#include "pipette/status.h"
#include "platform/process.h"

namespace pipette {

// Options of llama-bench that appeared or changed between llama.cpp versions, as its --help
// lists them. Every field is true for the pinned build (80fb11a).
struct LlamaBenchSyntax {
  bool load_mode = true;   // -lm/--load-mode none|mmap (newer builds)
  bool mmap = true;        // -mmp/--mmap 0|1 (older builds; newer ones accept it, deprecated)
  bool flash_attn = true;  // -fa/--flash-attn at all
  // -fa takes on|off|auto (newer builds, default auto). false: -fa 0|1, default 0 (off).
  bool flash_attn_auto = true;
  bool depth = true;       // -d/--n-depth: an untimed context before each repetition
  bool no_warmup = true;   // --no-warmup (older builds always warm up)
  bool poll = true;        // --poll 0..100
  bool prompt_gen = true;  // -pg P,G: one test timing P prompt tokens then G generated ones
};

// Pure: reads the syntax from the text `llama-bench --help` prints. Errors (one line): the text
// does not look like llama-bench's help (no -p/--n-prompt option, or no json output format).
Result<LlamaBenchSyntax> ParseLlamaBenchHelp(const std::string& help_text);

// The binaries of one llama.cpp build.
struct StockBinaries {
  std::string bin_dir;       // absolute path of the folder holding the binaries
  std::string llama_bench;   // absolute path of llama-bench; always set
  std::string llama_server;  // absolute path of llama-server; empty when the build has none
  LlamaBenchSyntax bench_syntax;

  // Without llama-server the build can still run prefill, decode and memory benchmarks (all by
  // llama-bench), but not end-to-end ones.
  bool has_server() const { return !llama_server.empty(); }
};

// Finds the binaries in `dir`: a llama.cpp build's bin folder, or the build folder itself when
// it holds bin/ (checked in that order). Runs `llama-bench --help` once (tens of ms; limit 30 s)
// to read its syntax. It is not an error if llama-server is missing (see has_server()).
// Errors (one line, naming the path): `dir` does not exist or is not a folder; it holds no
// executable llama-bench (the message says the runtime directory must be the bin folder of a
// llama.cpp build with llama-bench and llama-server, and how to build them); llama-bench --help
// fails, hangs, or prints something that is not llama-bench's help.
Result<StockBinaries> FindStockBinaries(const std::string& dir);

// A build's identity as its own binaries report it.
struct StockBuild {
  // Short commit hash of the source as the build recorded it ("80fb11a"); "unknown" for a build
  // made outside a git checkout.
  std::string commit;
  // Commits in the source's history at build time (`git rev-list --count HEAD`): the "b7000" of
  // release names. 1 for a shallow clone or a bundle with one commit (the pinned build reports 1);
  // 0 when unknown. Compare builds by commit, not by this number.
  int build_number = 0;
  // Release version of newer builds ("0.4.0"); empty where the build does not print one (older
  // builds, and identities read from llama-bench's JSON).
  std::string version;
  // As printed after "built with": compiler ("GNU 12.2.0", or "cc (Debian 12.2.0-14) 12.2.0" in
  // older builds) and target ("Linux x86_64", older "x86_64-linux-gnu"); empty when not printed.
  std::string compiler;
  std::string target;
};

// Pure: parses a `--version` text of a llama.cpp tool. Both forms are accepted:
//   version: 0.4.0 (build 1, commit 80fb11a)      newer builds
//   version: 4589 (80fb11a)                        older builds (the number is build_number)
//   built with GNU 12.2.0 for Linux x86_64         optional second line: compiler and target
// Other lines (backend loading messages) are ignored. Error: no "version:" line of either form.
Result<StockBuild> ParseStockVersion(const std::string& text);

// Reads the build's identity: `llama-server --version` (llama-bench has no --version option), or
// `llama-cli --version` from the same folder when llama-server is missing; limit 30 s each.
// Errors (one line): neither binary exists (each llama-bench run still reports the build's commit
// and build number, LlamaBenchRun::build), or the binary's output has no version line.
Result<StockBuild> ReadStockBuild(const StockBinaries& binaries);

// What a short-lived tool printed.
struct ProbeOutput {
  ExitInfo exit;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `argv` (a tool that answers at once: --help, --version) to completion within 30 s,
// capturing stdout and stderr apart. Errors: it cannot be started, or did not finish (killed).
Result<ProbeOutput> Probe(const std::vector<std::string>& argv);

// taskset(1), where util-linux installs it, then along PATH; "" when absent.
std::string FindTaskset();

}  // namespace pipette
