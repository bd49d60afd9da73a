// Live readings of the device a cell runs on (DESIGN.md 4.5, 8a): its thermal zones, CPU time
// and throttle counters, read where the device is. The readiness gate and the per-repetition
// thermal snapshots take them through this interface, so they work the same on this machine
// (HostReadings: files under sysfs/procfs roots) and on a phone or a board (the probe of
// pipette-llamacpp-driver run there, platform/device_access.h).
#pragma once

#include <string>
#include <vector>

#include "platform/cpu_load.h"
#include "platform/energy.h"
#include "platform/thermal.h"

namespace pipette {

// Readings never fail: what cannot be read is absent or `available == false`, as each reader
// of platform/thermal.h and platform/cpu_load.h says (a device that stopped answering reads as
// one without sensors; the runtime's own calls report the lost link).
class DeviceReadings {
 public:
  virtual ~DeviceReadings() = default;
  virtual std::vector<ThermalSample> Thermal() = 0;
  // CPU time of the device, and of `own_pids` (process ids on the device).
  virtual CpuSample Cpu(const std::vector<int>& own_pids) = 0;
  virtual ThrottleCounts Throttle() = 0;
  // Energy counters and battery draw (platform/energy.h); empty where the device has neither.
  virtual EnergyReading Energy() = 0;
};

// This machine's files under the given roots (tests point them at fixture folders). Thread-safe.
class HostReadings : public DeviceReadings {
 public:
  HostReadings(std::string sys_root = "/sys", std::string proc_root = "/proc")
      : sys_root_(std::move(sys_root)), proc_root_(std::move(proc_root)) {}
  std::vector<ThermalSample> Thermal() override { return ReadThermalSnapshot(sys_root_); }
  CpuSample Cpu(const std::vector<int>& own_pids) override {
    return ReadCpuSample(proc_root_, own_pids);
  }
  ThrottleCounts Throttle() override { return ReadThrottleCounts(sys_root_); }
  EnergyReading Energy() override { return ReadEnergy(sys_root_); }

 private:
  std::string sys_root_;
  std::string proc_root_;
};

}  // namespace pipette
