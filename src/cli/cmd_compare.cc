#include "cli/cmd_compare.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "pipette/mann_whitney.h"
#include "pipette/stats.h"
#include "pipette/store.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct CompareArgs {
  std::string a, b;
  double alpha = 0.05;  // significance level of the two-sided test
  double noise = 0.02;  // ratios within 1 +- noise are never called a difference
};

// Raw per-repetition samples of `metric` (per-token values for inter_token_latency).
std::vector<double> Samples(const json& record, const std::string& metric) {
  std::vector<double> out;
  for (const json& s : record.value("samples", json::array())) {
    if (!s.contains(metric)) continue;
    const json& v = s[metric];
    if (v.is_number()) out.push_back(v.get<double>());
    if (v.is_array()) {
      for (const json& x : v) {
        if (x.is_number()) out.push_back(x.get<double>());
      }
    }
  }
  return out;
}

bool HigherIsBetter(const std::string& metric) {
  return metric.ends_with("_throughput") || metric == "top1_agreement" ||
         metric == "decode_roofline_efficiency";
}

std::string Verdict(const std::string& metric, const std::string& unit, double ratio, double p,
                    const CompareArgs& a) {
  if (!(p < a.alpha) || std::abs(ratio - 1) <= a.noise) return "no significant difference";
  const bool better = HigherIsBetter(metric) ? ratio > 1 : ratio < 1;
  const bool speed = metric.ends_with("_throughput") || unit == "ms";
  if (speed) return better ? "faster" : "slower";
  return better ? "better" : "worse";
}

Result<json> Load(ResultStore& store, const std::string& id) {
  auto r = store.Get(id);
  if (!r) return r.error();
  if (!r->has_value()) {
    return MakeError("no result '" + id + "' in " + store.path() + "; `pipette results list` shows them");
  }
  if ((**r).value("status", "") != "ok") {
    return MakeError("result " + id + " failed; only ok results have measurements to compare");
  }
  return **r;
}

int Compare(const CompareArgs& a, CliContext& ctx) {
  const std::string path = ctx.store_path.empty() ? DefaultStorePath() : ctx.store_path;
  auto store = ResultStore::Open(path);
  if (!store) return ReportError(ctx, store.error(), kExitFailure);
  auto ra = Load(**store, a.a);
  if (!ra) return ReportError(ctx, ra.error());
  auto rb = Load(**store, a.b);
  if (!rb) return ReportError(ctx, rb.error());
  json rows = json::array();
  for (const auto& [metric, ma] : (*ra)["metrics"].items()) {
    if (!(*rb)["metrics"].contains(metric)) continue;
    const json& mb = (*rb)["metrics"][metric];
    const std::vector<double> sa = Samples(*ra, metric), sb = Samples(*rb, metric);
    const double med_a = ma.value("median", 0.0), med_b = mb.value("median", 0.0);
    const double ratio = med_a != 0 ? med_b / med_a : 0;
    json row = {{"metric", metric}, {"unit", ma.value("unit", "")}, {"a_median", med_a},
                {"b_median", med_b}, {"ratio", ratio}, {"a_n", sa.size()}, {"b_n", sb.size()}};
    if (sa.size() >= 2 && sb.size() >= 2) {
      const MannWhitneyResult t = MannWhitneyU(sa, sb);
      row["p_value"] = t.p_value;
      row["verdict"] = Verdict(metric, row["unit"], ratio, t.p_value, a);
    } else {
      row["p_value"] = nullptr;
      row["verdict"] = "not repeated (one value)";
    }
    rows.push_back(row);
  }
  if (ctx.json) {
    std::cout << json{{"a", (*ra)["result_id"]}, {"b", (*rb)["result_id"]}, {"alpha", a.alpha},
                      {"noise", a.noise}, {"metrics", rows}}.dump(2)
              << std::endl;
    return kExitOk;
  }
  const auto describe = [](const json& r) {
    return fmt::format("{} {} {} threads={}", r["benchmark"].value("id", ""),
                       r["model"].value("file_name", ""), r["model"].value("quant", ""),
                       r["runtime"]["settings"].value("threads", 0));
  };
  std::cout << "A  " << (*ra)["result_id"].get<std::string>() << "  " << describe(*ra) << "\n"
            << "B  " << (*rb)["result_id"].get<std::string>() << "  " << describe(*rb) << "\n";
  std::cout << fmt::format("| {:<36} | {:>14} | {:>14} | {:>7} | {:>9} | {:<26} |\n", "metric",
                           "A median", "B median", "B/A", "p", "verdict");
  std::cout << "|" << std::string(38, '-') << "|" << std::string(16, '-') << "|"
            << std::string(16, '-') << "|" << std::string(9, '-') << "|" << std::string(11, '-')
            << "|" << std::string(28, '-') << "|\n";
  for (const json& r : rows) {
    std::cout << fmt::format("| {:<36} | {:>14.6g} | {:>14.6g} | {:>7.3f} | {:>9} | {:<26} |\n",
                             r["metric"].get<std::string>() + " (" + r["unit"].get<std::string>() + ")",
                             r["a_median"].get<double>(), r["b_median"].get<double>(),
                             r["ratio"].get<double>(),
                             r["p_value"].is_number() ? fmt::format("{:.3g}", r["p_value"].get<double>()) : "-",
                             r["verdict"].get<std::string>());
  }
  std::cout << fmt::format("two-sided Mann-Whitney U on the raw samples; a difference needs p < {} "
                           "and B/A outside 1 +- {}\n", a.alpha, a.noise);
  if ((*ra)["benchmark"]["id"] != (*rb)["benchmark"]["id"]) {
    std::cerr << "pipette: warning: A and B ran different benchmarks\n";
  }
  return kExitOk;
}

}  // namespace

void AddCompareCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand("compare", "Compare two results metric by metric, with a "
                                                 "Mann-Whitney U test on their raw samples");
  cmd->add_option("a", args->a, "result id (or unique prefix) of the baseline")->required();
  cmd->add_option("b", args->b, "result id (or unique prefix) compared with it")->required();
  cmd->add_option("--alpha", args->alpha, "significance level")->capture_default_str()
      ->check(CLI::Range(1e-9, 0.5));
  cmd->add_option("--noise", args->noise, "relative noise band: smaller changes are not reported")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->callback([args, &ctx] { Compare(*args, ctx); });
}

}  // namespace pipette::cli
