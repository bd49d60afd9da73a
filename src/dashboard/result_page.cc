// `/results/<id>`: one record: its metrics with CIs, the raw samples, the thermal series around
// each repetition, and its provenance (model, runtime, settings, device, harness).
#include <fmt/format.h>

#include <map>
#include <set>

#include "analysis/noise.h"
#include "dashboard/device_names.h"
#include "dashboard/html.h"
#include "dashboard/layout.h"
#include "dashboard/pages.h"
#include "pipette/record.h"
#include "report/chart.h"

namespace pipette::dashboard {
namespace {

using nlohmann::json;

// Repetitions shown in the samples table at most (a soak can have thousands).
constexpr size_t kMaxSampleRows = 500;

std::string Num(const json& v, const std::string& unit) {
  if (!v.is_number()) return "-";
  return Esc(FormatBare(v.get<double>(), unit));
}

std::string MetricsTable(const json& r, const std::string& headline) {
  const json* metrics = record::Find(r, "/metrics");
  if (!metrics || !metrics->is_object() || metrics->empty()) {
    return "<p class=\"empty\">No metrics.</p>\n";
  }
  std::vector<std::string> names;
  if (metrics->contains(headline)) names.push_back(headline);
  for (const auto& [name, m] : metrics->items()) {
    if (name != headline) names.push_back(name);
  }
  std::string t =
      "<thead><tr><th>Metric</th><th>Unit</th><th class=\"num\">Median</th>"
      "<th class=\"num\">95% CI</th><th class=\"num\">n</th><th class=\"num\">Mean"
      "</th><th class=\"num\">Stddev</th><th class=\"num\">CV</th><th class=\"num\">"
      "Min</th><th class=\"num\">Max</th></tr></thead><tbody>\n";
  for (const std::string& name : names) {
    const json& m = (*metrics)[name];
    if (!m.is_object()) continue;
    const std::string unit = m.value("unit", "");
    const auto num = [&m](const char* k) { return m.contains(k) ? m[k] : json(); };
    t += "<tr class=\"metric\" data-metric=\"" + Esc(name) + "\"><td>" +
         (name == headline ? "<b>" + Esc(name) + "</b>" : Esc(name)) + "</td><td>" + Esc(unit) +
         "</td><td class=\"num\">" + Num(num("median"), unit) + "</td><td class=\"num\">" +
         (num("ci95_low").is_number() && num("ci95_high").is_number()
              ? Num(num("ci95_low"), unit) + " .. " + Num(num("ci95_high"), unit)
              : "-") +
         "</td><td class=\"num\">" + Num(num("n"), "") + "</td><td class=\"num\">" +
         Num(num("mean"), unit) + "</td><td class=\"num\">" + Num(num("stddev"), unit) +
         "</td><td class=\"num\">" +
         (num("cv").is_number() ? fmt::format("{:.2f}%", 100 * num("cv").get<double>()) : "-") +
         "</td><td class=\"num\">" + Num(num("min"), unit) + "</td><td class=\"num\">" +
         Num(num("max"), unit) + "</td></tr>\n";
  }
  return ScrollTable(t + "</tbody>", "metrics");
}

std::string SamplesTable(const json& r) {
  const json* samples = record::Find(r, "/samples");
  if (!samples || !samples->is_array() || samples->empty()) {
    return "<p class=\"empty\">No raw samples in this record.</p>\n";
  }
  // Columns: every scalar field of any sample, rep and started_at first; arrays as counts.
  std::vector<std::string> columns = {"rep", "started_at"};
  std::set<std::string> seen(columns.begin(), columns.end());
  for (const json& s : *samples) {
    if (!s.is_object()) continue;
    for (const auto& [k, v] : s.items()) {
      if (seen.insert(k).second && !k.starts_with("thermal_")) columns.push_back(k);
    }
  }
  std::string t = "<thead><tr>";
  for (const std::string& c : columns) t += "<th>" + Esc(c) + "</th>";
  t += "</tr></thead><tbody>\n";
  size_t shown = 0;
  for (const json& s : *samples) {
    if (++shown > kMaxSampleRows) break;
    t += "<tr class=\"sample\">";
    for (const std::string& c : columns) {
      const json v = s.is_object() && s.contains(c) ? s[c] : json();
      std::string cell = v.is_null()     ? "-"
                         : v.is_string() ? v.get<std::string>()
                         : v.is_array()  ? fmt::format("[{} values]", v.size())
                         : v.is_number() ? FormatBare(v.get<double>(), "")
                                         : v.dump();
      t += std::string("<td") + (v.is_number() ? " class=\"num\"" : "") + ">" + Esc(cell) + "</td>";
    }
    t += "</tr>\n";
  }
  t += "</tbody>";
  std::string out = ScrollTable(t, "samples");
  if (samples->size() > kMaxSampleRows) {
    out += fmt::format("<p class=\"meta\">First {} of {} repetitions; the raw JSON has all.</p>\n",
                       kMaxSampleRows, samples->size());
  }
  return out;
}

// Celsius per thermal zone before each repetition (and after, dashed in the legend name): one
// line per zone and moment; empty when no sample carries a reading.
std::string ThermalChart(const json& r) {
  const json* samples = record::Find(r, "/samples");
  if (!samples || !samples->is_array()) return "";
  std::map<std::string, report::LineSeries> series;
  for (size_t i = 0; i < samples->size(); ++i) {
    const json& s = (*samples)[i];
    if (!s.is_object()) continue;
    const double rep = s.contains("rep") && s["rep"].is_number() ? s["rep"].get<double>() : i;
    for (const char* moment : {"thermal_before", "thermal_after"}) {
      if (!s.contains(moment) || !s[moment].is_array()) continue;
      for (const json& zone : s[moment]) {
        if (!zone.is_object() || !zone.contains("celsius") || !zone["celsius"].is_number())
          continue;
        std::string name = zone.value("zone", "zone");
        if (zone.contains("type") && zone["type"].is_string())
          name += " " + zone["type"].get<std::string>();
        name += std::string(moment) == "thermal_before" ? " (before)" : " (after)";
        report::LineSeries& ls = series[name];
        ls.name = name;
        ls.points.push_back({rep, zone["celsius"].get<double>(), std::nullopt, std::nullopt, ""});
      }
    }
  }
  if (series.empty()) return "";
  std::vector<report::LineSeries> list;
  for (auto& [name, ls] : series) list.push_back(std::move(ls));
  report::ChartSpec spec;
  spec.id = "thermal-chart";
  spec.title = "Temperature around each repetition";
  spec.x.title = "repetition";
  spec.y.title = "temperature (C)";
  return ScrollChart(report::LineChart(spec, list));
}

std::string Provenance(const json& r) {
  std::string out;
  const auto block = [&](const char* title, const char* pointer, const json& value) {
    if (value.is_null() || (value.is_object() && value.empty())) return;
    out += std::string("<details") + (std::string(pointer) == "/model" ? " open" : "") +
           "><summary>" + title + "</summary>" + JsonList(value) + "</details>\n";
  };
  json model = record::ValueAt(r, "/model");
  block("Model", "/model", model);
  json runtime = record::ValueAt(r, "/runtime");
  block("Runtime (version, commit, settings)", "/runtime", runtime);
  block("Input", "/input", record::ValueAt(r, "/input"));
  block("Device fingerprint", "/device", record::ValueAt(r, "/device"));
  json harness = record::ValueAt(r, "/harness");
  block("Harness and tooling", "/harness", harness);
  if (const json* logs = record::Find(r, "/logs"); logs && logs->is_object()) {
    json shown = *logs;
    if (shown.contains("runtime_stderr_tail")) shown.erase("runtime_stderr_tail");
    block("Logs", "/logs", shown);
    if (logs->contains("runtime_stderr_tail") && (*logs)["runtime_stderr_tail"].is_string()) {
      out += "<details><summary>Runtime stderr (tail)</summary><pre class=\"scroll\">" +
             Esc((*logs)["runtime_stderr_tail"].get<std::string>()) + "</pre></details>\n";
    }
  }
  return out;
}

}  // namespace

DashboardResponse OneResultPage(FleetStore& store, const std::string& result_id) {
  // The short id a listing shows reads the same (FindResult).
  auto got = FindResult(store, result_id);
  if (!got.ok()) return StoreError(got.error());
  if (got->ambiguous) {
    return BadRequest("result id prefix " + result_id +
                      " matches several results; give more of it");
  }
  if (!got->record) return NotFound("no result " + result_id + " in this fleet database");
  const json& r = *got->record;
  const std::string id = record::StringAt(r, "/result_id");
  const std::string benchmark = record::BenchmarkId(r);
  const std::string type = record::StringAt(r, "/benchmark/type");
  const std::string headline = type == "eval"            ? "accuracy"
                               : type == "kl_divergence" ? "kl_divergence"
                                                         : HeadlineMetric(type);
  const std::string device = record::StringAt(r, "/device/id");

  std::string body = "<dl class=\"kv\">";
  const auto kv = [&body](const std::string& k, const std::string& html) {
    body += "<dt>" + Esc(k) + "</dt><dd>" + html + "</dd>";
  };
  kv("result", "<span class=\"mono\">" + Esc(id) + "</span> (<a href=\"/api/results/" +
                   Esc(UrlEncode(id)) + "\">raw JSON</a>)");
  kv("benchmark", "<a href=\"" + Esc("/" + QueryString({{"benchmark", benchmark}})) + "\">" +
                      Esc(benchmark) + "</a> (" + Esc(type) + ")");
  kv("status", Esc(record::StringAt(r, "/status")));
  kv("model",
     Esc(record::StringAt(r, "/model/file_name")) + " " + Esc(record::StringAt(r, "/model/quant")));
  kv("runtime",
     Esc(record::StringAt(r, "/runtime/name") + " " + record::StringAt(r, "/runtime/version")));
  auto names = DeviceNames::Load(store);
  if (!names.ok()) return StoreError(names.error());
  kv("device", "<a href=\"/devices/" + Esc(UrlEncode(device)) + "\">" + Esc(names->Of(device)) +
                   "</a> <span class=\"mono\">" + Esc(Prefix(device, 12)) + "</span>");
  if (const std::string tag = record::StringAt(r, "/device/label"); !tag.empty()) {
    kv("run tag", Esc(tag));
  }
  kv("started", Esc(RecordTime(record::StringAt(r, "/started_at"))) + " UTC");
  kv("config_id", "<span class=\"mono\">" + Esc(record::ConfigId(r)) + "</span>");
  if (const auto reached = record::ValueAt(r, "/harness/ci_reached"); reached.is_boolean()) {
    // Flagged only where a rerun or another option can narrow it (analysis/noise.h).
    kv("CI target", reached.get<bool>()    ? "reached"
                    : analysis::IsNoisy(r) ? "<span class=\"noisy\">not reached (noisy)</span>"
                                           : "not reached");
  }
  body += "</dl>\n";
  if (!record::IsOk(r)) {
    body += "<p class=\"notice\">Failed at " + Esc(record::TextAt(r, "/failure/stage")) + ": " +
            Esc(record::TextAt(r, "/failure/message")) + "</p>\n";
  }
  for (const std::string& w : record::Warnings(r)) {
    body += "<p class=\"notice\">" + Esc(w) + "</p>\n";
  }
  // The engine's harmless notes (record::IsEngineNote): a muted line, not a warning.
  if (const std::vector<std::string> notes = record::Notes(r); !notes.empty()) {
    std::string text;
    for (const std::string& n : notes) text += (text.empty() ? "" : "; ") + Esc(n);
    body += "<p class=\"meta\">Engine notes (harmless): " + text + "</p>\n";
  }
  body += "<h2>Metrics</h2>\n" + MetricsTable(r, headline);
  body += "<h2>Raw samples</h2>\n" + SamplesTable(r);
  const std::string thermal = ThermalChart(r);
  body += "<h2>Thermal series</h2>\n" +
          (thermal.empty() ? "<p class=\"empty\">No thermal readings in this record (the device "
                             "exposes no thermal zones).</p>\n"
                           : thermal);
  body += "<h2>Provenance</h2>\n" + Provenance(r);
  return PageResponse(Layout("Result " + Prefix(id, kShortResultId) + " - " + benchmark, "", body));
}

}  // namespace pipette::dashboard
