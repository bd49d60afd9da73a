#include "dashboard/family.h"

#include <algorithm>
#include <set>

#include "pipette/benchmark.h"

namespace pipette::dashboard {

Result<std::vector<std::string>> FamilyIds(FleetStore& store, const Filters& filters,
                                           const std::function<bool(const std::string&)>& in_family,
                                           const std::vector<std::string>& seeds,
                                           std::vector<std::string>* probed) {
  std::set<std::string> ids;
  if (!filters.benchmarks.empty()) {
    for (const std::string& b : filters.benchmarks) {
      if (in_family(b)) ids.insert(b);
    }
    return std::vector<std::string>(ids.begin(), ids.end());
  }
  for (const std::string& s : seeds) {
    if (in_family(s)) ids.insert(s);
  }
  std::vector<std::string> seen;
  if (probed != nullptr && !probed->empty()) {
    seen = *probed;
  } else {
    auto recent = store.RecentBenchmarkIds(filters.ToResultFilter(), kProbeRows);
    if (!recent.ok()) return recent.error();
    seen = std::move(*recent);
    if (probed != nullptr) *probed = seen;
  }
  for (const std::string& id : seen) {
    if (in_family(id)) ids.insert(id);
  }
  return std::vector<std::string>(ids.begin(), ids.end());
}

Result<std::vector<FleetResultRow>> FamilyRows(FleetStore& store, const Filters& filters,
                                               const std::vector<std::string>& benchmark_ids,
                                               int max_rows, int64_t* total) {
  std::vector<FleetResultRow> rows;
  if (total) *total = 0;
  if (benchmark_ids.empty()) return rows;
  ResultFilter f = filters.ToResultFilter();
  f.benchmarks = benchmark_ids;
  std::string cursor;
  do {
    auto page =
        store.ListResults(f, std::min(1000, max_rows - static_cast<int>(rows.size())), cursor,
                          ListOptions{.short_ids = false});
    if (!page.ok()) return page.error();
    if (total) *total = page->total;
    for (FleetResultRow& r : page->rows) rows.push_back(std::move(r));
    cursor = page->next;
  } while (!cursor.empty() && static_cast<int>(rows.size()) < max_rows);
  return rows;
}

std::vector<std::string> CatalogIds(const std::string& type) {
  std::vector<std::string> out;
  const BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  for (const BenchmarkSpec& spec : catalog.List()) {
    if (TypeName(spec.type) == type) out.push_back(spec.id);
  }
  return out;
}

}  // namespace pipette::dashboard
