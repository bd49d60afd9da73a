// The readiness gate's policy (DESIGN.md 4.5); the gate itself is in the harness. Recorded in
// harness.readiness.policy with every result.
#pragma once

#include <string>

namespace pipette {

struct ReadinessPolicy {
  // Ready when the hottest CPU-related zone is at or below this, in °C. Lower waits longer on hot
  // or fanless devices; higher lets thermal throttling leak into measurements.
  double max_cpu_celsius = 70;
  // Ready when other processes use at most this fraction (0..1) of all CPUs' time.
  double max_busy_fraction = 0.30;
  // Seconds between the starts of two polls (a poll includes its sample window).
  double poll_interval_s = 3;
  // Seconds after which a device that is still not ready fails the cell (stage "readiness").
  double deadline_s = 300;
  // Seconds over which one poll measures the busy fraction. Shorter reacts faster, is noisier.
  double sample_window_s = 0.25;
  // Waived criteria are still observed and recorded, but never hold the gate.
  bool waive_thermal = false;
  bool waive_load = false;
  bool waive_throttle = false;
  // Seconds to sleep between cells (CoolDown); 0: none.
  double cooldown_s = 0;
  // Roots of sysfs and procfs; tests point them at fixture folders.
  std::string sys_root = "/sys";
  std::string proc_root = "/proc";
};

}  // namespace pipette
