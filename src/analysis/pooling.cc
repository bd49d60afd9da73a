// Repeated results pooled (issue 7): several ok results of one configuration and benchmark become
// one estimate over all their repetitions, so one noisy rerun no longer decides a ranking.
#include <optional>
#include <string>
#include <vector>

#include "analysis/noise.h"
#include "analysis/record_fields.h"
#include "pipette/analysis.h"
#include "pipette/record.h"
#include "pipette/stats.h"

namespace pipette {

using nlohmann::json;

namespace {

// Benchmark types whose repetitions are exchangeable samples of one quantity. A soak is a time
// series (its drift is the point), a kl_divergence result is deterministic, an eval is scored.
bool Poolable(const std::string& type) {
  return type == "prefill" || type == "decode" || type == "e2e" || type == "memory";
}

// The per-repetition values of `metric` in `record`: samples[].<metric> (an array there, such as
// the per-token inter_token_latency, is flattened and marks the series per-token), or its one
// value when it was measured once per cell (load_time). nullopt when the record cannot contribute.
std::optional<std::vector<double>> ValuesOf(const json& record, const std::string& metric,
                                            bool& per_token) {
  std::vector<double> values;
  if (record.contains("samples") && record["samples"].is_array()) {
    for (const json& s : record["samples"]) {
      if (!s.is_object() || !s.contains(metric)) continue;
      const json& v = s[metric];
      if (v.is_number()) values.push_back(v.get<double>());
      if (v.is_array()) {
        per_token = true;
        for (const json& x : v) {
          if (x.is_number()) values.push_back(x.get<double>());
        }
      }
    }
  }
  if (!values.empty()) return values;
  const auto n = record::MetricValue(record, metric, "n");
  const auto median = record::MetricValue(record, metric, "median");
  if (n && *n == 1 && median) return std::vector<double>{*median};
  return std::nullopt;
}

double CiTarget(const json& record) {
  const json* target = record::Find(record, "/harness/ci_target");
  return target != nullptr && target->is_number() ? target->get<double>() : 0.02;
}

}  // namespace

json PoolResults(const std::vector<const json*>& results) {
  if (results.empty()) return json();
  const json& newest = *results.front();
  if (results.size() == 1 || !Poolable(analysis::BenchmarkTypeOf(newest))) return newest;
  // A result without per-repetition values of the headline metric (a mean-only import:
  // llama-bench's sql output) cannot join a pool of repetitions: the pool is made of the others
  // and says which it left out, rather than keeping the newest estimate and counting results
  // that gave nothing.
  const std::string headline_metric = analysis::HeadlineMetricOf(newest);
  std::vector<const json*> contributing;
  json left_out = json::array();
  for (const json* r : results) {
    bool per_token = false;
    if (ValuesOf(*r, headline_metric, per_token)) {
      contributing.push_back(r);
    } else {
      left_out.push_back({{"result_id", record::StringAt(*r, "/result_id")},
                          {"reason", "no per-repetition values of " + headline_metric +
                                         " (a mean without samples)"}});
    }
  }
  if (contributing.empty()) return newest;  // nothing to pool: the newest estimate as it is
  if (!left_out.empty()) {
    json pooled = PoolResults(contributing);
    if (!pooled.contains("pooled")) {
      pooled["pooled"] = {{"results", 1},
                          {"result_ids", {record::StringAt(pooled, "/result_id")}},
                          {"reps", pooled.value("harness", json::object()).value("reps", 0)},
                          {"noisy_results", analysis::IsNoisy(pooled) ? 1 : 0}};
    }
    pooled["pooled"]["left_out"] = left_out;
    return pooled;
  }
  json pooled = newest;
  json metrics = json::object();
  const json newest_metrics = newest.value("metrics", json::object());
  if (!newest_metrics.is_object()) return newest;
  for (const auto& [metric, summary] : newest_metrics.items()) {
    std::vector<double> values;
    std::vector<std::vector<double>> runs;  // per result, for the two-stage bootstrap
    bool complete = true, per_token = false;
    for (const json* r : results) {
      auto v = ValuesOf(*r, metric, per_token);
      if (!v) {
        complete = false;
        break;
      }
      values.insert(values.end(), v->begin(), v->end());
      runs.push_back(std::move(*v));
    }
    if (!complete || values.empty()) {
      metrics[metric] = summary;  // cannot be pooled: the newest result's own estimate
      continue;
    }
    const bool percentiles = summary.is_object() && summary.contains("p99");
    // A per-token series (thousands of latencies) keeps the order-statistic interval, which the
    // bootstrap converges to, instead of 10,000 resamples of it (seconds per estimate;
    // bench/micro/pooling_bench). Per-repetition values get the two-stage bootstrap, which
    // resamples the results too: runs that disagree widen the interval, as they should.
    Summary pooled_summary = Summarize(values, percentiles, MedianCi::kOrderStatistic);
    if (!per_token) {
      const Interval ci = ClusterBootstrapMedianCi(runs);
      pooled_summary.ci95_low = ci.low;
      pooled_summary.ci95_high = ci.high;
    }
    metrics[metric] = ToJson(pooled_summary, summary.value("unit", ""));
  }
  pooled["metrics"] = metrics;

  json samples = json::array();
  json ids = json::array();
  int rep = 0, noisy = 0;
  for (const json* r : results) {
    ids.push_back(record::StringAt(*r, "/result_id"));
    const json* reached = record::Find(*r, "/harness/ci_reached");
    if (reached != nullptr && *reached == false) ++noisy;
    if (!r->contains("samples") || !(*r)["samples"].is_array()) continue;
    for (json s : (*r)["samples"]) {
      s["rep"] = ++rep;
      s["result_id"] = record::StringAt(*r, "/result_id");
      samples.push_back(std::move(s));
    }
  }
  pooled["samples"] = samples;
  pooled["harness"]["reps"] = rep;
  const std::string headline = analysis::HeadlineMetricOf(newest);
  bool reached = false;
  if (auto n = record::MetricValue(pooled, headline, "n"); n && *n >= 3) {
    Summary s;
    s.median = *record::MetricValue(pooled, headline, "median");
    s.ci95_low = record::MetricValue(pooled, headline, "ci95_low").value_or(s.median);
    s.ci95_high = record::MetricValue(pooled, headline, "ci95_high").value_or(s.median);
    reached = CiWithinTarget(s, CiTarget(newest));
  }
  pooled["harness"]["ci_reached"] = reached;
  pooled["pooled"] = {
      {"results", results.size()}, {"result_ids", ids}, {"reps", rep}, {"noisy_results", noisy}};
  return pooled;
}

}  // namespace pipette
