// The Pareto front of points with possibly unmeasured (NaN) objectives.
#include <algorithm>
#include <cmath>

#include "analysis/select_parts.h"

namespace pipette {

namespace analysis {

bool Dominates(const std::vector<double>& a, const std::vector<double>& b) {
  bool strictly = false;
  const size_t n = std::min(a.size(), b.size());
  for (size_t k = 0; k < n; ++k) {
    if (std::isnan(b[k])) continue;  // b unmeasured there: nothing for a to beat
    if (std::isnan(a[k])) return false;  // a cannot be shown at least as good as b there
    if (a[k] < b[k]) return false;
    if (a[k] > b[k]) strictly = true;
  }
  return strictly;
}

}  // namespace analysis

std::vector<size_t> ParetoFront(const std::vector<std::vector<double>>& points) {
  std::vector<size_t> front;
  for (size_t i = 0; i < points.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < points.size() && !dominated; ++j) {
      dominated = j != i && analysis::Dominates(points[j], points[i]);
    }
    if (!dominated) front.push_back(i);
  }
  return front;
}

}  // namespace pipette
