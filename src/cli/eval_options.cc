#include "cli/number_range.h"
#include "cli/eval_options.h"

#include <cstdlib>
#include <filesystem>

namespace pipette::cli {

void AddEvalOptions(CLI::App* cmd, EvalArgs& a) {
  EvalOptions& o = a.options;
  cmd->add_option("--data-dir", o.data_dir,
                  "eval benchmarks: the folder of the data sets (math500/test.jsonl, "
                  "gpqa_diamond/gpqa_diamond.csv.gz; default $PIPETTE_EVALS_DIR)");
  cmd->add_option("--limit", o.limit,
                  "eval benchmarks: this many samples, a fixed selection by --seed (0: all)")
      ->capture_default_str()->check(NumberIn(0, 1000000));
  cmd->add_option("--repeats", o.repeats, "eval benchmarks: attempts per sample")
      ->capture_default_str()->check(NumberIn(1, 1000));
  cmd->add_option("--temperature", o.temperature, "eval benchmarks: sampling temperature")
      ->capture_default_str()->check(NumberIn(0.0, 10.0));
  cmd->add_option("--seed", o.seed,
                  "eval benchmarks: selects the subset and seeds every attempt (recorded)")
      ->capture_default_str();
  o.max_tokens = 0;
  cmd->add_option("--max-tokens", o.max_tokens,
                  "eval benchmarks: output tokens per attempt at most (default: the benchmark's, "
                  "8192 for the published evals)")
      ->check(NumberIn(1, 1 << 24));
  cmd->add_option("--parallel", o.parallel,
                  "eval benchmarks: attempts generated together as sequences of one batch "
                  "(llamacpp; each attempt's text is the one it gets alone)")
      ->capture_default_str()->check(NumberIn(1, kMaxEvalParallel));
  cmd->add_option("--doom-loop", a.doom_loop,
                  "eval benchmarks: tune the doom-loop detector, KEY=VALUE (repeatable), e.g. "
                  "min_bytes=256, line_repeats=4, line_cycle=off");
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir,
                  "eval benchmarks: where per-attempt checkpoints live (default: "
                  "eval-checkpoints beside the store)");
}

Result<EvalOptions> ResolveEvalArgs(const EvalArgs& a, const BenchmarkSpec& benchmark,
                                    const std::string& store_path) {
  EvalOptions o = a.options;
  if (o.max_tokens == 0) o.max_tokens = benchmark.max_tokens > 0 ? benchmark.max_tokens : 8192;
  o.data_dir = EvalDataDir(o.data_dir);
  if (o.checkpoint_dir.empty()) {
    const std::filesystem::path store(store_path);
    o.checkpoint_dir = (store.has_parent_path() ? store.parent_path() : std::filesystem::path("."))
                           .append("eval-checkpoints")
                           .string();
  }
  if (!store_path.empty()) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(store_path, ec);
    o.store = ec ? store_path : absolute.lexically_normal().string();
  }
  for (const std::string& kv : a.doom_loop) {
    if (auto s = SetDoomLoopOption(o.doom_loop, kv); !s) return s.error();
  }
  return o;
}

}  // namespace pipette::cli
