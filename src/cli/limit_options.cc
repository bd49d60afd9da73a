#include "cli/limit_options.h"

#include <cctype>

#include "analysis/byte_size.h"

namespace pipette::cli {

void AddLimitOptions(CLI::App* cmd, LimitOptions& o) {
  const auto limit = [&](LimitOption& l, const char* help, const char* type) {
    l.option = cmd->add_option(l.flag, l.text, help)->type_name(type);
  };
  limit(o.max_ttft, "time to first token at most MS, judged on its 95% CI", "MS");
  limit(o.max_latency, "end-to-end latency at most MS, judged on its 95% CI", "MS");
  limit(o.max_memory, "peak host memory at most SIZE with a unit, e.g. 800MB, 11.5MiB, 1.5GiB",
        "SIZE");
  limit(o.min_decode_throughput, "decode at least TOK_S tokens/s, judged on its 95% CI", "TOK_S");
  limit(o.max_power,
        "average power at most W watts, judged on its 95% CI (where the device reports energy)",
        "W");
  limit(o.max_energy_per_token,
        "energy per token at most MJ millijoules, judged on its 95% CI (where the device reports "
        "energy)",
        "MJ");
  limit(o.max_quality_drop,
        "top-1 agreement at most PP percentage points below the best (kl_divergence results)",
        "PP");
  cmd->add_option("--min-accuracy", o.min_accuracy,
                  "eval accuracy at least X, a fraction or a percentage (math_500=0.4, "
                  "gpqa_diamond=30%), judged on its 95% CI (repeatable)")
      ->type_name("EVAL=X")
      ->allow_extra_args(false);
  cmd->add_option("--max-accuracy-drop", o.max_accuracy_drop,
                  "eval accuracy at most PP percentage points below the most accurate "
                  "configuration of the same model, or below --reference (math_500=2; "
                  "repeatable)")
      ->type_name("EVAL=PP")
      ->allow_extra_args(false);
  cmd->add_option("--reference", o.reference,
                  "the configuration --max-accuracy-drop is measured from: its name as select "
                  "shows it, a key prefix or a model file name")
      ->type_name("CONFIG");
}

namespace {

// "math_500", "gpqa_diamond", "ifbench" or an eval benchmark id.
bool KnownEval(const std::string& eval) {
  if (eval == "math_500" || eval == "gpqa_diamond" || eval == "ifbench") return true;
  if (eval.rfind("eval_", 0) != 0 || eval.size() <= 5) return false;
  for (char c : eval) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  }
  return true;
}

Result<std::vector<Limits::Accuracy>> ParseAccuracy(const std::vector<std::string>& given,
                                                   const char* flag, bool percent_points) {
  const std::string what =
      percent_points ? "EVAL=PP, e.g. math_500=2 (percentage points from 0 to 100)"
                     : "EVAL=X, e.g. math_500=0.4 or gpqa_diamond=30% (a fraction from 0 to 1 or "
                       "a percentage)";
  std::vector<Limits::Accuracy> out;
  for (const std::string& text : given) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos) {
      return MakeError(std::string(flag) + " " + text + ": give " + what);
    }
    Limits::Accuracy a;
    a.eval = text.substr(0, eq);
    if (!KnownEval(a.eval)) {
      return MakeError(std::string(flag) + " " + text + ": '" + a.eval +
                       "' is not an eval; give math_500, gpqa_diamond, ifbench or an eval "
                       "benchmark id such as eval_math_500_2026.06.1");
    }
    for (const Limits::Accuracy& b : out) {
      if (b.eval == a.eval) {
        return MakeError(std::string(flag) + " names " + a.eval + " twice; give each eval once");
      }
    }
    std::string number = text.substr(eq + 1);
    const bool percent = !percent_points && number.ends_with("%");
    if (percent) number.pop_back();
    auto value = analysis::ParseNonNegative(number, what);
    if (!value) return value.error().Wrap(std::string(flag) + " " + text);
    a.value = percent ? *value / 100 : *value;
    if (a.value > (percent_points ? 100.0 : 1.0)) {
      return MakeError(std::string(flag) + " " + text + ": " +
                       (percent_points ? "more than 100 points; give " + what
                                       : "more than 1; give " + what));
    }
    out.push_back(a);
  }
  return out;
}

}  // namespace

Result<Limits> ParseLimits(const LimitOptions& o) {
  Limits limits;
  for (const auto& [option, limit] :
       {std::pair{&o.max_ttft, &limits.max_ttft_ms},
        std::pair{&o.max_latency, &limits.max_latency_ms},
        std::pair{&o.min_decode_throughput, &limits.min_decode_throughput},
        std::pair{&o.max_power, &limits.max_power_w},
        std::pair{&o.max_energy_per_token, &limits.max_energy_per_token_mj},
        std::pair{&o.max_quality_drop, &limits.max_quality_drop}}) {
    if (!option->given()) continue;
    auto value = analysis::ParseNonNegative(option->text, option->what);
    if (!value) return value.error().Wrap(option->flag);
    *limit = *value;
  }
  auto min_accuracy = ParseAccuracy(o.min_accuracy, "--min-accuracy", false);
  if (!min_accuracy) return min_accuracy.error();
  limits.min_accuracy = *min_accuracy;
  auto max_drop = ParseAccuracy(o.max_accuracy_drop, "--max-accuracy-drop", true);
  if (!max_drop) return max_drop.error();
  limits.max_accuracy_drop = *max_drop;
  if (!o.reference.empty() && limits.max_accuracy_drop.empty()) {
    return MakeError("--reference " + o.reference +
                     " is what --max-accuracy-drop is measured from; give --max-accuracy-drop "
                     "EVAL=PP with it, or leave --reference out");
  }
  limits.accuracy_reference = o.reference;
  if (o.max_memory.given()) {
    auto bytes = analysis::ParseByteSize(o.max_memory.text);
    if (!bytes) return bytes.error().Wrap(o.max_memory.flag);
    limits.max_memory_bytes = *bytes;
  }
  return limits;
}

std::string LimitsText(const LimitOptions& o) {
  std::string out;
  for (const LimitOption* l : {&o.max_ttft, &o.max_latency, &o.max_memory, &o.min_decode_throughput,
                               &o.max_power, &o.max_energy_per_token, &o.max_quality_drop}) {
    if (l->given()) out += std::string(out.empty() ? "" : " ") + l->flag + " " + l->text;
  }
  for (const std::string& t : o.min_accuracy) {
    out += (out.empty() ? "" : " ") + ("--min-accuracy " + t);
  }
  for (const std::string& t : o.max_accuracy_drop) {
    out += (out.empty() ? "" : " ") + ("--max-accuracy-drop " + t);
  }
  if (!o.reference.empty()) out += " --reference " + o.reference;
  return out;
}

void AddRepeatsOption(CLI::App* cmd, bool& newest) {
  cmd->add_flag("--newest", newest,
                "use the newest result of each configuration and benchmark; by default the "
                "repetitions of all its ok results are pooled into one estimate");
}

}  // namespace pipette::cli
