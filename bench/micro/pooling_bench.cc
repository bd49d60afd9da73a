// How long the reading commands spend pooling repeated results (PoolResults, issue 7): one
// end-to-end estimate from K results of R repetitions with D per-token latencies each, the
// shape of end_to_end_latency_256_256 at the harness's default maximum of 20 repetitions.
//   build/bench/micro/pooling_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "pipette/analysis.h"
#include "pipette/stats.h"

namespace {

using nlohmann::json;

json E2eRecord(int reps, int tokens, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> latency(260, 5), itl(0.6, 0.05);
  json samples = json::array();
  std::vector<double> e2e, all_itl;
  for (int r = 0; r < reps; ++r) {
    json per_token = json::array();
    for (int t = 0; t < tokens; ++t) {
      const double v = itl(rng);
      per_token.push_back(v);
      all_itl.push_back(v);
    }
    const double l = latency(rng);
    e2e.push_back(l);
    samples.push_back({{"rep", r + 1}, {"end_to_end_latency", l}, {"inter_token_latency", per_token}});
  }
  return {{"result_id", std::string("r").append(std::to_string(seed))},
          {"config_id", "c"},
          {"status", "ok"},
          {"started_at", std::string("2026-12-01T00:00:0").append(std::to_string(seed % 10)).append("Z")},
          {"benchmark", {{"id", "end_to_end_latency_256_256"}, {"type", "e2e"}}},
          {"harness", {{"ci_target", 0.02}}},
          {"metrics",
           {{"end_to_end_latency", pipette::ToJson(pipette::Summarize(e2e), "ms")},
            {"inter_token_latency", pipette::ToJson(pipette::Summarize(all_itl, true), "ms")}}},
          {"samples", samples}};
}

void BM_PoolE2eResults(benchmark::State& state) {
  const int results = static_cast<int>(state.range(0));
  std::vector<json> records;
  for (int i = 0; i < results; ++i) records.push_back(E2eRecord(20, 256, i + 1));
  std::vector<const json*> pointers;
  for (const json& r : records) pointers.push_back(&r);
  for (auto _ : state) benchmark::DoNotOptimize(pipette::PoolResults(pointers));
  state.counters["repetitions"] = 20.0 * results;
}
BENCHMARK(BM_PoolE2eResults)->Arg(1)->Arg(2)->Arg(5)->Unit(benchmark::kMillisecond);

// Grouping the same records with --newest (nothing pooled) and pooled: the difference is what
// pooling costs a reading command.
void BM_Group(benchmark::State& state, pipette::Repeats repeats) {
  const int results = static_cast<int>(state.range(0));
  std::vector<json> records;
  for (int i = 0; i < results; ++i) records.push_back(E2eRecord(20, 256, i + 1));
  for (auto _ : state) benchmark::DoNotOptimize(pipette::GroupConfigurations(records, repeats));
}
BENCHMARK_CAPTURE(BM_Group, newest, pipette::Repeats::kNewest)
    ->Arg(2)
    ->Arg(5)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Group, pooled, pipette::Repeats::kPool)
    ->Arg(2)
    ->Arg(5)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
