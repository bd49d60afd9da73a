// Scorer throughput on one core over the shared verdict corpus (../shared/data/evals/scoring):
// completions/s for GPQA Diamond (target >= 10,000/s) and MATH-500 (target >= 1,000/s; also
// ScoreMathUpstream, its --upstream-compat mode). Reported as the counter `completions/s` (a
// rate: completions per wall-clock second, 1000-based).
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "pipette/scorers.h"
#include "tests/support/scoring_corpus.h"

namespace {

// (completion, gold) pairs of a corpus file; empty when it is absent.
std::vector<std::pair<std::string, std::string>> ReadCorpus(const char* file, const char* gold) {
  std::vector<std::pair<std::string, std::string>> corpus;
  for (const auto& r : pipette::testing::ReadScoringCorpus(file)) {
    corpus.emplace_back(r["completion"].get<std::string>(), r[gold].get<std::string>());
  }
  return corpus;
}

template <typename Score>
void Run(benchmark::State& state, const char* file, const char* gold, Score score) {
  const auto corpus = ReadCorpus(file, gold);
  if (corpus.empty()) {
    state.SkipWithError("no scoring corpus under ../shared/data/evals/scoring");
    return;
  }
  size_t correct = 0;
  for (auto _ : state) {
    for (const auto& [completion, g] : corpus) correct += score(completion, g) ? 1 : 0;
  }
  benchmark::DoNotOptimize(correct);
  state.counters["completions/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * corpus.size()), benchmark::Counter::kIsRate);
}

void BM_ScoreGpqa(benchmark::State& state) {
  Run(state, "gpqa_verdicts.jsonl.gz", "correct_letter",
      [](const std::string& c, const std::string& g) {
        return pipette::scorers::ScoreGpqa(c, g[0]).correct;
      });
}
BENCHMARK(BM_ScoreGpqa)->Unit(benchmark::kMillisecond);

void BM_ScoreMath(benchmark::State& state) {
  Run(state, "math500_verdicts.jsonl.gz", "gold", [](const std::string& c, const std::string& g) {
    return pipette::scorers::ScoreMath(c, g).correct;
  });
}
BENCHMARK(BM_ScoreMath)->Unit(benchmark::kMillisecond);

void BM_ScoreMathUpstream(benchmark::State& state) {
  Run(state, "math500_verdicts.jsonl.gz", "gold", [](const std::string& c, const std::string& g) {
    return pipette::scorers::ScoreMathUpstream(c, g).correct;
  });
}
BENCHMARK(BM_ScoreMathUpstream)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
