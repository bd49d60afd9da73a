// Scorer throughput on one core over the shared verdict corpus (../shared/data/evals/scoring):
// completions/s for GPQA Diamond (target >= 10,000/s) and MATH-500 (target >= 1,000/s). Reported
// as the counter `completions/s` (a rate: completions per wall-clock second, 1000-based).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "pipette/scorers.h"

namespace {

// (completion, gold) pairs of a gzip JSON Lines corpus; empty when the file is absent.
std::vector<std::pair<std::string, std::string>> ReadCorpus(const char* file, const char* gold) {
  std::vector<std::pair<std::string, std::string>> corpus;
  const std::string path = std::string(PIPETTE_SHARED_DIR) + "/data/evals/scoring/" + file;
  FILE* pipe = popen(("gzip -dc '" + path + "' 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return corpus;
  std::string data;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) data.append(buf, n);
  pclose(pipe);
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    if (end > start) {
      const auto r = nlohmann::json::parse(data.substr(start, end - start));
      corpus.emplace_back(r["completion"].get<std::string>(), r[gold].get<std::string>());
    }
    start = end + 1;
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

}  // namespace

BENCHMARK_MAIN();
