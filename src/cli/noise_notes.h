// What the commands that list results say once about noise under their table (issue 27): the
// noise floor of the devices the results ran on, and the advice the noisy ones share, instead of
// the same remedies on every row. `results list`, `compare` and `suite run` print them alike.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipette::cli {

// analysis::NoiseFloorNotes for the records (any number; one per device is enough), each
// record's device.noise_floor taken from this host's cache (`pipette device probe`) where the
// record has none (it was measured before the probe). When none of their devices has a noise
// floor and `say_unmeasured`: one line saying that `pipette device probe` measures it. Never
// fails.
std::vector<std::string> NoiseFloorLines(std::vector<nlohmann::json> records,
                                         bool say_unmeasured = true);

// The advice of noisy records, each given as (what names it, its record), said once
// (analysis::GroupNoiseAdvice): "for all of them, try: ..." ("try: ..." for one), then
// "<name> <benchmark>: <advice of its own>" for those that have some, at most 10, then
// "(and K more with advice of their own)". Empty when `noisy` is.
std::vector<std::string> AdviceLines(
    const std::vector<std::pair<std::string, nlohmann::json>>& noisy);

// The block under a table of results for its noisy ones, each given as (what names it in the
// table, its record), newest first:
//   ! N results are noisy: their 95% CI stayed wider than the harness target
//   <NoiseFloorLines>
//   <AdviceLines>
// Nothing when `noisy` is empty.
void PrintNoisyBlock(const std::vector<std::pair<std::string, nlohmann::json>>& noisy,
                     std::ostream& out);

}  // namespace pipette::cli
