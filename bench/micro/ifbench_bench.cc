// IFBench scorer throughput on one core over the shared verdict corpus: the 192 responses of
// ../shared/data/evals/scoring/ifbench_verdicts.jsonl.gz with the gold of their test item
// (../shared/data/evals/ifbench/IFBench_test.jsonl), strict and loose, every instruction
// (target >= 2,000 responses/s). The model data is read once from ../shared/data/evals/ifbench/nlp
// (not timed). Reported as the counter `responses/s` (a rate, 1000-based).
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pipette/scorers.h"
#include "tests/support/scoring_corpus.h"

namespace {

using pipette::scorers::IfBenchProfile;
using pipette::scorers::IfBenchScorer;

std::string IfBenchDir() { return pipette::testing::DataDir() + "/evals/ifbench"; }

bool ReadFile(const std::string& path, bool gzip, std::string* out) {
  out->clear();
  if (!gzip) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream s;
    s << in.rdbuf();
    *out = s.str();
    return true;
  }
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) return false;
  char buf[65536];
  int n = 0;
  while ((n = gzread(in, buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  gzclose(in);
  return n == 0;
}

const IfBenchScorer* Scorer() {
  static const std::optional<IfBenchScorer> scorer = []() -> std::optional<IfBenchScorer> {
    std::unordered_map<std::string, std::string> files;
    for (const auto& f : pipette::scorers::IfBenchDataFiles()) {
      if (!ReadFile(IfBenchDir() + "/nlp/" + f.path, f.gzip, &files[f.path])) return std::nullopt;
    }
    auto s = IfBenchScorer::FromFiles(files);
    if (!s.ok()) return std::nullopt;
    return std::move(s).value();
  }();
  return scorer ? &*scorer : nullptr;
}

// (gold, response) for each corpus record; empty when the corpus or the test set is absent.
std::vector<std::pair<std::string, std::string>> Corpus() {
  std::vector<std::pair<std::string, std::string>> corpus;
  std::string test;
  if (!ReadFile(IfBenchDir() + "/IFBench_test.jsonl", false, &test)) return corpus;
  std::map<std::string, std::string> gold_by_key;
  std::istringstream lines(test);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const auto item = nlohmann::json::parse(line);
    gold_by_key[item["key"].get<std::string>()] =
        nlohmann::json{{"instruction_id_list", item["instruction_id_list"]},
                       {"kwargs", item["kwargs"]}}
            .dump();
  }
  for (const auto& r : pipette::testing::ReadScoringCorpus("ifbench_verdicts.jsonl.gz")) {
    corpus.emplace_back(gold_by_key[r["key"].get<std::string>()],
                        r["response"].get<std::string>());
  }
  return corpus;
}

void Run(benchmark::State& state, IfBenchProfile profile) {
  const IfBenchScorer* scorer = Scorer();
  const auto corpus = Corpus();
  if (scorer == nullptr || corpus.empty()) {
    state.SkipWithError("no IFBench data under ../shared/data/evals (ifbench/, scoring/)");
    return;
  }
  size_t passed = 0;
  for (auto _ : state) {
    for (const auto& [gold, response] : corpus) {
      const auto v = scorer->Score(gold, response, profile);
      passed += v.ok() && v->prompt_loose ? 1 : 0;
    }
  }
  benchmark::DoNotOptimize(passed);
  state.counters["responses/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * corpus.size()), benchmark::Counter::kIsRate);
}

void BM_IfBenchScore(benchmark::State& state) { Run(state, IfBenchProfile::kUpstream); }
BENCHMARK(BM_IfBenchScore)->Unit(benchmark::kMillisecond);

void BM_IfBenchScoreFixed(benchmark::State& state) { Run(state, IfBenchProfile::kFixed); }
BENCHMARK(BM_IfBenchScoreFixed)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
