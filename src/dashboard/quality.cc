// `/quality`: quality against speed with the Pareto front. Quality: eval accuracy (%) where eval
// results exist, else top1_agreement x 100 of kl_divergence_<ctx> results (with the mean KL
// divergence in the table); speed: the configuration's newest decode_throughput median on one
// decode benchmark. Reads a capped number of quality records and one bounded set of rows.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "dashboard/config.h"
#include "dashboard/family.h"
#include "dashboard/html.h"
#include "dashboard/layout.h"
#include "dashboard/pages.h"
#include "pipette/analysis.h"
#include "pipette/record.h"
#include "report/chart.h"

namespace pipette::dashboard {
namespace {

// Quality records read at most (the newest).
constexpr int kMaxQualityRecords = 60;

bool IsQuality(const std::string& id) {
  return id.rfind("kl_divergence_", 0) == 0 || id.rfind("eval_", 0) == 0;
}
bool IsDecode(const std::string& id) { return DecodeShape(id).prefill > 0; }

struct Quality {
  Config config;
  std::string result_id;
  double value = 0;  // %
  std::optional<double> low, high;
  std::optional<double> kl;  // kl_divergence median (nats), kl only
};

// The quality of one record on its benchmark; nullopt when it has none.
std::optional<Quality> QualityOf(const nlohmann::json& r, const DeviceNames& names) {
  if (!record::IsOk(r)) return std::nullopt;
  const std::string id = record::BenchmarkId(r);
  const std::string metric = id.rfind("eval_", 0) == 0 ? "accuracy" : "top1_agreement";
  const auto median = record::MetricValue(r, metric, "median");
  if (!median) return std::nullopt;
  Quality q;
  q.config = ConfigOf(r, names);
  q.result_id = record::StringAt(r, "/result_id");
  q.value = *median * 100;
  if (const auto lo = record::MetricValue(r, metric, "ci95_low")) q.low = *lo * 100;
  if (const auto hi = record::MetricValue(r, metric, "ci95_high")) q.high = *hi * 100;
  if (metric == "top1_agreement") q.kl = record::MetricValue(r, "kl_divergence", "median");
  return q;
}

// The id among `counts` with the most configurations (evals before kl_divergence); ties by id.
std::string Busiest(const std::map<std::string, std::set<std::string>>& counts) {
  std::string best;
  size_t best_n = 0;
  bool best_eval = false;
  for (const auto& [id, keys] : counts) {
    const bool eval = id.rfind("eval_", 0) == 0;
    if (best.empty() || (eval && !best_eval) || (eval == best_eval && keys.size() > best_n)) {
      best = id;
      best_n = keys.size();
      best_eval = eval;
    }
  }
  return best;
}

std::string Options(const std::map<std::string, std::set<std::string>>& counts) {
  std::string out;
  for (const auto& [id, keys] : counts) out += (out.empty() ? "" : ", ") + id;
  return out.empty() ? "none" : out;
}

}  // namespace

DashboardResponse QualityPage(FleetStore& store, const Query& query) {
  auto filters = ParseFilters(query);
  if (!filters.ok()) return BadRequest(filters.error().message);
  auto names = DeviceNames::Load(store);
  if (!names.ok()) return StoreError(names.error());

  // Quality records.
  std::vector<std::string> seeds = CatalogIds("eval");
  for (int ctx : {128, 256, 512, 1024, 2048, 4096, 8192}) {
    seeds.push_back("kl_divergence_" + std::to_string(ctx));
  }
  std::vector<std::string> probed;  // both families probe the same rows
  auto quality_ids = FamilyIds(store, *filters, IsQuality, seeds, &probed);
  if (!quality_ids.ok()) return StoreError(quality_ids.error());
  std::vector<nlohmann::json> records;
  if (!quality_ids->empty()) {
    ResultFilter f = filters->ToResultFilter();
    f.benchmarks = *quality_ids;
    f.status = "ok";
    f.limit = kMaxQualityRecords;
    auto got = store.Records(f, RecordParts::kSummary);
    if (!got.ok()) return StoreError(got.error());
    records = std::move(*got);
  }
  // benchmark -> configuration key -> its newest quality (records are newest first).
  std::map<std::string, std::map<std::string, Quality>> by_benchmark;
  std::map<std::string, std::set<std::string>> quality_configs;
  for (const nlohmann::json& r : records) {
    auto q = QualityOf(r, *names);
    if (!q) continue;
    const std::string id = record::BenchmarkId(r);
    const std::string key = q->config.Key();
    quality_configs[id].insert(key);
    by_benchmark[id].emplace(key, std::move(*q));
  }
  std::string quality_id = Param(query, "quality");
  if (quality_id.empty()) {
    quality_id = Busiest(quality_configs);
  } else if (!quality_configs.count(quality_id)) {
    return BadRequest("quality must be a quality benchmark with results here (" +
                      Options(quality_configs) + "); got '" + quality_id + "'");
  }

  // Decode speed rows.
  Filters speed_filters = *filters;
  speed_filters.benchmarks.clear();
  auto decode_ids = FamilyIds(store, speed_filters, IsDecode, CatalogIds("decode"), &probed);
  if (!decode_ids.ok()) return StoreError(decode_ids.error());
  auto rows = FamilyRows(store, speed_filters, *decode_ids, kMaxChartRows, nullptr);
  if (!rows.ok()) return StoreError(rows.error());
  const auto& qualities = by_benchmark[quality_id];
  std::map<std::string, std::set<std::string>> speed_configs;  // decode id -> quality configs
  for (const FleetResultRow& fr : *rows) {
    if (fr.row.status != "ok" || !fr.row.headline) continue;
    const std::string key = ConfigOf(fr.row, *names).Key();
    if (qualities.count(key)) speed_configs[fr.row.benchmark_id].insert(key);
  }
  std::string speed_id = Param(query, "speed");
  if (speed_id.empty()) {
    size_t best = 0;
    for (const auto& [id, keys] : speed_configs) {
      if (keys.size() > best) {
        best = keys.size();
        speed_id = id;
      }
    }
  } else if (!speed_configs.count(speed_id)) {
    return BadRequest(
        "speed must be a decode benchmark that configurations with quality results "
        "ran (" +
        Options(speed_configs) + "); got '" + speed_id + "'");
  }
  std::map<std::string, const ResultRow*> speed;  // configuration key -> newest row
  for (const FleetResultRow& fr : *rows) {
    if (fr.row.benchmark_id == speed_id && fr.row.status == "ok" && fr.row.headline) {
      speed.emplace(ConfigOf(fr.row, *names).Key(), &fr.row);
    }
  }

  std::string body = FilterForm("/quality", *filters,
                                [&] {
                                  Params h;
                                  if (!Param(query, "quality").empty())
                                    h.emplace_back("quality", quality_id);
                                  if (!Param(query, "speed").empty())
                                    h.emplace_back("speed", speed_id);
                                  return h;
                                }(),
                                {"model", "quant", "runtime", "device", "label", "since"});
  if (qualities.empty()) {
    body +=
        "<p class=\"empty\">No quality results match these filters: eval_&lt;name&gt; "
        "results (accuracy), or kl_divergence_&lt;ctx&gt; results (top1 agreement against a "
        "reference model), which `pipette run` measures.</p>\n";
    return PageResponse(Layout("Quality vs speed", "quality", body));
  }
  const bool accuracy = quality_id.rfind("eval_", 0) == 0;
  // Switches between the quality benchmarks and decode benchmarks found.
  const Params keep = filters->ToParams();
  const auto switcher = [&](const char* key, const std::string& current,
                            const std::map<std::string, std::set<std::string>>& options) {
    std::string out;
    for (const auto& [id, keys] : options) {
      Params p = keep;
      p.emplace_back("quality", key == std::string("quality") ? id : quality_id);
      if (key == std::string("speed")) p.emplace_back("speed", id);
      out += id == current
                 ? " <b>" + Esc(id) + "</b>"
                 : " <a href=\"" + Esc("/quality" + QueryString(p)) + "\">" + Esc(id) + "</a>";
      out += fmt::format(" ({})", keys.size());
    }
    return out;
  };
  body += "<p class=\"meta\">Quality:" + switcher("quality", quality_id, quality_configs) +
          "<br>Speed:" + switcher("speed", speed_id, speed_configs) + "</p>\n";

  struct Drawn {
    const Quality* q;
    const ResultRow* s;
  };
  std::vector<Drawn> drawn;
  std::vector<const Quality*> without_speed;
  for (const auto& [key, q] : qualities) {
    if (const auto it = speed.find(key); it != speed.end()) {
      drawn.push_back({&q, it->second});
    } else {
      without_speed.push_back(&q);
    }
  }
  std::vector<std::vector<double>> objectives;
  for (const Drawn& d : drawn) objectives.push_back({*d.s->headline, d.q->value});
  std::vector<bool> front(drawn.size(), false);
  for (size_t i : ParetoFront(objectives)) front[i] = true;

  const std::string y_title =
      accuracy ? "eval accuracy (%), " + quality_id : "quality: top1 agreement (%), " + quality_id;
  body += "<p class=\"meta\">Each configuration's median decode throughput on " + Esc(speed_id) +
          " against " +
          (accuracy ? std::string("its eval accuracy (pass@1, %)")
                    : std::string("its top1 agreement with the reference model (%, 100 = the "
                                  "same next token everywhere)")) +
          ", with 95% CIs. Highlighted: the Pareto front (no other configuration is at least as "
          "fast and as good, and better in one).</p>\n";
  if (!drawn.empty()) {
    std::vector<report::ScatterPoint> points;
    for (size_t i = 0; i < drawn.size(); ++i) {
      report::ScatterPoint p;
      p.name = drawn[i].q->config.Name();
      p.x = *drawn[i].s->headline;
      p.y = drawn[i].q->value;
      p.on_front = front[i];
      p.x_low = drawn[i].s->headline_ci95_low;
      p.x_high = drawn[i].s->headline_ci95_high;
      p.y_low = drawn[i].q->low;
      p.y_high = drawn[i].q->high;
      points.push_back(std::move(p));
    }
    report::ChartSpec spec;
    spec.id = "quality-chart";
    spec.title = "Quality vs speed";
    spec.x.title = "decode throughput (tokens/s), " + speed_id;
    spec.x.units = report::Units::kSi;
    spec.y.title = y_title;
    // The whole percent scale, whatever the values: an axis titled % never reads 0..1 (all
    // configurations at 0% accuracy gave a domain of [0, 1]).
    spec.y.ticks = {0, 20, 40, 60, 80, 100};
    body += ScrollChart(report::ParetoScatter(spec, points));
  } else {
    body +=
        "<p class=\"empty\">No configuration with a quality result has a decode_throughput "
        "result; nothing to draw.</p>\n";
  }

  std::string t =
      "<thead><tr><th>Configuration</th><th class=\"num\">decode (tokens/s)</th>"
      "<th class=\"num\">95% CI</th><th class=\"num\">" +
      std::string(accuracy ? "accuracy (%)" : "top1 (%)") + "</th><th class=\"num\">95% CI</th>" +
      (accuracy ? "" : "<th class=\"num\">KL divergence (nats)</th>") +
      "<th>Pareto front</th><th>Results</th></tr></thead><tbody>\n";
  const auto row = [&](const Quality& q, const ResultRow* s, const std::string& on_front) {
    std::string r = "<tr class=\"entry\" data-config=\"" + Esc(q.config.Key()) +
                    "\"><td class=\"words\">" +
                    Esc(q.config.Name()) + "</td>";
    r += "<td class=\"num\">" + (s ? Esc(FormatBare(*s->headline, "tokens/s")) : "-") + "</td>";
    r += "<td class=\"num\">" +
         (s ? Esc(CiText(s->headline_ci95_low, s->headline_ci95_high, "tokens/s")) : "-") + "</td>";
    r += "<td class=\"num\">" + fmt::format("{:.2f}", q.value) + "</td><td class=\"num\">" +
         (q.low && q.high ? fmt::format("{:.2f} .. {:.2f}", *q.low, *q.high) : "-") + "</td>";
    if (!accuracy)
      r += "<td class=\"num\">" + (q.kl ? fmt::format("{:.4g}", *q.kl) : "-") + "</td>";
    r += "<td>" + on_front + "</td><td><a href=\"/results/" + Esc(UrlEncode(q.result_id)) +
         "\">quality</a>";
    if (s) r += " <a href=\"/results/" + Esc(UrlEncode(s->result_id)) + "\">speed</a>";
    return r + "</td></tr>\n";
  };
  for (size_t i = 0; i < drawn.size(); ++i) {
    t += row(*drawn[i].q, drawn[i].s, front[i] ? "yes" : "no");
  }
  for (const Quality* q : without_speed) t += row(*q, nullptr, "not drawn (no speed)");
  t += "</tbody>";
  body += ScrollTable(t, "quality");
  return PageResponse(Layout("Quality vs speed", "quality", body));
}

}  // namespace pipette::dashboard
