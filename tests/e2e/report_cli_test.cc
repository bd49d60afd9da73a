// `pipette report` through the CLI: empty stores, bad -o paths, formats (no models needed).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_runner.h"
#include "model_fixtures.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using namespace testing_models;

TEST(ReportCli, NoStoreOrNoMatchIsOneLineAndNoFile) {
  const std::string store = WorkDir() + "/report-cli-none.db";
  const std::string out = WorkDir() + "/report-cli-none.html";
  auto r = RunPipette({"--store", store, "report", "-o", out});
  EXPECT_EQ(r.exit.code, 0) << r.err;
  EXPECT_EQ(r.out, "no results in " + store + ": nothing to report\n");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(store));  // reading never creates a store
}

TEST(ReportCli, BadOutputAndFormatAreBadInput) {
  const std::string store = WorkDir() + "/report-cli-bad.db";
  auto dir = RunPipette({"--store", store, "report", "-o", WorkDir()});
  EXPECT_EQ(dir.exit.code, 2);
  EXPECT_NE(dir.err.find("pipette: error: "), std::string::npos) << dir.err;
  auto missing = RunPipette({"--store", store, "report", "-o", WorkDir() + "/no/such/dir/r.html"});
  EXPECT_EQ(missing.exit.code, 2) << missing.err;
  auto format = RunPipette({"--store", store, "report", "--format", "pdf"});
  EXPECT_EQ(format.exit.code, 2);
  EXPECT_NE(format.err.find("pdf"), std::string::npos) << format.err;
}

}  // namespace
}  // namespace pipette
