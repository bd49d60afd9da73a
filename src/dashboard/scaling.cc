// `/scaling`: context-scaling curves from result rows (their headline median and CI): prefill
// throughput against P, decode throughput against P for each D; one line per configuration.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "dashboard/config.h"
#include "dashboard/family.h"
#include "dashboard/html.h"
#include "dashboard/layout.h"
#include "dashboard/pages.h"
#include "report/chart.h"

namespace pipette::dashboard {
namespace {

// Curves drawn per chart at most.
constexpr size_t kMaxCurves = 12;

struct Point {
  int p = 0;
  const ResultRow* row = nullptr;
};

struct Curve {
  std::string name;                // the configuration's full name (and D)
  std::vector<std::string> parts;  // name's parts (Config::Parts, then "D=100")
  std::string legend;              // what tells it from the other curves drawn (Legend)
  std::string key;
  std::map<int, Point> points;  // by P: the newest row at that P
};

// Curves of one family: configuration (and D for decode) -> points.
std::vector<Curve> Curves(const std::vector<FleetResultRow>& rows, bool decode,
                          const DeviceNames& names, size_t* omitted) {
  std::map<std::string, Curve> curves;
  std::set<int> ds;
  for (const FleetResultRow& fr : rows) {
    const ResultRow& r = fr.row;
    if (r.status != "ok" || !r.headline) continue;
    const Shape s = decode ? DecodeShape(r.benchmark_id) : PrefillShape(r.benchmark_id);
    if (s.prefill <= 0) continue;
    ds.insert(s.decode);
    const Config c = ConfigOf(r, names);
    const std::string key = c.Key() + (decode ? "|D" + std::to_string(s.decode) : "");
    Curve& curve = curves[key];
    if (curve.key.empty()) {
      curve.key = key;
      curve.name = c.Name() + (decode ? " D=" + std::to_string(s.decode) : "");
      curve.parts = c.Parts();
      if (decode) curve.parts.push_back("D=" + std::to_string(s.decode));
    }
    curve.points.emplace(s.prefill, Point{s.prefill, &r});  // rows are newest first: keep it
  }
  std::vector<Curve> out;
  for (auto& [key, c] : curves) out.push_back(std::move(c));
  // A readable chart (and a page that stays small with thousands of configurations): the
  // curves with the most points, ties by name.
  std::stable_sort(out.begin(), out.end(), [](const Curve& a, const Curve& b) {
    return a.points.size() > b.points.size();
  });
  *omitted = out.size() > kMaxCurves ? out.size() - kMaxCurves : 0;
  if (out.size() > kMaxCurves) out.resize(kMaxCurves);
  return out;
}

// Names each curve in the legend by its runtime and the parts in which the curves differ (a
// legend entry as short as it can be without two alike); returns the parts they all share, said
// once above the chart. With one curve, its whole name.
std::string Legend(std::vector<Curve>& curves) {
  constexpr size_t kRuntime = 1;  // Config::Parts' index of the runtime
  std::string common;
  std::vector<bool> differs;
  for (size_t i = 0; i < curves.front().parts.size(); ++i) {
    bool same = true;
    for (const Curve& c : curves) {
      same = same && c.parts.size() > i && c.parts[i] == curves[0].parts[i];
    }
    differs.push_back(!same || curves.size() == 1 || i == kRuntime);
    if (same && !differs.back() && !curves[0].parts[i].empty()) {
      common += (common.empty() ? "" : " ") + curves[0].parts[i];
    }
  }
  std::set<std::string> seen;
  for (Curve& c : curves) {
    c.legend.clear();
    for (size_t i = 0; i < c.parts.size(); ++i) {
      if (i < differs.size() && differs[i] && !c.parts[i].empty()) {
        c.legend += (c.legend.empty() ? "" : " ") + c.parts[i];
      }
    }
    seen.insert(c.legend);
  }
  if (seen.size() < curves.size()) {  // alike parts of different models (two files of one name)
    for (Curve& c : curves) c.legend = c.name;
    return "";
  }
  return common;
}

std::string Section(const std::string& id, const std::string& title, const std::string& metric,
                    const std::vector<FleetResultRow>& rows, bool decode,
                    const DeviceNames& names) {
  size_t omitted = 0;
  std::vector<Curve> curves = Curves(rows, decode, names, &omitted);
  std::string out = "<section id=\"" + id + "\"><h2>" + Esc(title) + "</h2>\n";
  if (curves.empty()) {
    return out + "<p class=\"empty\">No " + Esc(metric) + " results match these filters (" +
           Esc(metric) + (decode ? "_&lt;P&gt;_&lt;D&gt;" : "_&lt;P&gt;") +
           " benchmarks).</p></section>\n";
  }
  const std::string common = Legend(curves);
  std::vector<report::LineSeries> series;
  std::set<double> ps;
  std::string t = "<thead><tr><th>Configuration</th><th class=\"num\">P</th>";
  if (decode) t += "<th class=\"num\">D</th>";
  t += "<th class=\"num\">" + Esc(metric) +
       " (tokens/s)</th><th class=\"num\">95% CI</th><th>Result</th></tr></thead><tbody>\n";
  for (const Curve& c : curves) {
    report::LineSeries ls{c.legend, {}};
    for (const auto& [p, point] : c.points) {
      const ResultRow& r = *point.row;
      ps.insert(p);
      ls.points.push_back({static_cast<double>(p), *r.headline, r.headline_ci95_low,
                           r.headline_ci95_high, r.benchmark_id});
      t += "<tr><td>" + Esc(c.name) + "</td><td class=\"num\">" + std::to_string(p) + "</td>";
      if (decode)
        t += "<td class=\"num\">" + std::to_string(DecodeShape(r.benchmark_id).decode) + "</td>";
      t += "<td class=\"num\">" + Esc(FormatBare(*r.headline, "tokens/s")) +
           (r.ci_reached ? "" : " <span class=\"noisy\" title=\"CI target not reached\">!</span>") +
           "</td><td class=\"num\">" +
           Esc(CiText(r.headline_ci95_low, r.headline_ci95_high, "tokens/s")) +
           "</td><td><a href=\"/results/" + Esc(UrlEncode(r.result_id)) + "\">" +
           Esc(Prefix(r.result_id, kShortResultId)) + "</a></td></tr>\n";
    }
    series.push_back(std::move(ls));
  }
  t += "</tbody>";
  report::ChartSpec spec;
  spec.id = id + "-chart";
  spec.title = title;
  spec.x.title = "context length P (tokens, log scale)";
  spec.y.title = metric + " (tokens/s)";
  spec.x.log = true;
  spec.x.ticks.assign(ps.begin(), ps.end());
  spec.y.units = report::Units::kSi;
  spec.y.include_zero = true;
  out += "<p class=\"meta\">Median " + Esc(metric) +
         " against the context length P, one line per configuration" +
         (decode ? " and decode length D" : "") +
         "; bars are the 95% CI of the median. Each point is the newest result of its "
         "configuration at that P." +
         (common.empty() ? std::string() : " Every line: " + Esc(common) + ".") + "</p>\n";
  if (omitted > 0) {
    out += fmt::format(
        "<p class=\"notice\">{} more configurations are not drawn (the {} with the most context "
        "lengths are); narrow them with the filters.</p>\n",
        omitted, kMaxCurves);
  }
  out += ScrollChart(report::LineChart(spec, series));
  out += "<details><summary>points</summary>" + ScrollTable(t) + "</details></section>\n";
  return out;
}

}  // namespace

DashboardResponse ScalingPage(FleetStore& store, const Query& query) {
  auto filters = ParseFilters(query);
  if (!filters.ok()) return BadRequest(filters.error().message);
  auto max_rows = IntParam(query, "limit", kMaxChartRows, 1, kMaxChartRows);
  if (!max_rows.ok()) return BadRequest(max_rows.error().message);

  const auto is_scaling = [](const std::string& id) {
    return PrefillShape(id).prefill > 0 || DecodeShape(id).prefill > 0;
  };
  std::vector<std::string> seeds = CatalogIds("prefill");
  for (std::string& id : CatalogIds("decode")) seeds.push_back(std::move(id));
  auto ids = FamilyIds(store, *filters, is_scaling, seeds);
  if (!ids.ok()) return StoreError(ids.error());
  int64_t total = 0;
  auto rows = FamilyRows(store, *filters, *ids, *max_rows, &total);
  if (!rows.ok()) return StoreError(rows.error());
  auto names = DeviceNames::Load(store);
  if (!names.ok()) return StoreError(names.error());

  std::string body = FilterForm("/scaling", *filters, {},
                                {"model", "quant", "runtime", "device", "label", "since"});
  body += fmt::format(
      "<p class=\"meta\">From the newest {} of {} matching prefill and decode results.</p>\n",
      rows->size(), total);
  body += Section("prefill", "Prefill throughput vs context length", "prefill_throughput", *rows,
                  false, *names);
  body +=
      Section("decode", "Decode throughput vs context length", "decode_throughput", *rows, true,
              *names);
  return PageResponse(Layout("Context scaling", "scaling", body));
}

}  // namespace pipette::dashboard
