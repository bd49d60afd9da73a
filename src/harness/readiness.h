// Readiness gate (DESIGN.md 4.5): before each measured repetition, wait until the device is cool,
// quiet and not throttling, so that repetitions measure the configuration rather than the state
// the previous work left the machine in.
//
// Criteria, each of which can be waived:
//   thermal   the hottest CPU-related thermal zone (platform/thermal.h) is <= max_cpu_celsius;
//             zones that are not CPU/SoC (NVMe, Wi-Fi, battery, ...) are recorded, never gate.
//   load      processes other than ours kept the CPUs busy for <= max_busy_fraction of all
//             CPUs' time over sample_window_s (/proc/stat deltas, platform/cpu_load.h).
//   throttle  the kernel's thermal throttle counters did not increase since the previous poll.
// A criterion the platform cannot measure (no CPU thermal zone in a VM or container, no throttle
// counters outside x86, no /proc/stat) is "unavailable": it passes and is recorded as such.
//
// Time comes from an injected Clock, so tests run the waits on a fake clock without sleeping.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/readiness_policy.h"
#include "pipette/status.h"
#include "platform/device_readings.h"
#include "platform/thermal.h"

namespace pipette {

// Monotonic time and sleeping, injected (after absl's Clock). Not required to be thread-safe:
// WaitUntilReady uses it from the calling thread only.
class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since an arbitrary fixed origin; never decreases.
  virtual double NowSeconds() = 0;
  // Blocks for `seconds`; a value <= 0 returns at once.
  virtual void SleepSeconds(double seconds) = 0;
};

// The real clock: std::chrono::steady_clock and std::this_thread::sleep_for. Thread-safe.
class SteadyClock : public Clock {
 public:
  double NowSeconds() override;
  void SleepSeconds(double seconds) override;
};

// The policy (ReadinessPolicy) is in pipette/readiness_policy.h.

// What one poll saw, with the thresholds and waivers it was judged against.
struct ReadinessObservation {
  bool thermal_available = false;             // at least one CPU-related zone was read
  std::optional<double> hottest_cpu_celsius;  // °C; absent when !thermal_available
  std::string hottest_zone;                   // e.g. "thermal_zone0"
  std::string hottest_type;                   // e.g. "x86_pkg_temp"
  bool load_available = false;  // /proc/stat read before and after a window in which time passed
  double busy_fraction = 0;     // others' share of all CPUs' time, 0..1
  bool throttle_available = false;  // throttle counters exist
  bool throttling = false;          // a counter increased since the previous poll
  // Copied from the policy, so that the observation explains itself.
  double max_cpu_celsius = 70;
  double max_busy_fraction = 0.30;
  bool waive_thermal = false;
  bool waive_load = false;
  bool waive_throttle = false;

  bool ThermalOk() const;   // waived, unavailable, or at or below the threshold
  bool LoadOk() const;      // waived, unavailable, or at or below the threshold
  bool ThrottleOk() const;  // waived, unavailable, or no increase
  bool Ready() const { return ThermalOk() && LoadOk() && ThrottleOk(); }

  // One line, e.g. "hottest CPU zone thermal_zone0 (x86_pkg_temp) 85.0 C > 70 C; other processes
  // busy 0.12 <= 0.30; no throttling". Waived criteria end in " (waived)".
  std::string Describe() const;
  // The criteria that hold the gate, named "thermal", "load", "throttle" in that order; empty
  // when Ready().
  std::vector<std::string> HeldBy() const;
  // Only what holds the gate, e.g. "other processes busy 0.85 > 0.30"; several joined by "; ";
  // "" when Ready().
  std::string DescribeHeld() const;
};

// A poll that was not ready, kept in ReadinessWait::held.
struct HeldPoll {
  double at_s = 0;  // seconds from the start of the wait to the end of this poll, on the Clock
  int poll = 0;     // 1-based poll number within the wait
  ReadinessObservation observation;
};

// Outcome of WaitUntilReady.
struct ReadinessWait {
  bool ready = false;         // always true in a returned value: a timeout is an Error
  double waited_s = 0;        // seconds from the call to the end of the passing poll, on the Clock
  int polls = 0;              // polls taken, >= 1
  ReadinessObservation last;  // the passing poll
  // The polls that held the gate, bounded: the first, every kHeldPollEvery-th after it (polls 1,
  // 11, 21, ...) and the last one before the passing poll; at most
  // deadline_s / poll_interval_s / kHeldPollEvery + 2 entries (12 at the defaults). Empty when
  // the first poll was ready.
  std::vector<HeldPoll> held;
};

// Of the polls that held the gate, every kHeldPollEvery-th is kept (besides the first and last).
inline constexpr int kHeldPollEvery = 10;

// One poll: reads our and the machine's CPU time, sleeps sample_window_s on `clock` (skipped when
// load and throttle are both waived), reads them again, then the throttle counters and the
// thermal zones. `previous_throttle` (in/out) holds the counters of the previous poll; before the
// first poll pass a fresh ReadThrottleCounts(policy.sys_root).
ReadinessObservation ObserveReadiness(const ReadinessPolicy& policy, Clock& clock,
                                      const std::vector<int>& own_pids,
                                      ThrottleCounts* previous_throttle);
// The same with the readings of any device (a phone's, through its driver's probe); the policy's
// roots are then unused. `own_pids` are process ids on that device.
ReadinessObservation ObserveReadiness(const ReadinessPolicy& policy, Clock& clock,
                                      const std::vector<int>& own_pids,
                                      ThrottleCounts* previous_throttle, DeviceReadings& readings);

// Polls until a poll is Ready() and returns it; each poll after the first starts poll_interval_s
// after the previous one. `own_pids` are the processes whose CPU time is not "other" load: pass
// pipette's own pid and the runtime driver's. Returns after one poll when the device is ready
// (or everything is waived). Error (stage "readiness") when no poll starting within deadline_s of
// the call is ready; the message names the last observation and what helps, e.g. "device not
// ready after 300 s (101 polls): hottest CPU zone thermal_zone0 (x86_pkg_temp) 85.0 C > 70 C;
// other processes busy 0.02 <= 0.30; no throttling; let it cool, or raise the readiness deadline
// (deadline_s), or waive the thermal criterion" (the policy's names; the CLI adds its flags).
// `stop`, when given, is asked between polls: true ends the wait at once with Error "interrupted
// by the user" (stage "readiness"), e.g. after Ctrl-C.
// `waiting`, when given, sees every poll that was not ready (polls and waited_s so far, and the
// observation), so that a user can be told what the wait is for.
Result<ReadinessWait> WaitUntilReady(const ReadinessPolicy& policy, Clock& clock,
                                     const std::vector<int>& own_pids,
                                     const std::function<bool()>& stop = {},
                                     const std::function<void(const ReadinessWait&)>& waiting = {});
// The same on any device's readings (the policy's roots unused).
Result<ReadinessWait> WaitUntilReady(const ReadinessPolicy& policy, Clock& clock,
                                     const std::vector<int>& own_pids, DeviceReadings& readings,
                                     const std::function<bool()>& stop = {},
                                     const std::function<void(const ReadinessWait&)>& waiting = {});

// Sleeps policy.cooldown_s on `clock` (between cells). Does nothing when it is <= 0.
void CoolDown(const ReadinessPolicy& policy, Clock& clock);

// result.harness.readiness: {"enabled": true, "max_cpu_celsius", "max_busy_fraction",
// "poll_interval_s", "deadline_s", "sample_window_s", "cooldown_s", "waived": [names], "thermal",
// "load", "throttle"}, each criterion "checked", "waived" or "unavailable" as seen in `first` (the
// cell's first observation). A host without CPU thermal zones records "thermal": "unavailable",
// which is not a failure.
nlohmann::json PolicyJson(const ReadinessPolicy& policy, const ReadinessObservation& first);

// {"hottest_cpu_celsius", "hottest_zone", "hottest_type", "busy_fraction", "throttling",
// "ready"}, and "held_by": [criteria] (HeldBy) when not ready; an unavailable criterion's value is
// null.
nlohmann::json ObservationJson(const ReadinessObservation& observation);

// {"waited_s", "polls", "observation": ObservationJson(last)}: one per gated repetition; with
// "held": [{"at_s", "poll", ...ObservationJson}] (wait.held) when a poll held the gate.
nlohmann::json WaitJson(const ReadinessWait& wait);

// What held the gate over all waits of a harness.readiness block ({"policy", "waits"} as the
// harness records it), each criterion at its worst, e.g. "other processes busy up to 0.85 >
// 0.30; hottest CPU zone up to 85.0 C > 70 C; throttling reported". "" when no poll held it (or
// the block is absent or from a version that kept no held polls).
std::string DescribeHolds(const nlohmann::json& readiness);

// [{"zone", "type", "celsius", "gates"}] for samples[].thermal_before / thermal_after.
nlohmann::json ThermalSnapshotJson(const std::vector<ThermalSample>& zones);

}  // namespace pipette
