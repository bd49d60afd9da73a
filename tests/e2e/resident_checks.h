// What every memory record must say about its resident set at the peak (docs/result-record.md):
// anonymous and file-backed parts in each sample and as metrics in bytes (any process has both:
// its heap and its program), shared memory where there was some, their sum within the peak.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

namespace pipette::testing_models {

inline void ExpectResidentSplitWithinPeak(const nlohmann::json& rec, const std::string& what) {
  for (const char* part : {"rss_anon_at_peak", "rss_file_at_peak"}) {
    ASSERT_TRUE(rec["metrics"].contains(part)) << what << " lacks " << part;
    EXPECT_EQ(rec["metrics"][part]["unit"], "bytes") << what;
  }
  ASSERT_FALSE(rec["samples"].empty()) << what;
  for (const nlohmann::json& s : rec["samples"]) {
    const double anon = s.at("rss_anon_at_peak").get<double>();
    const double file = s.at("rss_file_at_peak").get<double>();
    const double shmem = s.value("rss_shmem_at_peak", 0.0);  // absent: none
    EXPECT_GT(anon, 0) << what;
    EXPECT_GT(file, 0) << what;
    EXPECT_GE(shmem, 0) << what;
    EXPECT_LE(anon + file + shmem, s.at("max_host_usage").get<double>()) << what << " " << s.dump();
  }
}

}  // namespace pipette::testing_models
