// A completions file (`pipette score --completions FILE`): each line through ParseCompletionLine,
// and what parses scored as MATH-500 and GPQA Diamond completions are.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pipette/evals.h"
#include "pipette/scorers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // MATH-500's and GPQA's scorers need no data files.
  static const auto math = pipette::EvalScorer::Load(pipette::EvalDataset::kMath500, "");
  static const auto gpqa = pipette::EvalScorer::Load(pipette::EvalDataset::kGpqaDiamond, "",
                                                     {.upstream_compat = true});
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    pipette::Result<pipette::CompletionLine> r = pipette::ParseCompletionLine(line);
    if (!r.ok()) continue;
    (void)math->Score("\\frac{1}{2}", r->completion);
    (void)gpqa->Score("C", r->completion);
  }
  return 0;
}
