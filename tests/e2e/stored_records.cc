#include "stored_records.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "base/ids.h"
#include "base/sha256.h"
#include "pipette/store.h"

namespace pipette::testing_models {

using nlohmann::json;

json StoredRecord(const std::string& model_file, const std::string& quant,
                  const std::string& benchmark, const json& medians, int seconds) {
  char started[32];
  std::snprintf(started, sizeof started, "2026-11-29T10:%02d:%02d.000Z", seconds / 60 % 60,
                seconds % 60);
  json metrics = json::object(), samples = json::array();
  for (int rep = 0; rep < 3; ++rep) samples.push_back({{"rep", rep}});
  for (const auto& [name, median] : medians.items()) {
    const double m = median.get<double>();
    const char* unit = name == "max_host_usage"                             ? "bytes"
                       : name == "ttft" || name == "end_to_end_latency" ? "ms"
                                                                           : "tokens/s";
    metrics[name] = {{"unit", unit},         {"n", 3},           {"median", m},
                     {"mean", m},            {"stddev", m * 0.01}, {"cv", 0.01},
                     {"min", m * 0.99},      {"max", m * 1.01},  {"ci95_low", m * 0.99},
                     {"ci95_high", m * 1.01}};
    samples[0][name] = m * 0.99;
    samples[1][name] = m;
    samples[2][name] = m * 1.01;
  }
  return {{"schema", kResultSchema},
          {"result_id", NewUuidV7()},
          {"config_id", "config-" + model_file},
          {"status", "ok"},
          {"benchmark", {{"id", benchmark}}},
          {"model",
           {{"file_name", model_file},
            {"sha256", Sha256Hex(model_file)},
            {"quant", quant},
            {"size_bytes", 1000000}}},
          {"runtime",
           {{"name", "llamacpp"},
            {"version", "llama.cpp@abc1234"},
            {"commit", "abc1234"},
            {"settings", {{"threads", 1}}}}},
          {"device", {{"id", "dev1"}}},
          {"metrics", metrics},
          {"samples", samples},
          {"started_at", started},
          {"finished_at", started}};
}

void PutRecords(const std::string& path, const std::vector<json>& records) {
  auto store = ResultStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  for (const json& r : records) {
    const Status s = (*store)->Put(r);
    ASSERT_TRUE(s.ok()) << s.error().message;
  }
}

}  // namespace pipette::testing_models
