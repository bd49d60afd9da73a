// `pipette report`: the stored results as an HTML or Markdown report, or as CSV / JSON lines.
#include "cli/cmd_report.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/ids.h"
#include "cli/funnel_states.h"
#include "cli/limit_options.h"
#include "cli/result_source.h"
#include "cli/store_reading.h"
#include "pipette/build_info.h"
#include "pipette/report.h"
#include "pipette/store.h"
#include "platform/output_path.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct ReportArgs {
  ResultFilter filter;
  LimitOptions limits;
  bool newest = false;
  std::string format = "html";
  std::string output;
  std::string title = "pipette report";
  std::vector<std::string> funnels;  // --funnel FILE: state files of `pipette decide`
};

// "the store PATH (--quant Q8_0 --since 2026-11-29)" or "the server URL": where the records came from.
std::string Source(const ReportArgs& a, const std::string& store) {
  const std::string filters = FilterText(a.filter);
  const char* kind = store.rfind("http://", 0) == 0 ? "the server " : "the store ";
  return kind + store + (filters.empty() ? "" : " (" + filters + ")");
}

Status Render(const ReportArgs& a, const Limits& limits, const std::vector<json>& records,
              const std::string& store, const std::vector<FunnelReport>& funnels,
              std::ostream& out) {
  if (a.format == "csv") return ExportCsv(records, out);
  if (a.format == "jsonl") return ExportJsonl(records, out);
  ReportOptions o;
  o.title = a.title;
  o.source = Source(a, store);
  o.generated_at = NowRfc3339();
  o.generator = std::string("pipette ") + build_info::kVersion + " (commit " +
                std::string(build_info::kGitCommit).substr(0, 12) + ")";
  o.limits = limits;
  o.limits_text = LimitsText(a.limits);
  o.repeats = a.newest ? Repeats::kNewest : Repeats::kPool;
  o.funnels = funnels;
  out << (a.format == "md" ? RenderMarkdown(records, o) : RenderHtml(records, o));
  if (!out) return MakeError("writing the report failed (disk full or closed pipe?)");
  return Status::Ok();
}

// FILE through a temporary file renamed into place: a failed write leaves no half report behind
// (and an existing FILE untouched).
Status WriteFile(const ReportArgs& a, const Limits& limits, const std::vector<json>& records,
                 const std::string& store, const std::vector<FunnelReport>& funnels) {
  return WriteFileAtomically(a.output, "the report", [&](std::ostream& out) {
    return Render(a, limits, records, store, funnels, out);
  });
}

int Report(const ReportArgs& a, CliContext& ctx) {
  auto limits = ParseLimits(a.limits);
  if (!limits) return ReportError(ctx, limits.error());
  if (limits->any() && (a.format == "csv" || a.format == "jsonl")) {
    return ReportError(ctx, MakeError("limits (" + LimitsText(a.limits) + ") decide in html and "
                                      "md reports; --format " + a.format + " exports the records "
                                      "as they are: drop the limits, or use pipette select"));
  }
  const bool exports = a.format == "csv" || a.format == "jsonl";
  if (!a.funnels.empty() && exports) {
    return ReportError(ctx, MakeError("--funnel shows a decision funnel in html and md reports; "
                                      "--format " + a.format + " exports the records as they are: "
                                      "drop --funnel"));
  }
  // The funnels named are read first: a wrong file fails before the store is read.
  std::vector<FunnelReport> funnels;
  for (const std::string& path : a.funnels) {
    auto state = ReadFunnelState(path);
    if (!state) return ReportError(ctx, state.error());
    funnels.push_back(std::move(*state));
  }
  std::string store_path = StorePath(ctx);
  const bool to_file = !a.output.empty() && a.output != "-";
  if (to_file) {
    if (Status s = CheckOutputPath(a.output, {}, store_path); !s.ok()) {
      return ReportError(ctx, s.error());
    }
  }
  auto store = OpenSourceToRead(ctx);
  if (!store) return ctx.exit_code;
  store_path = store->where();
  // The funnels `pipette decide` ran on this store, from the state files it writes beside it (a
  // server's store has none here).
  if (!exports && store_path.rfind("http://", 0) != 0) {
    for (FunnelReport& f : FindFunnelStates(store_path, a.funnels, std::cerr)) {
      funnels.push_back(std::move(f));
    }
  }
  auto found = store->Records(a.filter);
  if (!found.ok()) return ReportError(ctx, found.error(), kExitFailure);
  const std::vector<json> records = std::move(*found);
  if (records.empty()) {  // no report (and no file): a failure, so `report -o x && open x` stops
    return ReportError(ctx,
                       MakeError("no results match in " + store_path +
                                 ": nothing to report (measure with `pipette run`, or widen the "
                                 "filters)"),
                       kExitFailure);
  }
  if (!limits->accuracy_reference.empty()) {
    auto reference = ReferenceNamed(
        GroupConfigurations(records, a.newest ? Repeats::kNewest : Repeats::kPool),
        limits->accuracy_reference);
    if (!reference) return ReportError(ctx, reference.error());
  }
  if (!to_file) {
    if (Status s = Render(a, *limits, records, store_path, funnels, std::cout); !s.ok()) {
      return ReportError(ctx, s.error(), kExitFailure);
    }
    return kExitOk;
  }
  if (Status s = WriteFile(a, *limits, records, store_path, funnels); !s.ok()) {
    return ReportError(ctx, s.error(), kExitFailure);
  }
  // The same counts as the report's summary.
  size_t estimates = 0;
  for (const Configuration& c :
       GroupConfigurations(records, a.newest ? Repeats::kNewest : Repeats::kPool)) {
    estimates += c.results.size();
  }
  std::cerr << "pipette: wrote the " << a.format << " report of " << records.size()
            << " results (" << estimates << " estimates shown, one per configuration and "
            << "benchmark) to " << a.output << "\n";
  return kExitOk;
}

}  // namespace

void AddReportCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Stored results as a report: HTML with charts, Markdown tables, CSV or JSON lines");
  cmd->add_option("-o,--output", args->output, "write to FILE instead of stdout (- for stdout)")
      ->check([](const std::string& v) { return v.empty() ? "give a file name, or - for stdout" : ""; });
  cmd->add_option("--format", args->format,
                  "html (one self-contained file with SVG charts), md (Markdown tables), csv or "
                  "jsonl (the records, as `results export`)")
      ->capture_default_str()
      ->check(CLI::IsMember({"html", "md", "csv", "jsonl"}));
  cmd->add_option("--title", args->title, "the report's title")->capture_default_str();
  cmd->add_option("--funnel", args->funnels,
                  "show this `pipette decide` state file as a Funnel section (repeatable; those "
                  "of this store in <store folder>/decide/ are shown without it)")
      ->type_name("FILE");
  ResultFilter& f = args->filter;
  AddConfigurationFilters(cmd, f);
  AddServerOption(cmd, ctx);
  AddLimitOptions(cmd, args->limits);
  AddRepeatsOption(cmd, args->newest);
  cmd->callback([args, &ctx, cmd] {
    if (CheckSince(*cmd, args->filter, ctx)) Report(*args, ctx);
  });
}

}  // namespace pipette::cli
