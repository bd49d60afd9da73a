// The decision funnel's judge (issue 26, docs/deciding.md): which configurations leave the funnel,
// with the evidence, judged on intervals that keep their error rate although the funnel looks at
// them again after every new measurement.
//
// The method: simultaneous intervals by Bonferroni over every interval the funnel can ever look
// at. A run of the funnel measures each (configuration, benchmark) at most `looks` times (one
// screen result, one measure result, then at most the measure rounds), so it sees at most
// C x M x looks distinct intervals, C configurations with M judged measurements each. Each is
// taken at confidence 1 - alpha / (C x M x looks); by the union bound all of them cover their
// true values at once with probability at least 1 - alpha, and a configuration leaves only on
// intervals that exclude the truth it would need: a configuration that should win (it meets
// every limit and nothing dominates it) leaves with probability at most alpha, however many
// times the intervals were looked at. Each interval is distribution-free:
//   - repetitions (throughput, latency, memory): the order-statistic interval of the median
//     (Conover 3.2), exact for exchangeable repetitions of any continuous distribution; too few
//     repetitions for the confidence give an unbounded interval (nothing is decided on them);
//   - proportions (top-1 agreement over positions): the Wilson score interval at the same
//     confidence;
//   - eval accuracy: the cluster bootstrap over questions at the same confidence.
// Simulated in funnel_judge_test.cc (FunnelJudge.WrongEliminationsStayUnderAlpha).
//
// Pure functions, no I/O; thread-safe.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "pipette/analysis.h"

namespace pipette {

// One measurement of a configuration as the funnel judges it: the repetitions of one metric of
// one benchmark, pooled over the funnel's results of that benchmark.
struct FunnelMeasure {
  enum class Kind {
    kRepetitions,  // `samples`: one value per measured repetition
    kProportion,   // `successes` of `trials` (top-1 agreement over positions), judged in %
    kClusters,     // `clusters` of (successes, trials): eval attempts per question, in %
    kExact,        // `value` without uncertainty (a reference model's quality: 100)
  };
  std::string benchmark_id;
  // "max_host_usage" (bytes), "decode_throughput" (tokens/s), "ttft" (ms), "end_to_end_latency"
  // (ms), "average_power" (W), "energy_per_token" (mJ/token), "quality" (top-1 agreement, %),
  // "accuracy" (eval accuracy, %).
  std::string metric;
  std::string dataset;  // accuracy: the eval data set ("math_500"); "" otherwise
  Kind kind = Kind::kRepetitions;
  std::vector<double> samples;
  long long successes = 0, trials = 0;
  std::vector<std::pair<int, int>> clusters;
  double value = 0;  // kExact
};

// One configuration before the judge.
struct FunnelCandidate {
  std::string name;
  std::string family;  // ModelFamily of its model (accuracy drops compare within a family)
  std::vector<FunnelMeasure> measures;
  // Every benchmark the decision reads has been measured on it: a limit whose metric it still
  // lacks then fails ("not measured") instead of waiting.
  bool complete = false;
};

// The objectives of the front (DESIGN.md 6).
enum class FunnelObjective {
  kDecode,   // decode_throughput, higher is better (each decode benchmark on its own)
  kMemory,   // max_host_usage, lower is better
  kQuality,  // quality or accuracy, higher is better
};
const char* FunnelObjectiveName(FunnelObjective o);  // "decode", "memory", "quality"

struct FunnelRule {
  Limits limits;  // those of `select`; `benchmarks` and `accuracy_reference` are not used here
  std::vector<FunnelObjective> objectives;
  double alpha = 0.05;  // the most often a configuration that should win may leave
  int looks = 1;        // the most results one (configuration, benchmark) gets in the funnel
  // M above: the judged measurements a configuration can have (benchmark x metric pairs).
  int measures_per_candidate = 1;
};

// The confidence of each interval: 1 - alpha / (candidates x measures_per_candidate x looks).
double FunnelConfidence(const FunnelRule& rule, size_t candidates);

// The fewest repetitions whose order-statistic interval of the median is bounded at
// `confidence` (2 x 0.5^n <= 1 - confidence): 6 at 95%, 12 at 99.95%.
int FunnelMinRepetitions(double confidence);

// An interval at the funnel's confidence; unbounded (-inf, +inf) when it cannot be had (too few
// repetitions, nothing measured).
struct FunnelInterval {
  double point = std::numeric_limits<double>::quiet_NaN();  // median / proportion / value
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  size_t n = 0;  // repetitions, positions or attempts behind it
  bool bounded() const { return low > -std::numeric_limits<double>::infinity() &&
                                high < std::numeric_limits<double>::infinity(); }
};
FunnelInterval FunnelIntervalOf(const FunnelMeasure& m, double confidence);

// What the judge made of one candidate.
struct FunnelStanding {
  bool out = false;        // leaves the funnel
  std::string reason;      // why (one line with the intervals), when out
  bool limits_met = false; // every limit holds on its intervals, and the candidate is complete
                           // (none given: true)
  // Benchmarks where more repetitions could change the decision: a limit its interval
  // crosses, or an objective where it and a configuration it may dominate or be dominated by
  // (by the medians, not yet with confidence) overlap. Sorted, unique.
  std::vector<std::string> undecided;
  // Limits whose intervals still cross their threshold (text per limit), for the verdict.
  std::vector<std::string> open_limits;
};

struct FunnelJudgement {
  double confidence = 0;  // of each interval
  std::vector<FunnelStanding> standings;  // one per candidate, in order
};

// Judges `candidates` under `rule`: first the limits (a candidate leaves when an interval of a
// limit's metric lies wholly beyond it, or when it is complete and never measured the metric),
// then dominance among those left: X removes W when X meets every limit on its intervals and,
// on every objective W has, X has the same benchmarks and each of X's intervals lies wholly on
// the better side of W's. Ties never remove anything.
FunnelJudgement JudgeFunnel(const std::vector<FunnelCandidate>& candidates,
                            const FunnelRule& rule);

}  // namespace pipette
