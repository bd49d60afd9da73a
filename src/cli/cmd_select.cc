// `pipette select`: hard limits judged on confidence intervals, then the Pareto front of what did
// not fail (DESIGN.md 6, issue 7).
#include "cli/cmd_select.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/limit_options.h"
#include "cli/select_output.h"
#include "cli/result_source.h"
#include "cli/store_reading.h"
#include "pipette/analysis.h"
#include "pipette/store.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct SelectArgs {
  ResultFilter filter;
  LimitOptions limits;
  bool newest = false;
};

int RunSelect(const SelectArgs& a, CliContext& ctx) {
  auto parsed = ParseLimits(a.limits);
  if (!parsed) return ReportError(ctx, parsed.error());
  Limits limits = *parsed;
  limits.benchmarks = a.filter.benchmarks;

  auto store = OpenSourceToRead(ctx);
  if (!store) return ctx.exit_code;
  const std::string path = store->where();
  ResultFilter f = a.filter;
  f.status = "ok";
  auto found = store->Records(f);
  if (!found) return ReportError(ctx, found.error(), kExitFailure);
  const std::vector<Configuration> configs =
      GroupConfigurations(*found, a.newest ? Repeats::kNewest : Repeats::kPool);
  if (configs.empty()) {
    return ReportError(ctx,
                       MakeError("no ok results match in " + path +
                                 "; nothing to select from (measure with `pipette run`, or widen "
                                 "the filters)"),
                       kExitFailure);
  }
  if (!limits.accuracy_reference.empty()) {
    auto reference = ReferenceNamed(configs, limits.accuracy_reference);
    if (!reference) return ReportError(ctx, reference.error());
  }
  const SelectResult s = Select(configs, limits);
  size_t ranked = 0;
  for (const Candidate& c : s.candidates) ranked += c.verdict != Verdict::kFail ? 1 : 0;

  if (ctx.json) {
    json out = SelectionJson(s);
    out["store"] = path;
    out["limits"] = {{"max_ttft_ms", limits.max_ttft_ms ? json(*limits.max_ttft_ms) : json()},
                     {"max_latency_ms", limits.max_latency_ms ? json(*limits.max_latency_ms) : json()},
                     {"max_memory_bytes",
                      limits.max_memory_bytes ? json(*limits.max_memory_bytes) : json()},
                     {"min_decode_throughput",
                      limits.min_decode_throughput ? json(*limits.min_decode_throughput) : json()},
                     {"max_power_w", limits.max_power_w ? json(*limits.max_power_w) : json()},
                     {"max_energy_per_token_mj", limits.max_energy_per_token_mj
                                                     ? json(*limits.max_energy_per_token_mj)
                                                     : json()},
                     {"max_quality_drop",
                      limits.max_quality_drop ? json(*limits.max_quality_drop) : json()}};
    for (const auto& [key, list] : {std::pair{"min_accuracy", &limits.min_accuracy},
                                    std::pair{"max_accuracy_drop", &limits.max_accuracy_drop}}) {
      json given = json::object();
      for (const Limits::Accuracy& l : *list) given[l.eval] = l.value;
      out["limits"][key] = list->empty() ? json() : given;
    }
    out["limits"]["reference"] =
        limits.accuracy_reference.empty() ? json() : json(limits.accuracy_reference);
    out["repeats"] = a.newest ? "newest" : "pooled";
    out["configurations"] = configs.size();
    out["ranked"] = ranked;
    size_t passed = 0;
    for (const Candidate& c : s.candidates) passed += c.verdict == Verdict::kPass ? 1 : 0;
    out["passed"] = passed;
    if (ranked == 0) out["message"] = "no configuration meets the limits";
    std::cout << out.dump(2) << std::endl;
    return kExitOk;
  }
  PrintSelection(s, limits, LimitsText(a.limits), std::cout);
  return kExitOk;
}

}  // namespace

void AddSelectCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<SelectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "select", "Configurations judged against hard limits (on their 95% CIs: pass, borderline, "
                "fail), ranked on the Pareto front of decode speed, peak memory and quality");
  AddConfigurationFilters(cmd, args->filter);
  AddServerOption(cmd, ctx);
  AddLimitOptions(cmd, args->limits);
  AddRepeatsOption(cmd, args->newest);
  cmd->callback([args, &ctx, cmd] {
    if (CheckSince(*cmd, args->filter, ctx)) RunSelect(*args, ctx);
  });
}

}  // namespace pipette::cli
