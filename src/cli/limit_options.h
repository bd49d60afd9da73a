// The hard limits `select` and `report` take (one spelling for both), and --newest.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/cli_context.h"
#include "pipette/analysis.h"

namespace pipette::cli {

// One limit as typed; checked (and converted) before anything is read.
struct LimitOption {
  LimitOption(const char* flag_, const char* what_) : flag(flag_), what(what_) {}
  const char* flag;
  const char* what;  // what to give, for the error message
  std::string text;
  CLI::Option* option = nullptr;
  bool given() const { return option != nullptr && option->count() > 0; }
};

struct LimitOptions {
  LimitOption max_ttft{"--max-ttft", "milliseconds, e.g. 500"};
  LimitOption max_latency{"--max-latency", "milliseconds, e.g. 2000"};
  LimitOption min_decode_throughput{"--min-decode-throughput", "tokens/s, e.g. 20"};
  LimitOption max_quality_drop{"--max-quality-drop", "percentage points, e.g. 1"};
  LimitOption max_memory{"--max-memory", ""};  // SIZE
  LimitOption max_power{"--max-power", "watts, e.g. 5"};
  LimitOption max_energy_per_token{"--max-energy-per-token", "millijoules per token, e.g. 40"};
  // Repeatable, one EVAL=VALUE each (Limits::min_accuracy, Limits::max_accuracy_drop).
  std::vector<std::string> min_accuracy, max_accuracy_drop;
  std::string reference;  // --reference CONFIG (Limits::accuracy_reference)
};

// Adds --max-ttft, --max-latency, --max-memory, --min-decode-throughput, --max-power,
// --max-energy-per-token, --max-quality-drop,
// --min-accuracy EVAL=X, --max-accuracy-drop EVAL=PP (both repeatable) and --reference CONFIG.
void AddLimitOptions(CLI::App* cmd, LimitOptions& options);

// The limits given. Every limit given (an empty one included) must be a finite number >= 0 ("nan"
// would pass or fail everything silently) and a size must have a unit; the error names the flag.
// --min-accuracy takes EVAL=X, X a fraction in [0, 1] or a percentage ("40%");
// --max-accuracy-drop EVAL=PP, PP percentage points in [0, 100]; EVAL is math_500, gpqa_diamond,
// ifbench or an eval benchmark id (eval_<name>_<version>); one EVAL once per flag. --reference
// needs --max-accuracy-drop.
Result<Limits> ParseLimits(const LimitOptions& options);

// "--max-memory 11.5MiB --min-decode-throughput 1000": the limits as given, "" for none.
std::string LimitsText(const LimitOptions& options);

// Adds --newest: use the newest result of each configuration and benchmark instead of pooling
// the repetitions of all of them (Repeats).
void AddRepeatsOption(CLI::App* cmd, bool& newest);

}  // namespace pipette::cli
