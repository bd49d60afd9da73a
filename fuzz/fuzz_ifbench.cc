// IFBench's checkers on any response: the first two bytes pick one of the data set's 300
// instruction lists (their real kwargs), the rest is the response, scored in both profiles. Needs
// the data set and its model data under the data folder (../shared/data or $PIPETTE_DATA_DIR:
// tests/support/test_data.h); without them every input is a no-op.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipette/evals.h"
#include "pipette/scorers.h"
#include "tests/support/test_data.h"

namespace {

struct Fixture {
  std::optional<pipette::EvalScorer> upstream, fixed;
  std::vector<std::string> golds;
};

const Fixture& Loaded() {
  static const Fixture f = [] {
    Fixture out;
    const std::string dir = pipette::testing::DataDir() + "/evals";
    auto data = pipette::LoadEvalDataSet(pipette::EvalDataset::kIfBench, dir);
    auto upstream = pipette::EvalScorer::Load(pipette::EvalDataset::kIfBench, dir);
    auto fixed = pipette::EvalScorer::Load(pipette::EvalDataset::kIfBench, dir,
                                           {.ifbench_profile = pipette::scorers::IfBenchProfile::kFixed});
    if (!data || !upstream || !fixed) return out;
    for (const auto& s : data->samples) out.golds.push_back(s.gold);
    out.upstream.emplace(std::move(*upstream));
    out.fixed.emplace(std::move(*fixed));
    return out;
  }();
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Fixture& f = Loaded();
  if (f.golds.empty() || size < 2) return 0;
  const std::string& gold = f.golds[(data[0] << 8 | data[1]) % f.golds.size()];
  const std::string_view response(reinterpret_cast<const char*>(data) + 2, size - 2);
  (void)f.upstream->Score(gold, response);
  (void)f.fixed->Score(gold, response);
  return 0;
}
