// The scorers on any completion text and gold answer: MATH-500's (LaTeX extraction, then the
// symbolic comparison through GiNaC), upstream's rule chain, GPQA Diamond's letter choice, and the
// thinking-tag stripping in front of them. The first byte picks the scorer; the gold answer is
// the text up to the first NUL, the completion the rest.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pipette/scorers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view all(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t nul = all.find('\0');
  const std::string_view gold = nul == std::string_view::npos ? std::string_view("1/2") : all.substr(0, nul);
  const std::string_view completion = nul == std::string_view::npos ? all : all.substr(nul + 1);
  namespace s = pipette::scorers;
  switch (data[0] % 5) {
    case 0:
      (void)s::ScoreMath(completion, gold);
      break;
    case 1:
      (void)s::ScoreMathUpstream(completion, gold);
      break;
    case 2:
      (void)s::ScoreGpqa(completion, gold.empty() ? 'A' : gold[0]);
      break;
    case 3:
      (void)s::ScoreGpqaUpstream(completion, gold.empty() ? 'A' : gold[0]);
      break;
    default:
      (void)s::StripThinking(completion);
      break;
  }
  return 0;
}
