// What the store reads out of a `pipette.result/1` record (DESIGN.md 5): validation of the
// required fields, the indexed columns and the raw samples.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette::store {

// Checks the fields the store relies on (see ResultStore::Put). The message names the field.
Status ValidateRecord(const nlohmann::json& record);

// True for a lowercase UUID in its 8-4-4-4-12 text form.
bool IsLowercaseUuid(const std::string& s);

// The columns stored beside the JSON. REQUIRES: ValidateRecord(record).ok().
struct IndexedColumns {
  std::string result_id, config_id, status, benchmark_id, benchmark_type, model_file, model_sha256,
      quant, runtime, runtime_version, runtime_commit, device_id, label, started_at, finished_at,
      headline_metric, headline_unit;
  int64_t threads = 0;
  std::optional<double> headline;
};
IndexedColumns ExtractColumns(const nlohmann::json& record);

struct SampleValue {
  int64_t rep;
  std::string metric;
  double value;
};
// Every finite numeric field of each samples[] entry except "rep". REQUIRES: valid record.
std::vector<SampleValue> ExtractSamples(const nlohmann::json& record);

}  // namespace pipette::store
