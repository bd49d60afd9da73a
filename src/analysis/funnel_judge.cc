// The decision funnel's judge (include/pipette/funnel.h): simultaneous intervals, limits, then
// dominance with confidence.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "pipette/funnel.h"
#include "pipette/stats.h"

namespace pipette {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// z with P(|Z| > z) = 1 - confidence, Z standard normal (bisection on erfc: exact to 1e-12,
// and this runs a few times per judgement).
double TwoSidedZ(double confidence) {
  const double tail = 1 - confidence;
  double lo = 0, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erfc(mid / std::sqrt(2.0)) > tail ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

std::string Value(double v, const std::string& metric) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : "-inf";
  if (metric == "max_host_usage") return fmt::format("{:.2f} MiB", v / (1024.0 * 1024.0));
  if (metric == "decode_throughput") return fmt::format("{:.1f} tokens/s", v);
  if (metric == "ttft" || metric == "end_to_end_latency") return fmt::format("{:.1f} ms", v);
  if (metric == "average_power") return fmt::format("{:.2f} W", v);
  if (metric == "energy_per_token") return fmt::format("{:.2f} mJ/token", v);
  return fmt::format("{:.1f}%", v);  // quality, accuracy
}

std::string Bound(double v, const std::string& metric) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : "-inf";
  const std::string s = Value(v, metric);
  return s.substr(0, s.find(' '));
}

// "max_host_usage 13.07 MiB [12.98, 13.15] (max_memory_usage_256)"
std::string Describe(const FunnelMeasure& m, const FunnelInterval& i) {
  return fmt::format("{} {} [{}, {}] ({})", m.metric, Value(i.point, m.metric),
                     Bound(i.low, m.metric), Bound(i.high, m.metric), m.benchmark_id);
}

struct Judged {
  const FunnelMeasure* measure;
  FunnelInterval interval;
};

bool IsAccuracyOf(const FunnelMeasure& m, const std::string& eval) {
  return m.metric == "accuracy" && (m.dataset == eval || m.benchmark_id == eval);
}

// The three outcomes of one limit on one interval.
enum class Side { kInside, kCrossing, kBeyond };
Side Against(const FunnelInterval& i, double threshold, bool upper) {
  if (upper) {
    if (i.high <= threshold) return Side::kInside;
    return i.low > threshold ? Side::kBeyond : Side::kCrossing;
  }
  if (i.low >= threshold) return Side::kInside;
  return i.high < threshold ? Side::kBeyond : Side::kCrossing;
}

struct LimitSpec {
  std::string name, metric;
  bool upper = true;
  double threshold = 0;
  std::string eval;  // accuracy limits
};

std::vector<LimitSpec> PlainLimits(const Limits& l) {
  std::vector<LimitSpec> out;
  if (l.max_ttft_ms) out.push_back({"max_ttft", "ttft", true, *l.max_ttft_ms, ""});
  if (l.max_latency_ms) {
    out.push_back({"max_latency", "end_to_end_latency", true, *l.max_latency_ms, ""});
  }
  if (l.max_memory_bytes) {
    out.push_back({"max_memory", "max_host_usage", true, *l.max_memory_bytes, ""});
  }
  if (l.min_decode_throughput) {
    out.push_back({"min_decode_throughput", "decode_throughput", false,
                   *l.min_decode_throughput, ""});
  }
  if (l.max_power_w) out.push_back({"max_power", "average_power", true, *l.max_power_w, ""});
  if (l.max_energy_per_token_mj) {
    out.push_back({"max_energy_per_token", "energy_per_token", true,
                   *l.max_energy_per_token_mj, ""});
  }
  for (const auto& a : l.min_accuracy) {
    out.push_back({"min_accuracy", "accuracy", false, 100 * a.value, a.eval});
  }
  return out;
}

bool Matches(const FunnelMeasure& m, const LimitSpec& s) {
  return s.eval.empty() ? m.metric == s.metric : IsAccuracyOf(m, s.eval);
}

// A drop limit: the best point among `pool` (the same metric), minus this candidate's, in pp.
struct DropLimit {
  std::string name;
  double threshold = 0;
  std::string eval;  // "" for the quality drop
};

bool BetterSide(const FunnelInterval& x, const FunnelInterval& w, bool higher) {
  return higher ? x.low > w.high : x.high < w.low;
}
bool PointAtLeast(const FunnelInterval& x, const FunnelInterval& w, bool higher) {
  return higher ? x.point >= w.point : x.point <= w.point;
}
bool PointBetter(const FunnelInterval& x, const FunnelInterval& w, bool higher) {
  return higher ? x.point > w.point : x.point < w.point;
}

bool OfObjective(const FunnelMeasure& m, FunnelObjective o) {
  switch (o) {
    case FunnelObjective::kDecode:
      return m.metric == "decode_throughput";
    case FunnelObjective::kMemory:
      return m.metric == "max_host_usage";
    case FunnelObjective::kQuality:
      return m.metric == "quality" || m.metric == "accuracy";
  }
  return false;
}
bool HigherIsBetter(FunnelObjective o) { return o != FunnelObjective::kMemory; }

}  // namespace

const char* FunnelObjectiveName(FunnelObjective o) {
  switch (o) {
    case FunnelObjective::kDecode:
      return "decode";
    case FunnelObjective::kMemory:
      return "memory";
    case FunnelObjective::kQuality:
      return "quality";
  }
  return "?";
}

double FunnelConfidence(const FunnelRule& rule, size_t candidates) {
  const double intervals = static_cast<double>(std::max<size_t>(candidates, 1)) *
                           std::max(rule.measures_per_candidate, 1) * std::max(rule.looks, 1);
  return 1 - rule.alpha / intervals;
}

int FunnelMinRepetitions(double confidence) {
  int n = 1;
  while (2 * std::pow(0.5, n) > 1 - confidence) ++n;
  return n;
}

FunnelInterval FunnelIntervalOf(const FunnelMeasure& m, double confidence) {
  FunnelInterval out;
  switch (m.kind) {
    case FunnelMeasure::Kind::kExact:
      out.point = out.low = out.high = m.value;
      out.n = 1;
      return out;
    case FunnelMeasure::Kind::kRepetitions: {
      out.n = m.samples.size();
      if (m.samples.empty()) return out;
      out.point = Median(m.samples);
      if (static_cast<int>(m.samples.size()) < FunnelMinRepetitions(confidence)) return out;
      const Interval ci = OrderStatisticMedianCi(m.samples, confidence);
      out.low = ci.low;
      out.high = ci.high;
      return out;
    }
    case FunnelMeasure::Kind::kProportion: {
      out.n = static_cast<size_t>(std::max(m.trials, 0LL));
      if (m.trials <= 0) return out;
      out.point = 100.0 * static_cast<double>(m.successes) / static_cast<double>(m.trials);
      const Interval w = WilsonInterval(m.successes, m.trials, TwoSidedZ(confidence));
      out.low = 100 * w.low;
      out.high = 100 * w.high;
      return out;
    }
    case FunnelMeasure::Kind::kClusters: {
      long long s = 0, t = 0;
      for (const auto& [cs, ct] : m.clusters) {
        s += cs;
        t += ct;
      }
      out.n = static_cast<size_t>(t);
      if (t <= 0) return out;
      out.point = 100.0 * static_cast<double>(s) / static_cast<double>(t);
      if (m.clusters.size() < 2) return out;
      // Enough resamples that each tail holds about 20 of them.
      const int resamples = static_cast<int>(
          std::clamp(40.0 / std::max(1 - confidence, 1e-9), 10000.0, 400000.0));
      const Interval ci = ClusterBootstrapProportionCi(m.clusters, confidence, resamples);
      out.low = 100 * ci.low;
      out.high = 100 * ci.high;
      return out;
    }
  }
  return out;
}

FunnelJudgement JudgeFunnel(const std::vector<FunnelCandidate>& candidates,
                            const FunnelRule& rule) {
  FunnelJudgement out;
  out.confidence = FunnelConfidence(rule, candidates.size());
  const size_t n = candidates.size();
  out.standings.resize(n);
  const std::string at = fmt::format("at {:.4g}%", 100 * out.confidence);

  std::vector<std::vector<Judged>> judged(n);
  for (size_t i = 0; i < n; ++i) {
    for (const FunnelMeasure& m : candidates[i].measures) {
      judged[i].push_back({&m, FunnelIntervalOf(m, out.confidence)});
    }
  }
  std::vector<std::set<std::string>> undecided(n);

  // Limits.
  const std::vector<LimitSpec> plain = PlainLimits(rule.limits);
  std::vector<DropLimit> drops;
  if (rule.limits.max_quality_drop) drops.push_back({"max_quality_drop", *rule.limits.max_quality_drop, ""});
  for (const auto& a : rule.limits.max_accuracy_drop) drops.push_back({"max_accuracy_drop", a.value, a.eval});

  for (size_t i = 0; i < n; ++i) {
    FunnelStanding& s = out.standings[i];
    bool met = true;
    for (const LimitSpec& spec : plain) {
      bool any = false;
      for (const Judged& j : judged[i]) {
        if (!Matches(*j.measure, spec)) continue;
        any = true;
        const Side side = Against(j.interval, spec.threshold, spec.upper);
        if (side == Side::kBeyond && !s.out) {
          s.out = true;
          s.reason = fmt::format("fails {}: {} {} {} {}", spec.name, Describe(*j.measure, j.interval),
                                 at, spec.upper ? ">" : "<",
                                 Value(spec.threshold, j.measure->metric));
        } else if (side == Side::kCrossing) {
          met = false;
          undecided[i].insert(j.measure->benchmark_id);
          s.open_limits.push_back(fmt::format("{}: {} {} crosses {}", spec.name,
                                              Describe(*j.measure, j.interval), at,
                                              Value(spec.threshold, j.measure->metric)));
        }
      }
      if (!any) {
        met = false;
        if (candidates[i].complete && !s.out) {
          s.out = true;
          s.reason = fmt::format("fails {}: {} not measured", spec.name,
                                 spec.eval.empty() ? spec.metric : "accuracy on " + spec.eval);
        }
      }
    }
    for (const DropLimit& d : drops) {
      const std::string metric = d.eval.empty() ? "quality" : "accuracy";
      auto mine = [&](const FunnelMeasure& m) {
        return d.eval.empty() ? m.metric == "quality" : IsAccuracyOf(m, d.eval);
      };
      // The best point among all candidates (the family's for accuracy), as `select` takes it.
      const Judged* best = nullptr;
      for (size_t k = 0; k < n; ++k) {
        if (!d.eval.empty() && candidates[k].family != candidates[i].family) continue;
        for (const Judged& j : judged[k]) {
          if (mine(*j.measure) && (!best || j.interval.point > best->interval.point)) best = &j;
        }
      }
      bool any = false;
      for (const Judged& j : judged[i]) {
        if (!mine(*j.measure) || !best) continue;
        any = true;
        const double low = best->interval.low - j.interval.high;
        const double high = best->interval.high - j.interval.low;
        const double point = best->interval.point - j.interval.point;
        if (low > d.threshold && !s.out) {
          s.out = true;
          s.reason = fmt::format("fails {}: drop {:.1f} pp [{:.1f}, {:.1f}] {} > {:g} pp ({} against {})",
                                 d.name, point, low, high, at, d.threshold,
                                 Describe(*j.measure, j.interval), Describe(*best->measure, best->interval));
        } else if (!(high <= d.threshold)) {
          met = false;
          undecided[i].insert(j.measure->benchmark_id);
          s.open_limits.push_back(fmt::format("{}: drop {:.1f} pp [{:.1f}, {:.1f}] {} crosses {:g} pp",
                                              d.name, point, low, high, at, d.threshold));
        }
      }
      if (!any) {
        met = false;
        if (candidates[i].complete && !s.out) {
          s.out = true;
          s.reason = fmt::format("fails {}: {} not measured", d.name,
                                 d.eval.empty() ? "quality (kl_divergence)" : "accuracy on " + d.eval);
        }
      }
    }
    // A limit holds only once every benchmark that measures its metric has: a configuration
    // that may still fail on a longer shape must not remove another.
    s.limits_met = met && !s.out && (candidates[i].complete || (plain.empty() && drops.empty()));
  }

  // Dominance among those left.
  auto objective_of = [&](size_t i, FunnelObjective o) {
    std::map<std::string, const Judged*> by_benchmark;
    for (const Judged& j : judged[i]) {
      if (OfObjective(*j.measure, o)) by_benchmark[j.measure->benchmark_id + "/" + j.measure->metric] = &j;
    }
    return by_benchmark;
  };
  std::vector<std::vector<std::map<std::string, const Judged*>>> objectives(n);
  for (size_t i = 0; i < n; ++i) {
    for (FunnelObjective o : rule.objectives) objectives[i].push_back(objective_of(i, o));
  }
  // Compares X with W on every objective W has: whether X is wholly better with confidence, by
  // the medians at least as good (and better somewhere), and where their intervals overlap.
  struct Comparison {
    bool confident = true, by_medians = true, strictly = false, any = false;
    std::vector<std::string> overlapping_x, overlapping_w;
  };
  auto compare = [&](size_t x, size_t w) {
    Comparison c;
    for (size_t k = 0; k < rule.objectives.size(); ++k) {
      const bool higher = HigherIsBetter(rule.objectives[k]);
      for (const auto& [key, wj] : objectives[w][k]) {
        c.any = true;
        const auto it = objectives[x][k].find(key);
        if (it == objectives[x][k].end()) {
          c.confident = c.by_medians = false;
          continue;
        }
        const Judged& xj = *it->second;
        if (!(xj.interval.bounded() && wj->interval.bounded() &&
              BetterSide(xj.interval, wj->interval, higher))) {
          c.confident = false;
          c.overlapping_x.push_back(xj.measure->benchmark_id);
          c.overlapping_w.push_back(wj->measure->benchmark_id);
        }
        if (!PointAtLeast(xj.interval, wj->interval, higher)) c.by_medians = false;
        if (PointBetter(xj.interval, wj->interval, higher)) c.strictly = true;
      }
    }
    c.confident = c.confident && c.any;
    c.by_medians = c.by_medians && c.strictly && c.any;
    return c;
  };
  for (size_t w = 0; w < n; ++w) {
    if (out.standings[w].out) continue;
    for (size_t x = 0; x < n; ++x) {
      if (x == w || out.standings[x].out) continue;
      const Comparison c = compare(x, w);
      if (c.confident && out.standings[x].limits_met) {
        std::vector<std::string> parts;
        for (size_t k = 0; k < rule.objectives.size(); ++k) {
          for (const auto& [key, wj] : objectives[w][k]) {
            const Judged& xj = *objectives[x][k].at(key);
            parts.push_back(fmt::format("{} vs {}", Describe(*xj.measure, xj.interval),
                                        Describe(*wj->measure, wj->interval)));
          }
        }
        FunnelStanding& s = out.standings[w];
        s.out = true;
        s.limits_met = false;
        std::string joined;
        for (const auto& p : parts) joined += (joined.empty() ? "" : "; ") + p;
        s.reason = fmt::format("dominated by {} {}: {}", candidates[x].name, at, joined);
        break;
      }
      if (c.by_medians) {
        // X may dominate W: more repetitions on the overlapping objectives decide it.
        undecided[w].insert(c.overlapping_w.begin(), c.overlapping_w.end());
        undecided[x].insert(c.overlapping_x.begin(), c.overlapping_x.end());
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (out.standings[i].out) continue;
    out.standings[i].undecided.assign(undecided[i].begin(), undecided[i].end());
  }
  return out;
}

}  // namespace pipette
