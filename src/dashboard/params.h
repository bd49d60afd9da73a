// Query parameters of the dashboard pages: the result filters (the same names as
// `GET /api/results`: benchmark, model, quant, runtime, device, label, status, since) and the
// paging and sorting parameters, read and checked once, and written back into links so that
// every link keeps the current filters.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dashboard/html.h"
#include "pipette/status.h"
#include "pipette/store.h"

namespace pipette::dashboard {

using Query = std::multimap<std::string, std::string>;

// The first value of `key`, trimmed; "" when absent.
std::string Param(const Query& query, const std::string& key);

// Every value of `key`, each split at commas and trimmed, empty ones dropped (a form field may
// hold "Q8_0, Q4_0"; a link may repeat the key).
std::vector<std::string> ParamList(const Query& query, const std::string& key);

// `key` as a whole number in [lo, hi]; `fallback` when absent or empty. Error (the message for a
// kBadRequest): "limit must be a whole number from 1 to 1000 (got '-1')".
Result<int> IntParam(const Query& query, const std::string& key, int fallback, int lo, int hi);

// One of `allowed`; `fallback` when absent or empty. Error: "sort must be one of a, b, c (got
// 'zzz')".
Result<std::string> ChoiceParam(const Query& query, const std::string& key,
                                const std::vector<std::string>& allowed,
                                const std::string& fallback);

struct Filters {
  std::vector<std::string> benchmarks, models, quants, runtimes, devices, labels;
  std::string status, since;

  ResultFilter ToResultFilter() const;
  // As query parameters (lists joined by ", "), in a fixed order, empty ones left out.
  Params ToParams() const;
  bool empty() const;
};

// Reads the filter parameters. Errors (for a kBadRequest): a status other than ok or failed, a
// since that ParseSince refuses; each names the parameter.
Result<Filters> ParseFilters(const Query& query);

// The filter form: one text field per filter, prefilled with the current values, and `hidden`
// (e.g. sort and order) kept as hidden fields; submits a GET to `action`.
std::string FilterForm(const std::string& action, const Filters& filters, const Params& hidden,
                       const std::vector<std::string>& fields);

}  // namespace pipette::dashboard
