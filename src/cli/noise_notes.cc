#include "cli/noise_notes.h"

#include <fmt/format.h>

#include "analysis/noise.h"
#include "platform/device.h"
#include "platform/noise_floor.h"

namespace pipette::cli {

using nlohmann::json;

std::vector<std::string> NoiseFloorLines(std::vector<json> records, bool say_unmeasured) {
  for (json& r : records) {
    if (!r.is_object() || !r.contains("device") || !r["device"].is_object()) continue;
    json& device = r["device"];
    if (!device.contains("noise_floor") || !device["noise_floor"].is_object()) {
      AddCachedNoiseFloor(device);
    }
  }
  const json here = DeviceFingerprint("");
  auto lines = analysis::NoiseFloorNotes(records, here.value("id", ""));
  if (lines.empty() && !records.empty() && say_unmeasured) {
    lines.push_back("the noise floor of this device is not measured: `pipette device probe` "
                    "measures how much its timing varies run to run");
  }
  return lines;
}

std::vector<std::string> AdviceLines(const std::vector<std::pair<std::string, json>>& noisy) {
  std::vector<std::string> lines;
  if (noisy.empty()) return lines;
  std::vector<json> records;
  for (const auto& [name, record] : noisy) records.push_back(record);
  const analysis::GroupedAdvice advice = analysis::GroupNoiseAdvice(records);
  if (!advice.common.empty()) {
    lines.push_back((noisy.size() == 1 ? "try: " : "for all of them, try: ") +
                    analysis::JoinAdvice(advice.common));
  }
  size_t shown = 0, more = 0;
  for (size_t i = 0; i < noisy.size(); ++i) {
    if (advice.own[i].empty()) continue;
    if (++shown > 10) {
      ++more;
      continue;
    }
    const std::string benchmark =
        noisy[i].second.value("benchmark", json::object()).value("id", std::string());
    lines.push_back(noisy[i].first + " " + benchmark + ": " +
                    analysis::JoinAdvice(advice.own[i]));
  }
  if (more > 0) lines.push_back(fmt::format("(and {} more with advice of their own)", more));
  return lines;
}

void PrintNoisyBlock(const std::vector<std::pair<std::string, json>>& noisy, std::ostream& out) {
  if (noisy.empty()) return;
  std::vector<json> records;
  for (const auto& [name, record] : noisy) records.push_back(record);
  out << fmt::format("! {} {} noisy: {} 95% CI stayed wider than the harness target\n",
                     noisy.size(), noisy.size() == 1 ? "result is" : "results are",
                     noisy.size() == 1 ? "its" : "their");
  for (const std::string& line : NoiseFloorLines(records)) out << "  " << line << "\n";
  for (const std::string& line : AdviceLines(noisy)) out << "  " << line << "\n";
}

}  // namespace pipette::cli
