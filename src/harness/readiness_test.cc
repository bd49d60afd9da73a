#include "harness/readiness.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "platform/cpu_load.h"
#include "platform/thermal.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A fresh folder under the test temp dir, named after the running test.
fs::path FixtureRoot(const std::string& kind) {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  const fs::path root = fs::path(testing::TempDir()) / "readiness_test" /
                        (std::string(info->test_suite_name()) + "." + info->name()) / kind;
  fs::remove_all(root);
  fs::create_directories(root);
  return root;
}

// A fake sysfs: thermal zones and throttle counters.
class FakeSys {
 public:
  FakeSys() : root_(FixtureRoot("sys")) {}
  std::string root() const { return root_.string(); }

  void Zone(int n, const std::string& type, const std::string& temp) {
    const fs::path dir = root_ / "class/thermal" / ("thermal_zone" + std::to_string(n));
    WriteFile(dir / "type", type + "\n");
    WriteFile(dir / "temp", temp + "\n");
  }
  void Throttle(int cpu, int core_count, int package_count) {
    const fs::path dir =
        root_ / "devices/system/cpu" / ("cpu" + std::to_string(cpu)) / "thermal_throttle";
    WriteFile(dir / "core_throttle_count", std::to_string(core_count) + "\n");
    WriteFile(dir / "package_throttle_count", std::to_string(package_count) + "\n");
  }

 private:
  fs::path root_;
};

// A fake procfs whose /proc/stat advances as fake time passes: Advance(seconds, busy, own) adds
// 100 ticks per second per CPU (USER_HZ), a `busy` fraction of them busy (split user/system/irq)
// and the rest idle/iowait; our own pid's utime + stime grows by an `own` fraction of them.
class FakeProc {
 public:
  static constexpr int kOwnPid = 4242;
  explicit FakeProc(int cpus = 4) : root_(FixtureRoot("proc")), cpus_(cpus) { Write(); }
  std::string root() const { return root_.string(); }

  void Advance(double seconds, double busy, double own = 0) {
    const double ticks = seconds * 100 * cpus_;
    user_ += static_cast<uint64_t>(ticks * busy * 0.6);
    system_ += static_cast<uint64_t>(ticks * busy * 0.3);
    irq_ += static_cast<uint64_t>(ticks * busy * 0.1);
    idle_ += static_cast<uint64_t>(ticks * (1 - busy) * 0.9);
    iowait_ += static_cast<uint64_t>(ticks * (1 - busy) * 0.1);
    own_utime_ += static_cast<uint64_t>(ticks * own * 0.5);
    own_stime_ += static_cast<uint64_t>(ticks * own * 0.5);
    Write();
  }

 private:
  void Write() {
    // user nice system idle iowait irq softirq steal guest guest_nice
    WriteFile(root_ / "stat", "cpu  " + std::to_string(user_) + " 0 " + std::to_string(system_) +
                                  " " + std::to_string(idle_) + " " + std::to_string(iowait_) +
                                  " " + std::to_string(irq_) + " 0 0 0 0\ncpu0 1 2 3 4\n");
    // The command name has a space and a ')' to check that parsing counts from the last ')'.
    WriteFile(root_ / std::to_string(kOwnPid) / "stat",
              std::to_string(kOwnPid) + " (llama (drv) x) S 1 2 3 0 -1 4194560 100 0 0 0 " +
                  std::to_string(own_utime_) + " " + std::to_string(own_stime_) +
                  " 0 0 20 0 5 0 123 456 789\n");
  }

  fs::path root_;
  int cpus_;
  uint64_t user_ = 1000, system_ = 500, idle_ = 100000, iowait_ = 100, irq_ = 10;
  uint64_t own_utime_ = 50, own_stime_ = 20;
};

// A clock that only moves when slept on; `on_sleep(now, slept)` runs after each sleep, so
// fixtures can change as fake time passes.
class FakeClock : public Clock {
 public:
  double NowSeconds() override { return now_; }
  void SleepSeconds(double seconds) override {
    const double slept = std::max(seconds, 0.0);
    now_ += slept;
    total_slept_ += slept;
    if (on_sleep) on_sleep(now_, slept);
  }
  std::function<void(double now, double slept)> on_sleep;
  double total_slept() const { return total_slept_; }

 private:
  double now_ = 1000;
  double total_slept_ = 0;
};

ReadinessPolicy PolicyFor(const FakeSys& sys, const FakeProc& proc) {
  ReadinessPolicy p;
  p.sys_root = sys.root();
  p.proc_root = proc.root();
  p.sample_window_s = 1.0;  // the fake /proc/stat steps below are one second apart
  return p;
}

// --- Thermal zones -------------------------------------------------------------------------------

TEST(ThermalSnapshot, ReadsMillidegreesInZoneOrderAndSkipsUnreadable) {
  FakeSys sys;
  sys.Zone(0, "acpitz", "27800");
  sys.Zone(2, "x86_pkg_temp", "-1500");
  sys.Zone(10, "nvme", "41850");
  sys.Zone(3, "iwlwifi_1", "");                  // reads as nothing: skipped
  sys.Zone(4, "pch_cannonlake", "unavailable");  // not a number: skipped
  WriteFile(fs::path(sys.root()) / "class/thermal/thermal_zone5/type", "BAT0\n");  // no temp
  WriteFile(fs::path(sys.root()) / "class/thermal/cooling_device0/type", "Processor\n");

  const std::vector<ThermalSample> zones = ReadThermalSnapshot(sys.root());
  ASSERT_EQ(zones.size(), 3u);
  EXPECT_EQ(zones[0].zone, "thermal_zone0");
  EXPECT_EQ(zones[0].type, "acpitz");
  EXPECT_DOUBLE_EQ(zones[0].celsius, 27.8);
  EXPECT_TRUE(zones[0].gates);
  EXPECT_EQ(zones[1].zone, "thermal_zone2");
  EXPECT_DOUBLE_EQ(zones[1].celsius, -1.5);
  EXPECT_TRUE(zones[1].gates);
  EXPECT_EQ(zones[2].zone, "thermal_zone10");
  EXPECT_DOUBLE_EQ(zones[2].celsius, 41.85);
  EXPECT_FALSE(zones[2].gates);
}

TEST(ThermalSnapshot, NoThermalFolderGivesNoZones) {
  FakeSys sys;
  EXPECT_TRUE(ReadThermalSnapshot(sys.root()).empty());
  EXPECT_TRUE(ReadThermalSnapshot("/nonexistent/sys").empty());
}

TEST(ThermalSnapshot, CpuAndSocTypesGate) {
  for (const char* type :
       {"x86_pkg_temp", "coretemp", "k10temp", "zenpower", "cpu-thermal", "cpu0-thermal",
        "cpu_thermal", "cpuss-0-usr", "soc_thermal", "soc-thermal", "bigcore0-thermal",
        "littlecore-thermal", "TCPU", "B0D4", "acpitz", "X86_PKG_TEMP"}) {
    EXPECT_TRUE(IsCpuThermalZoneType(type)) << type;
  }
}

TEST(ThermalSnapshot, OtherTypesAreRecordedButDoNotGate) {
  for (const char* type :
       {"nvme", "iwlwifi_1", "battery", "BAT0", "pch_cannonlake", "pch_skylake", "gpu-thermal",
        "amdgpu", "INT3400 Thermal", "TSKN", "SEN1", "sensor0", ""}) {
    EXPECT_FALSE(IsCpuThermalZoneType(type)) << type;
  }
}

TEST(ThermalSnapshot, SnapshotJson) {
  const nlohmann::json j = ThermalSnapshotJson(
      {{"thermal_zone0", "x86_pkg_temp", 55.5, true}, {"thermal_zone1", "nvme", 40, false}});
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["zone"], "thermal_zone0");
  EXPECT_EQ(j[0]["type"], "x86_pkg_temp");
  EXPECT_DOUBLE_EQ(j[0]["celsius"].get<double>(), 55.5);
  EXPECT_EQ(j[0]["gates"], true);
  EXPECT_EQ(j[1]["gates"], false);
  EXPECT_TRUE(ThermalSnapshotJson({}).is_array());
}

// --- Throttle counters ---------------------------------------------------------------------------

TEST(ThrottleCounts, SumsCoreAndPackageCounters) {
  FakeSys sys;
  EXPECT_FALSE(ReadThrottleCounts(sys.root()).available);
  sys.Throttle(0, 3, 10);
  sys.Throttle(1, 2, 10);
  // Not a cpuN folder: ignored.
  WriteFile(
      fs::path(sys.root()) / "devices/system/cpu/cpufreq/thermal_throttle/core_throttle_count",
      "1000\n");
  const ThrottleCounts c = ReadThrottleCounts(sys.root());
  EXPECT_TRUE(c.available);
  EXPECT_EQ(c.total, 25u);
}

// --- CPU load ------------------------------------------------------------------------------------

TEST(CpuLoad, OthersAreTotalBusyMinusOurOwnProcesses) {
  FakeProc proc(4);
  const CpuSample a = ReadCpuSample(proc.root(), {FakeProc::kOwnPid});
  ASSERT_TRUE(a.available);
  ASSERT_EQ(a.own_ticks.count(FakeProc::kOwnPid), 1u);
  EXPECT_EQ(a.own_ticks.at(FakeProc::kOwnPid), 70u);
  proc.Advance(1.0, /*busy=*/0.5, /*own=*/0.2);
  const CpuSample b = ReadCpuSample(proc.root(), {FakeProc::kOwnPid});
  EXPECT_NEAR(BusyFractionOfOthers(a, b), 0.3, 1e-9);
}

TEST(CpuLoad, MissingPidCountsAsNothingOfOurs) {
  FakeProc proc(2);
  const CpuSample a = ReadCpuSample(proc.root(), {FakeProc::kOwnPid, 999999});
  EXPECT_EQ(a.own_ticks.count(999999), 0u);
  proc.Advance(2.0, 0.5, 0.2);
  // Without our pid in the second reading nothing is subtracted.
  const CpuSample b = ReadCpuSample(proc.root(), {});
  EXPECT_NEAR(BusyFractionOfOthers(a, b), 0.5, 1e-9);
}

TEST(CpuLoad, UnavailableOrNoTimePassedGivesZero) {
  FakeProc proc;
  const CpuSample missing = ReadCpuSample("/nonexistent/proc", {1});
  EXPECT_FALSE(missing.available);
  const CpuSample a = ReadCpuSample(proc.root(), {});
  EXPECT_EQ(BusyFractionOfOthers(a, a), 0);
  EXPECT_EQ(BusyFractionOfOthers(missing, a), 0);
}

TEST(CpuLoad, ClampedToUnitInterval) {
  CpuSample a{true, 100, 1000, {{7, 0}}};
  CpuSample b{true, 150, 1100, {{7, 80}}};  // ours exceeds the machine's busy delta (jitter)
  EXPECT_EQ(BusyFractionOfOthers(a, b), 0);
  CpuSample c{true, 300, 1100, {}};
  EXPECT_EQ(BusyFractionOfOthers(a, c), 1);
}

TEST(CpuLoad, RealProcGivesFractionInUnitInterval) {
  if (!fs::exists("/proc/stat")) GTEST_SKIP() << "no /proc/stat on this platform";
  const std::vector<int> own = {static_cast<int>(getpid())};
  const CpuSample a = ReadCpuSample("/proc", own);
  ASSERT_TRUE(a.available);
  EXPECT_EQ(a.own_ticks.count(own[0]), 1u);
  volatile double x = 0;  // let some time pass
  for (int i = 0; i < 20000000; ++i) x = x + i * 0.5;
  const CpuSample b = ReadCpuSample("/proc", own);
  ASSERT_TRUE(b.available);
  EXPECT_GE(b.total_ticks, a.total_ticks);
  const double f = BusyFractionOfOthers(a, b);
  EXPECT_GE(f, 0.0);
  EXPECT_LE(f, 1.0);
}

// --- The gate ------------------------------------------------------------------------------------

TEST(ReadinessGate, WaitsForHotCpuZoneToCoolThenPasses) {
  FakeSys sys;
  FakeProc proc;
  sys.Zone(0, "x86_pkg_temp", "85000");
  sys.Zone(1, "nvme", "40000");
  FakeClock clock;
  clock.on_sleep = [&](double now, double slept) {
    proc.Advance(slept, 0.05);
    if (now >= 1000 + 7) sys.Zone(0, "x86_pkg_temp", "60000");  // cools after ~7 s
  };
  const auto wait = WaitUntilReady(PolicyFor(sys, proc), clock, {FakeProc::kOwnPid});
  ASSERT_TRUE(wait.ok()) << wait.error().message;
  EXPECT_TRUE(wait->ready);
  // Polls start at 0, 3, 6 (window ends 7: cooled) s.
  EXPECT_EQ(wait->polls, 3);
  EXPECT_DOUBLE_EQ(wait->waited_s, 7.0);
  EXPECT_DOUBLE_EQ(*wait->last.hottest_cpu_celsius, 60.0);
  EXPECT_EQ(wait->last.hottest_zone, "thermal_zone0");
  EXPECT_EQ(wait->last.Describe(),
            "hottest CPU zone thermal_zone0 (x86_pkg_temp) 60.0 C <= 70 C; other processes busy "
            "0.05 <= 0.30; throttle counters unavailable");
}

TEST(ReadinessGate, HotNvmeAloneDoesNotGate) {
  FakeSys sys;
  FakeProc proc;
  sys.Zone(0, "acpitz", "45000");
  sys.Zone(1, "nvme", "90000");
  FakeClock clock;
  clock.on_sleep = [&](double, double slept) { proc.Advance(slept, 0.1); };
  const auto wait = WaitUntilReady(PolicyFor(sys, proc), clock, {});
  ASSERT_TRUE(wait.ok()) << wait.error().message;
  EXPECT_EQ(wait->polls, 1);
  EXPECT_DOUBLE_EQ(*wait->last.hottest_cpu_celsius, 45.0);
  EXPECT_EQ(wait->last.hottest_type, "acpitz");
}

// Ctrl-C while the device is hot ends the wait at once, not at the deadline.
TEST(ReadinessGate, StopEndsTheWaitBeforeTheDeadline) {
  FakeSys sys;
  FakeProc proc;
  sys.Zone(0, "x86_pkg_temp", "85000");
  FakeClock clock;
  clock.on_sleep = [&](double, double slept) { proc.Advance(slept, 0.1); };
  int asked = 0;
  const double start = clock.NowSeconds();
  std::vector<int> told;  // the polls the waiting callback saw, each not ready
  const auto wait = WaitUntilReady(PolicyFor(sys, proc), clock, {}, [&] { return ++asked >= 4; },
                                   [&](const ReadinessWait& w) {
                                     EXPECT_FALSE(w.last.Ready());
                                     told.push_back(w.polls);
                                   });
  EXPECT_EQ(told, (std::vector<int>{1, 2}));
  ASSERT_FALSE(wait.ok());
  EXPECT_EQ(wait.error().message, "interrupted by the user");
  EXPECT_EQ(wait.error().stage, "readiness");
  EXPECT_LT(clock.NowSeconds() - start, 10.0);  // two polls 3 s apart, not the 300 s deadline
}

TEST(ReadinessGate, NoThermalZonesIsReadyAndRecordedUnavailable) {
  FakeSys sys;
  FakeProc proc;
  FakeClock clock;
  clock.on_sleep = [&](double, double slept) { proc.Advance(slept, 0.1); };
  const ReadinessPolicy policy = PolicyFor(sys, proc);
  const auto wait = WaitUntilReady(policy, clock, {});
  ASSERT_TRUE(wait.ok()) << wait.error().message;
  EXPECT_EQ(wait->polls, 1);
  EXPECT_DOUBLE_EQ(wait->waited_s, policy.sample_window_s);
  EXPECT_FALSE(wait->last.thermal_available);
  EXPECT_FALSE(wait->last.hottest_cpu_celsius.has_value());
  const nlohmann::json j = PolicyJson(policy, wait->last);
  EXPECT_EQ(j["thermal"], "unavailable");
  EXPECT_EQ(j["throttle"], "unavailable");
  EXPECT_EQ(j["load"], "checked");
  EXPECT_EQ(j["enabled"], true);
  EXPECT_EQ(j["max_cpu_celsius"], 70.0);
  EXPECT_EQ(j["max_busy_fraction"], 0.30);
  EXPECT_EQ(j["poll_interval_s"], 3.0);
  EXPECT_EQ(j["deadline_s"], 300.0);
  EXPECT_EQ(j["sample_window_s"], 1.0);
  EXPECT_EQ(j["cooldown_s"], 0.0);
  EXPECT_EQ(j["waived"], nlohmann::json::array());
  const nlohmann::json o = WaitJson(*wait);
  EXPECT_EQ(o["polls"], 1);
  EXPECT_TRUE(o["observation"]["hottest_cpu_celsius"].is_null());
  EXPECT_TRUE(o["observation"]["throttling"].is_null());
  EXPECT_TRUE(o["observation"]["busy_fraction"].is_number());
  EXPECT_EQ(o["observation"]["ready"], true);
}

TEST(ReadinessGate, DeadlineExceededNamesTheLastObservation) {
  FakeSys sys;
  FakeProc proc;
  sys.Zone(0, "nvme", "30000");
  sys.Zone(1, "x86_pkg_temp", "85000");
  FakeClock clock;
  clock.on_sleep = [&](double, double slept) { proc.Advance(slept, 0.0); };
  ReadinessPolicy policy = PolicyFor(sys, proc);
  policy.deadline_s = 30;
  const auto wait = WaitUntilReady(policy, clock, {});
  ASSERT_FALSE(wait.ok());
  EXPECT_EQ(wait.error().stage, "readiness");
  EXPECT_EQ(wait.error().message,
            "device not ready after 30 s (11 polls): hottest CPU zone thermal_zone1 (x86_pkg_temp) "
            "85.0 C > 70 C; other processes busy 0.00 <= 0.30; throttle counters unavailable; let "
            "it cool, or raise the readiness deadline (deadline_s), or waive the thermal "
            "criterion");
  // Polls start every 3 s from 0 to 30 s inclusive; the last one's window ends at 31 s.
  EXPECT_DOUBLE_EQ(clock.NowSeconds(), 1000 + 31);
}

TEST(ReadinessGate, BusyOthersHoldTheGateUntilIdle) {
  FakeSys sys;
  FakeProc proc(8);
  sys.Zone(0, "cpu-thermal", "50000");
  FakeClock clock;
  // Others use 60% until t = 10 s, then 10%; our driver spins on 20% throughout (not counted).
  clock.on_sleep = [&](double now, double slept) {
    proc.Advance(slept, now <= 1000 + 10 ? 0.8 : 0.3, 0.2);
  };
  const auto wait = WaitUntilReady(PolicyFor(sys, proc), clock, {FakeProc::kOwnPid});
  ASSERT_TRUE(wait.ok()) << wait.error().message;
  // Windows end at 1, 4, 7, 10 s (busy) and 13 s (idle).
  EXPECT_EQ(wait->polls, 5);
  EXPECT_DOUBLE_EQ(wait->waited_s, 13.0);
  EXPECT_NEAR(wait->last.busy_fraction, 0.1, 1e-9);
}

TEST(ReadinessGate, BusyOthersFailWithLoadAdvice) {
  FakeSys sys;
  FakeProc proc(4);
  FakeClock clock;
  clock.on_sleep = [&](double, double slept) { proc.Advance(slept, 0.75); };
  ReadinessPolicy policy = PolicyFor(sys, proc);
  policy.deadline_s = 5;
  const auto wait = WaitUntilReady(policy, clock, {});
  ASSERT_FALSE(wait.ok());
  EXPECT_EQ(wait.error().message,
            "device not ready after 5 s (2 polls): no CPU thermal zone (thermal unavailable); "
            "other processes busy 0.75 > 0.30; throttle counters unavailable; stop other work, or "
            "raise the readiness deadline (deadline_s), or waive the load criterion");
}

TEST(ReadinessGate, ThrottleCounterIncreaseBlocks) {
  FakeSys sys;
  FakeProc proc;
  sys.Zone(0, "x86_pkg_temp", "50000");
  sys.Throttle(0, 5, 7);
  FakeClock clock;
  int sleeps = 0;
  // The counters keep rising during the first two polls' windows, then stop.
  clock.on_sleep = [&](double, double slept) {
    proc.Advance(slept, 0.0);
    ++sleeps;
    if (sleeps <= 3) sys.Throttle(0, 5 + sleeps, 7);
  };
  const auto wait = WaitUntilReady(PolicyFor(sys, proc), clock, {});
  ASSERT_TRUE(wait.ok()) << wait.error().message;
  // Sleeps: window 1 (rise), gap (rise), window 2 (rise: counted by poll 2), gap, window 3.
  EXPECT_EQ(wait->polls, 3);
  EXPECT_TRUE(wait->last.throttle_available);
  EXPECT_FALSE(wait->last.throttling);
}

TEST(ReadinessGate, ThrottlingFailureAdvice) {
  FakeSys sys;
  FakeProc proc;
  sys.Throttle(0, 0, 0);
  FakeClock clock;
  int count = 0;
  clock.on_sleep = [&](double, double slept) {
    proc.Advance(slept, 0.0);
    sys.Throttle(0, ++count, 0);
  };
  ReadinessPolicy policy = PolicyFor(sys, proc);
  policy.deadline_s = 0;
  const auto wait = WaitUntilReady(policy, clock, {});
  ASSERT_FALSE(wait.ok());
  EXPECT_EQ(wait.error().message,
            "device not ready after 0 s (1 poll): no CPU thermal zone (thermal unavailable); "
            "other processes busy 0.00 <= 0.30; throttling reported; let it cool, or raise "
            "the readiness deadline (deadline_s), or waive the throttling criterion");
}

TEST(ReadinessGate, WaiversLetEveryCriterionPass) {
  FakeSys sys;
  FakeProc proc;
  sys.Zone(0, "x86_pkg_temp", "95000");
  sys.Throttle(0, 0, 0);
  FakeClock clock;
  int count = 0;
  clock.on_sleep = [&](double, double slept) {
    proc.Advance(slept, 0.9);
    sys.Throttle(0, ++count, 0);
  };
  ReadinessPolicy policy = PolicyFor(sys, proc);
  policy.waive_thermal = policy.waive_load = policy.waive_throttle = true;
  auto wait = WaitUntilReady(policy, clock, {});
  ASSERT_TRUE(wait.ok()) << wait.error().message;
  EXPECT_EQ(wait->polls, 1);
  EXPECT_DOUBLE_EQ(wait->waited_s, 0);  // nothing to measure over a window
  EXPECT_EQ(wait->last.Describe(),
            "hottest CPU zone thermal_zone0 (x86_pkg_temp) 95.0 C > 70 C (waived); CPU load "
            "unavailable (waived); no throttling (waived)");
  const nlohmann::json j = PolicyJson(policy, wait->last);
  EXPECT_EQ(j["waived"], nlohmann::json({"thermal", "load", "throttle"}));
  EXPECT_EQ(j["thermal"], "waived");
  EXPECT_EQ(j["load"], "waived");
  EXPECT_EQ(j["throttle"], "waived");
}

TEST(ReadinessGate, WaivingOneCriterionStillChecksTheOthers) {
  FakeSys sys;
  FakeProc proc;
  sys.Zone(0, "x86_pkg_temp", "95000");
  FakeClock clock;
  clock.on_sleep = [&](double now, double slept) {
    proc.Advance(slept, now <= 1000 + 4 ? 0.9 : 0.0);
  };
  ReadinessPolicy policy = PolicyFor(sys, proc);
  policy.waive_thermal = true;
  const auto wait = WaitUntilReady(policy, clock, {});
  ASSERT_TRUE(wait.ok()) << wait.error().message;
  EXPECT_EQ(wait->polls, 3);  // load held polls 1 (0-1 s) and 2 (3-4 s)
  EXPECT_TRUE(wait->last.ThermalOk());
  EXPECT_FALSE(wait->last.Describe().find("95.0 C > 70 C (waived)") == std::string::npos);
}

TEST(ReadinessGate, CoolDownSleepsOnTheClock) {
  FakeClock clock;
  ReadinessPolicy policy;
  CoolDown(policy, clock);
  EXPECT_EQ(clock.total_slept(), 0);
  policy.cooldown_s = 30;
  CoolDown(policy, clock);
  EXPECT_EQ(clock.total_slept(), 30);
}

TEST(ReadinessGate, SteadyClockAdvances) {
  SteadyClock clock;
  const double t0 = clock.NowSeconds();
  clock.SleepSeconds(0.01);
  clock.SleepSeconds(-1);
  EXPECT_GE(clock.NowSeconds() - t0, 0.01);
}

// Issue 7: the record keeps the polls that held the gate, so the reason for a wait survives.
TEST(ReadinessGate, HeldPollsAreKeptWithTheirReason) {
  FakeSys sys;
  FakeProc proc(8);
  sys.Zone(0, "cpu-thermal", "50000");
  FakeClock clock;
  clock.on_sleep = [&](double now, double slept) {
    proc.Advance(slept, now <= 1000 + 10 ? 0.85 : 0.1);
  };
  const auto wait = WaitUntilReady(PolicyFor(sys, proc), clock, {FakeProc::kOwnPid});
  ASSERT_TRUE(wait.ok()) << wait.error().message;
  // Windows end at 1, 4, 7, 10 s (busy) and 13 s (idle): polls 1 and 4 are kept.
  ASSERT_EQ(wait->held.size(), 2u);
  EXPECT_EQ(wait->held[0].poll, 1);
  EXPECT_DOUBLE_EQ(wait->held[0].at_s, 1.0);
  EXPECT_EQ(wait->held[1].poll, 4);
  EXPECT_DOUBLE_EQ(wait->held[1].at_s, 10.0);
  EXPECT_EQ(wait->held[0].observation.HeldBy(), std::vector<std::string>{"load"});
  EXPECT_EQ(wait->held[0].observation.DescribeHeld(), "other processes busy 0.85 > 0.30");
  EXPECT_EQ(wait->last.DescribeHeld(), "");

  const nlohmann::json j = WaitJson(*wait);
  ASSERT_EQ(j["held"].size(), 2u);
  EXPECT_EQ(j["held"][0]["poll"], 1);
  EXPECT_NEAR(j["held"][0]["busy_fraction"].get<double>(), 0.85, 1e-9);
  EXPECT_EQ(j["held"][0]["held_by"], nlohmann::json::array({"load"}));
  EXPECT_EQ(j["held"][0]["ready"], false);
  EXPECT_FALSE(j["observation"].contains("held_by"));  // the passing poll holds nothing

  nlohmann::json readiness = {{"policy", PolicyJson(PolicyFor(sys, proc), wait->last)},
                              {"waits", nlohmann::json::array({j})}};
  EXPECT_EQ(DescribeHolds(readiness), "other processes busy up to 0.85 > 0.30");
}

// A long wait keeps poll 1, every 10th after it and the last one: bounded, whatever its length.
TEST(ReadinessGate, HeldPollsOfALongWaitAreBounded) {
  FakeSys sys;
  FakeProc proc;
  sys.Zone(0, "x86_pkg_temp", "85000");
  FakeClock clock;
  clock.on_sleep = [&](double now, double slept) {
    proc.Advance(slept, 0.05);
    sys.Zone(0, "x86_pkg_temp", now >= 1000 + 70 ? "60000" : "85000");  // cools after ~70 s
  };
  const auto wait = WaitUntilReady(PolicyFor(sys, proc), clock, {FakeProc::kOwnPid});
  ASSERT_TRUE(wait.ok()) << wait.error().message;
  // Polls start every 3 s; the 24th (window 69..70 s) is the first cool one.
  EXPECT_EQ(wait->polls, 24);
  std::vector<int> kept;
  for (const HeldPoll& h : wait->held) kept.push_back(h.poll);
  EXPECT_EQ(kept, (std::vector<int>{1, 11, 21, 23}));
  EXPECT_EQ(wait->held.back().observation.DescribeHeld(),
            "hottest CPU zone thermal_zone0 (x86_pkg_temp) 85.0 C > 70 C");
  nlohmann::json readiness = {{"policy", PolicyJson(PolicyFor(sys, proc), wait->last)},
                              {"waits", nlohmann::json::array({WaitJson(*wait)})}};
  EXPECT_EQ(DescribeHolds(readiness), "hottest CPU zone up to 85.0 C > 70 C");
}

TEST(ReadinessGate, NoHeldPollsWhenReadyAtOnce) {
  FakeSys sys;
  FakeProc proc;
  FakeClock clock;
  clock.on_sleep = [&](double, double slept) { proc.Advance(slept, 0.0); };
  const auto wait = WaitUntilReady(PolicyFor(sys, proc), clock, {});
  ASSERT_TRUE(wait.ok()) << wait.error().message;
  EXPECT_TRUE(wait->held.empty());
  EXPECT_FALSE(WaitJson(*wait).contains("held"));
  EXPECT_EQ(DescribeHolds({{"waits", nlohmann::json::array({WaitJson(*wait)})}}), "");
  EXPECT_EQ(DescribeHolds(nlohmann::json()), "");
}

}  // namespace
}  // namespace pipette
