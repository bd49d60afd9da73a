// FindResult (pipette/fleet_store.h): a result by its id or by the short id a listing shows.
#include <algorithm>

#include "pipette/fleet_store.h"

namespace pipette {

Result<FoundResult> FindResult(FleetStore& store, const std::string& id) {
  Result<std::optional<nlohmann::json>> record = store.GetResult(id);
  if (!record.ok()) return record.error();
  FoundResult found{std::move(*record)};
  static constexpr size_t kShortest = 8;
  const bool prefix_like =
      id.size() >= kShortest && id.size() < 36 && std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
      });
  if (found.record || !prefix_like) return found;
  Result<std::vector<std::string>> ids = store.ResultIdsStartingWith(id, 2);
  if (!ids.ok()) return ids.error();
  if (ids->size() > 1) {
    found.ambiguous = true;
  } else if (ids->size() == 1) {
    Result<std::optional<nlohmann::json>> one = store.GetResult(ids->front());
    if (!one.ok()) return one.error();
    found.record = std::move(*one);
  }
  return found;
}

}  // namespace pipette
