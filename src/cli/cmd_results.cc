// `pipette results list|show|export`: the stored results, for people and for scripts.
#include "cli/number_range.h"
#include "cli/cmd_results.h"

#include <fmt/format.h>

#include <algorithm>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "analysis/noise.h"
#include "analysis/record_fields.h"
#include "cli/eval_output.h"
#include "cli/noise_notes.h"
#include "cli/result_source.h"
#include "cli/store_reading.h"
#include "cli/text_table.h"
#include "pipette/gguf.h"
#include "pipette/record.h"
#include "pipette/store.h"
#include "platform/device_names.h"
#include "platform/output_path.h"

namespace pipette::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using record::TextAt;

struct ResultsArgs {
  ResultFilter filter;
  std::string id;
  std::string format = "jsonl";
  std::string output;
};

// Bytes in MiB; at least three significant digits everywhere (a KL of 0.000779 nats is not
// "0.00 nats"), in fixed notation.
std::string FormatCell(double v, const std::string& unit) {
  if (unit == "bytes") return fmt::format("{:.2f} MiB", v / (1024.0 * 1024.0));
  const auto digits = [](double x, int fixed) {
    if (!std::isfinite(x)) return std::string("-");
    if (x == 0 || std::abs(x) >= 1) return fmt::format("{:.{}f}", x, fixed);
    const int decimals = 2 - static_cast<int>(std::floor(std::log10(std::abs(x))));
    return fmt::format("{:.{}f}", x, decimals);
  };
  if (unit == "ms") return digits(v, 3) + " ms";
  if (unit.empty()) return digits(v, 3);
  if (unit == "ratio") return std::isfinite(v) ? fmt::format("{:.1f}%", 100 * v) : "-";
  return digits(v, 2) + " " + unit;
}

double NumberOrZero(const json& m, const char* key) {
  return m.contains(key) && m[key].is_number() ? m[key].get<double>() : 0.0;
}

json RowJson(const ResultRow& r) {
  return {{"result_id", r.result_id},
          {"short_id", r.short_id},
          {"config_id", r.config_id},
          {"status", r.status},
          {"benchmark_id", r.benchmark_id},
          {"benchmark_type", r.benchmark_type},
          {"model_file", r.model_file},
          {"model_sha256", r.model_sha256},
          {"quant", r.quant},
          {"quant_label", r.quant_label},
          {"runtime", r.runtime},
          {"threads", r.threads},
          {"device_id", r.device_id},
          {"label", r.label},
          {"started_at", r.started_at},
          {"headline_metric", r.headline_metric},
          {"headline_unit", r.headline_unit},
          {"headline", r.headline ? json(*r.headline) : json(nullptr)},
          {"headline_ci95_low", r.headline_ci95_low ? json(*r.headline_ci95_low) : json(nullptr)},
          {"headline_ci95_high", r.headline_ci95_high ? json(*r.headline_ci95_high) : json(nullptr)},
          {"headline_n", r.headline_n},
          {"ci_reached", r.ci_reached}};
}

// Whether the row's result is noisy (analysis::IsNoisy: its CI missed the harness target and
// something narrows it). The row settles every type but an eval, whose flag depends on what its
// record says of its data set and repeats: that one is read from `store`.
bool Noisy(const ResultRow& r, ResultSource* store) {
  if (r.status != "ok" || r.ci_reached || r.benchmark_type == "soak" ||
      r.benchmark_type == "kl_divergence") {
    return false;
  }
  if (r.benchmark_type != "eval" || store == nullptr) return true;
  auto record = store->Get(r.result_id);
  return record.ok() && record->has_value() && analysis::IsNoisy(**record);
}

// "+-1.20%": the 95% CI of the median relative to it, with "!" when the result is noisy (the
// harness did not reach its CI target, and something narrows it).
std::string CiText(const ResultRow& r, bool noisy) {
  if (r.headline && r.headline_n > 0 && r.headline_n < 3) return noisy ? "n < 3 !" : "n < 3";
  if (!r.headline || !r.headline_ci95_low || !r.headline_ci95_high) return "";
  // A rate (an eval's accuracy) has an interval of its own, not a relative spread of a median.
  if (r.headline_unit == "ratio") {
    return fmt::format("[{:.1f}%, {:.1f}%]{}", 100 * *r.headline_ci95_low,
                       100 * *r.headline_ci95_high, noisy ? " !" : "");
  }
  if (*r.headline == 0) return "";
  // The interval of a median is not symmetric: show its wider side, the one the harness's
  // +-target check (CiWithinTarget) judges, so that "+-1.7% !" cannot happen.
  const double m = *r.headline;
  const double wider = std::max(*r.headline_ci95_high - m, m - *r.headline_ci95_low) / m;
  return fmt::format("+-{:.2f}%{}", 100.0 * wider, noisy ? " !" : "");
}

int List(const ResultsArgs& a, CliContext& ctx) {
  // A first `pipette results list`, before anything was measured, is not an error: without
  // --store, a default store that does not exist yet reads as empty (and is not created).
  std::error_code ec;
  const bool fresh =
      ctx.server.empty() && ctx.store_path.empty() && !fs::exists(StorePath(ctx), ec);
  std::unique_ptr<ResultSource> store;
  if (!fresh) {
    store = OpenSourceToRead(ctx);
    if (!store) return ctx.exit_code;
  }
  std::vector<ResultRow> rows;
  if (store) {
    auto listed = store->List(a.filter);
    if (!listed.ok()) return ReportError(ctx, listed.error(), kExitFailure);
    rows = std::move(*listed);
  }
  std::set<std::string> noisy_ids;
  for (const ResultRow& r : rows) {
    if (Noisy(r, store.get())) noisy_ids.insert(r.result_id);
  }
  const auto noisy_row = [&noisy_ids](const ResultRow& r) {
    return noisy_ids.count(r.result_id) > 0;
  };
  // What to try for each noisy result, from its record (issue 7: noise that tells what to do).
  const auto noise = [&](const ResultRow& r) {
    json out = json::object();
    auto record = store->Get(r.result_id);
    if (!record.ok() || !record->has_value()) return out;
    out["advice"] = analysis::NoiseAdvice(**record);
    if (auto clusters = analysis::TwoClustersNote(**record)) out["clusters"] = *clusters;
    return out;
  };
  if (ctx.json) {
    json out = json::array();
    for (const ResultRow& r : rows) {
      json row = RowJson(r);
      row["noisy"] = noisy_row(r);
      if (noisy_row(r)) row["noise"] = noise(r);
      out.push_back(std::move(row));
    }
    std::cout << out.dump(2) << std::endl;
    return kExitOk;
  }
  if (rows.empty()) {
    std::cout << "no results" << (store ? " match" : "") << " in "
              << (store ? store->where() : StorePath(ctx)) << "\n";
    return kExitOk;
  }
  // A RUNTIME column where the rows come from more than one runtime; a DEVICE column where they
  // come from more than one device, each shown by its one name (DeviceShownAs: the name given on
  // this host, else its id's first 8 characters; never a run's tag) and, when its programs ran
  // under an emulator, "(emulated)": its speeds are not the hardware's.
  std::set<std::string> runtimes;
  std::map<std::string, std::string> devices;  // device_id -> as shown
  std::vector<json> device_records;             // one record of each device (its noise floor)
  const std::map<std::string, std::string> names = ReadDeviceNames();
  bool emulated = false;
  for (const ResultRow& r : rows) {
    runtimes.insert(r.runtime);
    if (devices.count(r.device_id)) continue;
    std::string shown = DeviceShownAs(r.device_id, names);
    auto record = store->Get(r.result_id);
    if (record.ok() && record->has_value()) device_records.push_back(**record);
    if (record.ok() && record->has_value() &&
        (**record).value("device", json::object()).value("emulated", false)) {
      shown += " (emulated)";
      emulated = true;
    }
    devices[r.device_id] = shown;
  }
  const bool runtime_column = runtimes.size() > 1;
  const bool device_column = devices.size() > 1 || emulated;
  std::vector<std::vector<std::string>> table = {
      {"ID", "STARTED", "STATUS", "BENCHMARK", "MODEL", "QUANT", "THREADS", "MEDIAN", "95% CI"}};
  if (runtime_column) table[0].insert(table[0].begin() + 6, "RUNTIME");
  if (device_column) table[0].insert(table[0].begin() + 3, "DEVICE");
  bool noisy = false;
  for (const ResultRow& r : rows) {
    std::string started = r.started_at.substr(0, 19);  // "2026-11-29T13:48:33" (UTC)
    if (started.size() == 19) started[10] = ' ';
    table.push_back({r.short_id, started, r.status, r.benchmark_id, r.model_file, r.quant_label,
                     r.threads > 0 ? std::to_string(r.threads) : "-",
                     r.headline ? FormatCell(*r.headline, r.headline_unit) : "-",
                     CiText(r, noisy_row(r))});
    if (runtime_column) table.back().insert(table.back().begin() + 6, r.runtime);
    if (device_column) table.back().insert(table.back().begin() + 3, devices[r.device_id]);
    noisy = noisy || noisy_row(r);
  }
  PrintTable(table, std::cout);
  if (emulated) {
    std::cout << "(emulated): measured under an emulator (another architecture than the "
                 "device's kernel): its speeds are not the hardware's\n";
  }
  std::vector<std::pair<std::string, json>> noisy_records;
  for (const ResultRow& r : rows) {
    if (!noisy_row(r)) continue;
    auto record = store->Get(r.result_id);
    if (record.ok() && record->has_value()) noisy_records.emplace_back(r.short_id, **record);
  }
  if (noisy) {
    PrintNoisyBlock(noisy_records, std::cout);
  } else {
    for (const std::string& line : NoiseFloorLines(device_records, /*say_unmeasured=*/false)) {
      std::cout << line << "\n";
    }
  }
  return kExitOk;
}

void PrintResultSummary(const json& r, std::ostream& out) {
  std::vector<std::vector<std::string>> head = {
      {"result", TextAt(r, "/result_id") + "  " + TextAt(r, "/status")},
      {"config", TextAt(r, "/config_id")},
      {"benchmark",
       TextAt(r, "/benchmark/type") == "eval"
           ? fmt::format("{} (eval)", TextAt(r, "/benchmark/id"))
           : fmt::format("{} ({}, {} prompt tokens, {})", TextAt(r, "/benchmark/id"),
                   TextAt(r, "/benchmark/type"), TextAt(r, "/benchmark/prefill_tokens"),
                   // A memory benchmark decodes one token, whatever its decode_tokens says.
                   TextAt(r, "/benchmark/type") == "memory"
                       ? std::string("1 decoded")
                       : TextAt(r, "/benchmark/decode_tokens") + " generated")},
      {"model", fmt::format("{}  {}  sha256 {}", TextAt(r, "/model/file_name"),
                            QuantLabel(r.value("model", json::object())),
                            TextAt(r, "/model/sha256"))}};
  std::string runtime = fmt::format("{} {} (commit {})", TextAt(r, "/runtime/name"),
                                    TextAt(r, "/runtime/version"), TextAt(r, "/runtime/commit"));
  if (const json* settings = record::Find(r, "/runtime/settings");
      settings != nullptr && settings->is_object()) {
    for (const auto& [key, value] : settings->items()) {
      runtime += " " + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  head.push_back({"runtime", runtime});
  const std::string id = TextAt(r, "/device/id");
  const auto name = DeviceNameOf(id);
  head.push_back({"device", name ? *name + " (" + id + ")" : id});
  if (const std::string tag = TextAt(r, "/device/label"); !tag.empty()) head.push_back({"tag", tag});
  head.push_back({"time", TextAt(r, "/started_at") + " .. " + TextAt(r, "/finished_at")});
  if (r.contains("harness") && TextAt(r, "/benchmark/type") != "eval") {
    head.push_back(
        {"harness",
         fmt::format("{} reps after {} warm-up; CI target reached: {}", TextAt(r, "/harness/reps"),
                     TextAt(r, "/harness/warmup_runs"), TextAt(r, "/harness/ci_reached"))});
  }
  PrintTable(head, out);

  if (r.contains("failure")) {
    out << fmt::format("\nFAILED at {}: {}\n", TextAt(r, "/failure/stage"),
                       TextAt(r, "/failure/message"));
  }
  if (r.contains("metrics") && r["metrics"].is_object() && !r["metrics"].empty()) {
    std::vector<std::vector<std::string>> metrics = {
        {"METRIC", "MEDIAN", "95% CI OF MEDIAN", "CV", "N"}};
    // Rates (accuracy, failure_rate, ...) are proportions of attempts: apart, without a cv.
    std::vector<std::vector<std::string>> rates = {{"RATE", "PROPORTION", "95% CI", "COUNT"}};
    for (const auto& [name, m] : r["metrics"].items()) {
      if (!m.is_object()) continue;
      const std::string unit = TextAt(m, "/unit");
      const std::string ci = FormatCell(NumberOrZero(m, "ci95_low"), unit) + " .. " +
                             FormatCell(NumberOrZero(m, "ci95_high"), unit);
      if (unit == "ratio") {
        rates.push_back({name, FormatCell(NumberOrZero(m, "median"), unit), ci,
                         TextAt(m, "/count") + " of " + TextAt(m, "/n")});
        continue;
      }
      metrics.push_back({name, FormatCell(NumberOrZero(m, "median"), unit), ci,
                         fmt::format("{:.2f}%", 100.0 * NumberOrZero(m, "cv")), TextAt(m, "/n")});
    }
    if (metrics.size() > 1) {
      out << '\n';
      PrintTable(metrics, out);
    }
    if (rates.size() > 1) {
      out << '\n';
      PrintTable(rates, out);
    }
  }
  if (auto split = analysis::ResidentSplitText(r)) out << '\n' << *split << '\n';
  if (r.contains("eval")) {
    out << '\n';
    PrintEvalSummary(r, out);
  }
  const std::vector<std::string> warnings = record::Warnings(r);
  if (!warnings.empty()) {
    out << "\nwarnings:\n";
    for (const std::string& w : warnings) out << "  - " << w << '\n';
  }
  // The engine's harmless notes (record::IsEngineNote): one quiet line, not a warning.
  if (const std::vector<std::string> notes = record::Notes(r); !notes.empty()) {
    std::string text;
    for (const std::string& n : notes) text += (text.empty() ? "" : "; ") + n;
    out << "\nnotes (harmless, from the engine): " << text << '\n';
  }
  PrintCompletions(r, out);
}

int Show(const ResultsArgs& a, CliContext& ctx) {
  auto store = OpenSourceToRead(ctx);
  if (!store) return ctx.exit_code;
  const Error missing = MakeError("no result '" + a.id + "' in " + store->where() +
                                  "; see `pipette results list" +
                                  (ctx.server.empty() ? "" : " --server " + ctx.server) + "`");
  auto record = store->Get(a.id);
  if (!record.ok()) return ReportError(ctx, record.error());
  if (!record->has_value()) return ReportError(ctx, missing);
  if (ctx.json) {
    std::cout << (*record)->dump(2) << std::endl;
  } else {
    PrintResultSummary(**record, std::cout);
  }
  return kExitOk;
}

Status Write(const ResultsArgs& a, const std::vector<json>& records, std::ostream& out) {
  return a.format == "csv" ? ExportCsv(records, out) : ExportJsonl(records, out);
}

// Writes FILE through a temporary file renamed into place, so a failed export leaves no
// half-written FILE behind (and an existing one untouched).
Status WriteFile(const ResultsArgs& a, const std::vector<json>& records) {
  return WriteFileAtomically(a.output, "the export",
                             [&](std::ostream& out) { return Write(a, records, out); });
}

int Export(const ResultsArgs& a, CliContext& ctx) {
  const bool to_file = !a.output.empty() && a.output != "-";
  if (to_file) {
    if (Status s = CheckOutputPath(a.output, {}, StorePath(ctx)); !s.ok()) {
      return ReportError(ctx, s.error());
    }
  }
  auto store = OpenSourceToRead(ctx);
  if (!store) return ctx.exit_code;
  auto found = store->Records(a.filter);
  if (!found.ok()) return ReportError(ctx, found.error(), kExitFailure);
  const std::vector<json> records = std::move(*found);
  if (!to_file) {
    if (Status s = Write(a, records, std::cout); !s.ok()) {
      return ReportError(ctx, s.error(), kExitFailure);
    }
    return kExitOk;
  }
  if (Status s = WriteFile(a, records); !s.ok()) return ReportError(ctx, s.error(), kExitFailure);
  std::cerr << "pipette: exported " << records.size() << " results to " << a.output << "\n";
  return kExitOk;
}

void AddFilterOptions(CLI::App* cmd, ResultFilter& f) {
  cmd->add_option("--status", f.status, "ok or failed")->check(CLI::IsMember({"ok", "failed"}));
  AddConfigurationFilters(cmd, f);
  cmd->add_option("--limit", f.limit, "at most N results, the newest (0: all)")
      ->check(NumberIn(0, 1 << 30));
}

}  // namespace

void AddResultsCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<ResultsArgs>();
  CLI::App* results = app.add_subcommand("results", "List, show and export stored results");
  results->require_subcommand(1);

  CLI::App* list = results->add_subcommand("list", "Stored results, newest first");
  AddFilterOptions(list, args->filter);
  AddServerOption(list, ctx);
  list->callback([args, &ctx, list] {
    if (CheckSince(*list, args->filter, ctx)) List(*args, ctx);
  });

  CLI::App* show = results->add_subcommand("show", "One result: a summary, or --json the record");
  show->add_option("id", args->id, "result id or a unique prefix of it")->required();
  AddServerOption(show, ctx);
  show->callback([args, &ctx] { Show(*args, ctx); });

  CLI::App* exp = results->add_subcommand("export", "Matching results as JSON lines or CSV");
  exp->add_option("--format", args->format,
                  "jsonl (one record per line) or csv (one row per "
                  "result and metric)")
      ->capture_default_str()
      ->check(CLI::IsMember({"jsonl", "csv"}));
  exp->add_option("-o,--output", args->output, "write to FILE instead of stdout (- for stdout)")
      ->check([](const std::string& v) { return v.empty() ? "give a file name, or - for stdout" : ""; });
  AddFilterOptions(exp, args->filter);
  AddServerOption(exp, ctx);
  exp->callback([args, &ctx, exp] {
    if (CheckSince(*exp, args->filter, ctx)) Export(*args, ctx);
  });
}

}  // namespace pipette::cli
