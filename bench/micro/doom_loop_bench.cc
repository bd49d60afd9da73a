// The doom-loop detector's cost per check (it runs after every 32 generated tokens of an eval
// attempt): varied text, where every detector runs to the end, at the lengths an 8192-token
// attempt passes through, against the decode time of 32 tokens it rides on.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "pipette/doom_loop.h"

namespace {

std::string Prose(size_t bytes) {
  static const char* kWords[] = {"the",  "sum",   "of",    "both",  "roots",  "is",    "equal",
                                 "to",   "then",  "we",    "find",  "that",   "each",  "side",
                                 "gives", "a",    "factor", "which", "means", "since", "x"};
  std::string out;
  uint32_t s = 1;
  int words = 0;
  while (out.size() < bytes) {
    s = s * 1664525u + 1013904223u;
    out += kWords[(s >> 16) % (sizeof kWords / sizeof *kWords)];
    out += (++words % 13 == 0) ? ".\n" : " ";
  }
  return out;
}

void BM_DetectOnVariedText(benchmark::State& state) {
  const std::string text = Prose(static_cast<size_t>(state.range(0)));
  const pipette::DoomLoopOptions options;
  for (auto _ : state) benchmark::DoNotOptimize(pipette::DetectDoomLoop(text, options));
  state.SetLabel(std::to_string(text.size()) + " bytes");
}
BENCHMARK(BM_DetectOnVariedText)->Arg(8192)->Arg(32768)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
