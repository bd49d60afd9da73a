#include "cli/limit_options.h"

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
  limit(o.max_quality_drop,
        "top-1 agreement at most PP percentage points below the best (kl_divergence results)",
        "PP");
}

Result<Limits> ParseLimits(const LimitOptions& o) {
  Limits limits;
  for (const auto& [option, limit] :
       {std::pair{&o.max_ttft, &limits.max_ttft_ms},
        std::pair{&o.max_latency, &limits.max_latency_ms},
        std::pair{&o.min_decode_throughput, &limits.min_decode_throughput},
        std::pair{&o.max_quality_drop, &limits.max_quality_drop}}) {
    if (!option->given()) continue;
    auto value = analysis::ParseNonNegative(option->text, option->what);
    if (!value) return value.error().Wrap(option->flag);
    *limit = *value;
  }
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
                               &o.max_quality_drop}) {
    if (l->given()) out += std::string(out.empty() ? "" : " ") + l->flag + " " + l->text;
  }
  return out;
}

void AddRepeatsOption(CLI::App* cmd, bool& newest) {
  cmd->add_flag("--newest", newest,
                "use the newest result of each configuration and benchmark; by default the "
                "repetitions of all its ok results are pooled into one estimate");
}

}  // namespace pipette::cli
