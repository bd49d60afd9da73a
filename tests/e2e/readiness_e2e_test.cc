// The readiness gate end to end (DESIGN.md 4.5, issue 3): `pipette run` against a fake sysfs
// root, and a real busy loop on the other core. Runs serially: other tests' load would hold the
// gate (that is its job).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_runner.h"
#include "model_fixtures.h"
#include "platform/process.h"

namespace pipette {
namespace {

using nlohmann::json;
using namespace testing_models;
namespace fs = std::filesystem;

// A sysfs root with a CPU package zone and an NVMe zone at the given temperatures (C).
std::string FakeSys(const std::string& name, int cpu_c, int nvme_c) {
  const fs::path root = fs::path(WorkDir()) / name;
  const std::pair<std::string, int> zones[] = {{"x86_pkg_temp", cpu_c}, {"nvme", nvme_c}};
  for (int i = 0; i < 2; ++i) {
    const fs::path z = root / "class/thermal" / ("thermal_zone" + std::to_string(i));
    fs::create_directories(z);
    std::ofstream(z / "type") << zones[i].first << "\n";
    std::ofstream(z / "temp") << zones[i].second * 1000 << "\n";
  }
  return root.string();
}

CliResult RunGated(const std::string& store, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--store", store, "--json", "run", "--quiet", "--model",
                                   TinySynthetic(), "--benchmark", "prefill_throughput_8",
                                   "--threads", "1", "--max-reps", "5", "--readiness-poll", "0.2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunPipette(args);
}

TEST(GateEndToEnd, HotCpuZoneFailsAtDeadlineNamingIt) {
  const std::string sys = FakeSys("hot", 85, 40);
  auto r = RunGated(WorkDir() + "/hot.db", {"--sys-root", sys, "--readiness-deadline", "1",
                                       "--no-readiness-load"});
  EXPECT_EQ(r.exit.code, 1) << r.err;
  const json rec = json::parse(r.out);
  EXPECT_EQ(rec["status"], "failed");
  EXPECT_EQ(rec["failure"]["stage"], "readiness");
  const std::string msg = rec["failure"]["message"];
  EXPECT_NE(msg.find("thermal_zone0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("85.0 C"), std::string::npos) << msg;
  // The stored message names the policy's settings; `pipette run` adds its flags.
  EXPECT_NE(msg.find("let it cool, or raise the readiness deadline (deadline_s), or waive the "
                     "thermal criterion"),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("--"), std::string::npos) << msg;
  EXPECT_NE(r.err.find("let it cool, or raise the readiness deadline (--readiness-deadline, "
                       "deadline_s), or waive the thermal criterion (--no-readiness-thermal)"),
            std::string::npos)
      << r.err;
}

TEST(GateEndToEnd, WaitsWhileHotAndPassesWhenItCools) {
  const std::string sys = FakeSys("cooling", 85, 40);
  std::thread cooler([sys] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::ofstream(fs::path(sys) / "class/thermal/thermal_zone0/temp") << "60000\n";
  });
  auto r = RunGated(WorkDir() + "/cooling.db", {"--sys-root", sys, "--readiness-deadline", "30",
                                           "--no-readiness-load"});
  cooler.join();
  ASSERT_EQ(r.exit.code, 0) << r.err;
  const json rec = json::parse(r.out);
  const json& first_wait = rec["harness"]["readiness"]["waits"][0];
  EXPECT_TRUE(first_wait.contains("observation"));
  EXPECT_GT(first_wait["polls"].get<int>(), 1);
  EXPECT_GE(first_wait["waited_s"].get<double>(), 1.0);
  // Every repetition records the zones before and after, NVMe included.
  EXPECT_EQ(rec["samples"][0]["thermal_before"].size(), 2u);
  EXPECT_EQ(rec["samples"][0]["thermal_after"][1]["type"], "nvme");
}

TEST(GateEndToEnd, HotNvmeDoesNotGate) {
  const std::string sys = FakeSys("nvme", 50, 90);
  auto r = RunGated(WorkDir() + "/nvme.db", {"--sys-root", sys, "--readiness-deadline", "1",
                                        "--no-readiness-load"});
  ASSERT_EQ(r.exit.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["harness"]["readiness"]["waits"][0]["polls"], 1);
}

TEST(GateEndToEnd, NoThermalZonesIsRecordedAsUnavailable) {
  const fs::path empty = fs::path(WorkDir()) / "nozones";
  fs::create_directories(empty);
  auto r = RunGated(WorkDir() + "/nozones.db", {"--sys-root", empty.string(), "--no-readiness-load"});
  ASSERT_EQ(r.exit.code, 0) << r.err;
  const json policy = json::parse(r.out)["harness"]["readiness"]["policy"];
  EXPECT_EQ(policy["thermal"], "unavailable") << policy.dump();
}

TEST(GateEndToEnd, BusyLoopOnTheOtherCoreHoldsTheGateUntilItStops) {
  auto busy = ChildProcess::Start({"/bin/sh", "-c", "while :; do :; done"}, "");
  ASSERT_TRUE(busy.ok());
  const int busy_pid = busy->Pid();
  std::thread stopper([busy_pid] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    kill(busy_pid, SIGKILL);
  });
  auto r = RunGated(WorkDir() + "/busy.db", {"--readiness-deadline", "60"});
  stopper.join();
  busy->Wait();
  ASSERT_EQ(r.exit.code, 0) << r.err;
  const json wait = json::parse(r.out)["harness"]["readiness"]["waits"][0];
  EXPECT_GE(wait["waited_s"].get<double>(), 1.5) << wait.dump();
}

TEST(GateEndToEnd, BusyLoopPastTheDeadlineFailsNamingTheLoad) {
  auto busy = ChildProcess::Start({"/bin/sh", "-c", "while :; do :; done"}, "");
  ASSERT_TRUE(busy.ok());
  auto r = RunGated(WorkDir() + "/busy2.db", {"--readiness-deadline", "1"});
  busy->Kill(SIGKILL);
  busy->Wait();
  EXPECT_EQ(r.exit.code, 1) << r.err;
  const json rec = json::parse(r.out);
  EXPECT_EQ(rec["failure"]["stage"], "readiness");
  EXPECT_NE(rec["failure"]["message"].get<std::string>().find("busy"), std::string::npos);
}

}  // namespace
}  // namespace pipette
