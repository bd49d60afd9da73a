// `/compare?a=<id>&b=<id>`: two results side by side: what differs in their configuration, and
// every metric with its 95% CI and the ratio B/A (whether the intervals overlap says whether the
// difference stands out of the noise).
#include <fmt/format.h>

#include <cmath>
#include <set>

#include "dashboard/html.h"
#include "dashboard/layout.h"
#include "dashboard/pages.h"
#include "pipette/record.h"

namespace pipette::dashboard {
namespace {

using nlohmann::json;

std::string Cell(const json& r, const std::string& metric, const std::string& unit) {
  const auto m = record::MetricValue(r, metric, "median");
  if (!m) return "-";
  std::string out = Esc(FormatBare(*m, unit));
  const auto lo = record::MetricValue(r, metric, "ci95_low");
  const auto hi = record::MetricValue(r, metric, "ci95_high");
  if (lo && hi)
    out +=
        " <small>[" + Esc(FormatBare(*lo, unit)) + ", " + Esc(FormatBare(*hi, unit)) + "]</small>";
  return out;
}

}  // namespace

DashboardResponse ComparePage(FleetStore& store, const Query& query) {
  const std::string a_id = Param(query, "a"), b_id = Param(query, "b");
  if (a_id.empty() || b_id.empty()) {
    return BadRequest(std::string(a_id.empty() ? "a" : "b") +
                      ": compare needs two result ids, /compare?a=<result_id>&b=<result_id>");
  }
  json rec[2];
  const std::string ids[2] = {a_id, b_id};
  for (int i = 0; i < 2; ++i) {
    auto got = FindResult(store, ids[i]);  // a short id reads as the id
    if (!got.ok()) return StoreError(got.error());
    if (got->ambiguous) {
      return BadRequest(std::string(i == 0 ? "a" : "b") + ": result id prefix " + ids[i] +
                        " matches several results; give more of it");
    }
    if (!got->record) return NotFound("no result " + ids[i] + " in this fleet database");
    rec[i] = std::move(*got->record);
  }
  const json& a = rec[0];
  const json& b = rec[1];

  std::string body;
  if (record::BenchmarkId(a) != record::BenchmarkId(b)) {
    body += "<p class=\"notice\">The two results are of different benchmarks (" +
            Esc(record::BenchmarkId(a)) + ", " + Esc(record::BenchmarkId(b)) +
            "): only metrics both have are compared.</p>\n";
  }
  // The configuration side by side; rows that differ are bold.
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"result", "/result_id"},
      {"benchmark", "/benchmark/id"},
      {"model", "/model/file_name"},
      {"model sha256", "/model/sha256"},
      {"quant", "/model/quant"},
      {"runtime", "/runtime/name"},
      {"runtime version", "/runtime/version"},
      {"runtime commit", "/runtime/commit"},
      {"settings", "/runtime/settings"},
      {"device", "/device/id"},
      {"device label", "/device/label"},
      {"cpu", "/device/cpu/model"},
      {"started (UTC)", "/started_at"},
      {"harness", "/harness/version"},
      {"CI reached", "/harness/ci_reached"}};
  std::string t = "<thead><tr><th></th><th>A</th><th>B</th></tr></thead><tbody>\n";
  for (const auto& [name, pointer] : fields) {
    const std::string x = record::TextAt(a, pointer), y = record::TextAt(b, pointer);
    std::string xs = Esc(x), ys = Esc(y);
    if (pointer == "/result_id") {
      xs = "<a href=\"/results/" + Esc(UrlEncode(x)) + "\">" + xs + "</a>";
      ys = "<a href=\"/results/" + Esc(UrlEncode(y)) + "\">" + ys + "</a>";
    }
    t += std::string("<tr") + (x != y ? " class=\"differs\"" : "") + "><th>" + Esc(name) +
         (x != y ? " *" : "") + "</th><td class=\"wrap\">" + xs + "</td><td class=\"wrap\">" + ys +
         "</td></tr>\n";
  }
  body += "<h2>Configuration</h2>\n<p class=\"meta\">* = differs.</p>\n" +
          ScrollTable(t + "</tbody>", "config");

  std::set<std::string> names;
  for (const json* r : {&a, &b}) {
    if (const json* m = record::Find(*r, "/metrics"); m && m->is_object()) {
      for (const auto& [name, v] : m->items()) names.insert(name);
    }
  }
  std::string m =
      "<thead><tr><th>Metric</th><th>Unit</th><th class=\"num\">A median [95% CI]</th>"
      "<th class=\"num\">B median [95% CI]</th><th class=\"num\">B/A</th>"
      "<th>CIs overlap</th></tr></thead><tbody>\n";
  for (const std::string& name : names) {
    std::string unit = record::MetricUnit(a, name);
    if (unit.empty()) unit = record::MetricUnit(b, name);
    const auto x = record::MetricValue(a, name, "median");
    const auto y = record::MetricValue(b, name, "median");
    std::string ratio = "-", overlap = "-";
    if (x && y && *x != 0) ratio = fmt::format("{:.3f}", *y / *x);
    const auto xl = record::MetricValue(a, name, "ci95_low"),
               xh = record::MetricValue(a, name, "ci95_high");
    const auto yl = record::MetricValue(b, name, "ci95_low"),
               yh = record::MetricValue(b, name, "ci95_high");
    if (xl && xh && yl && yh) overlap = (*xl <= *yh && *yl <= *xh) ? "yes (within noise)" : "no";
    m += "<tr class=\"metric\" data-metric=\"" + Esc(name) + "\"><td>" + Esc(name) + "</td><td>" +
         Esc(unit) + "</td><td class=\"num\">" + Cell(a, name, unit) + "</td><td class=\"num\">" +
         Cell(b, name, unit) + "</td><td class=\"num ratio\">" + ratio + "</td><td>" + overlap +
         "</td></tr>\n";
  }
  body += "<h2>Metrics</h2>\n" + ScrollTable(m + "</tbody>", "compare");
  return PageResponse(Layout("Compare " + Prefix(a_id, kShortResultId) + " and " + Prefix(b_id, kShortResultId), "", body));
}

}  // namespace pipette::dashboard
