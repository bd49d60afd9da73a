// What an eval cell needs from the data set: the seeded subset and the attempts' seeds.
#include <algorithm>
#include <cstdlib>

#include "base/sha256.h"
#include "pipette/evals.h"

namespace pipette {

std::vector<const EvalSample*> SelectEvalSamples(const EvalDataSet& data, int limit,
                                                 uint64_t seed) {
  std::vector<const EvalSample*> all;
  for (const EvalSample& s : data.samples) all.push_back(&s);
  if (limit <= 0 || static_cast<size_t>(limit) >= all.size()) return all;
  std::vector<std::pair<std::string, size_t>> keyed;
  for (size_t i = 0; i < all.size(); ++i) {
    keyed.emplace_back(Sha256Hex(std::to_string(seed) + ":" + all[i]->id), i);
  }
  std::sort(keyed.begin(), keyed.end());
  keyed.resize(static_cast<size_t>(limit));
  std::vector<size_t> chosen;
  for (const auto& k : keyed) chosen.push_back(k.second);
  std::sort(chosen.begin(), chosen.end());
  std::vector<const EvalSample*> out;
  for (size_t i : chosen) out.push_back(all[i]);
  return out;
}

std::string EvalDataDir(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("PIPETTE_EVALS_DIR");
  return env ? env : "";
}

uint32_t AttemptSeed(uint64_t seed, std::string_view id, int attempt) {
  const std::string digest = Sha256Hex(std::to_string(seed) + ":" + std::string(id) + "#" +
                                       std::to_string(attempt));
  return static_cast<uint32_t>(std::stoul(digest.substr(0, 8), nullptr, 16));
}

}  // namespace pipette
