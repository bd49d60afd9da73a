// End-to-end: the roofline of decode results against the measured memory bandwidth.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "model_fixtures.h"

using nlohmann::json;

namespace pipette {
namespace {

// Issue 3: after `pipette device probe`, decode results carry decode_roofline_efficiency in
// (0, 1.2]: decode can stream the weights no faster than the measured bandwidth (with margin for
// the probe's noise and caches holding a small model). It runs alone: a probe that shares the
// CPUs with other tests measures less bandwidth than the machine has, and the ratio climbs.
TEST(Roofline, DecodeEfficiencyIsBetweenZeroAndTheLimit) {
  const std::string cache = testing_models::WorkDir() + "/cache";
  setenv("PIPETTE_CACHE", cache.c_str(), 1);
  auto probe = testing_models::RunPipette({"device", "probe", "--runs", "2"});
  ASSERT_EQ(probe.exit.code, 0) << probe.err;
  std::vector<std::string> models = {testing_models::TinySynthetic()};
  if (const std::string s = testing_models::Stories260K("Q8_0"); !s.empty()) models.push_back(s);
  for (const std::string& model : models) {
    auto r = testing_models::RunPipette(
        {"--store", testing_models::WorkDir() + "/roofline.db", "--json", "run", "-q", "--model",
         model, "--benchmark", "decode_throughput_64_64", "--threads", "1", "--max-reps", "5",
         "--no-readiness-load"});
    ASSERT_EQ(r.exit.code, 0) << r.err;
    const json rec = json::parse(r.out);
    ASSERT_TRUE(rec["device"]["memory_bandwidth_bytes_per_s"].is_number()) << rec["device"].dump();
    const double eff = rec["metrics"]["decode_roofline_efficiency"]["median"].get<double>();
    EXPECT_GT(eff, 0.0) << model;
    EXPECT_LE(eff, 1.2) << model;
    // The probe's noise floor is recorded with the device (issue 27).
    ASSERT_TRUE(rec["device"]["noise_floor"].is_object()) << rec["device"].dump();
    EXPECT_GE(rec["device"]["noise_floor"]["unpinned"].get<double>(), 0.0);
  }
  // results list states it once, as this machine's.
  auto listed = testing_models::RunPipette(
      {"--store", testing_models::WorkDir() + "/roofline.db", "results", "list"});
  ASSERT_EQ(listed.exit.code, 0) << listed.err;
  EXPECT_NE(listed.out.find("this machine's timing varies by about "), std::string::npos)
      << listed.out;
  unsetenv("PIPETTE_CACHE");
}

}  // namespace
}  // namespace pipette
