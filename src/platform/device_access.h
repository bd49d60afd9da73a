// The device a cell runs on (DESIGN.md 8a), as the host holds it: where it is (a transport), the
// driver build that runs there, its facts (the fingerprint) and its live readings, all read on
// the device. For this machine every reading is a local file; for a phone or a board each one is
// the driver's probe run there through the transport (platform/probe.h), so the harness and the
// runtimes work alike on both without knowing which it is.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pipette/status.h"
#include "platform/bandwidth.h"
#include "platform/noise_floor.h"
#include "platform/device.h"
#include "platform/device_readings.h"
#include "platform/driver_builds.h"
#include "platform/proc_memory.h"
#include "platform/transport.h"

namespace pipette {

// Thread-compatible; the readings may be taken from another thread than the runtime's.
class DeviceAccess : public DeviceReadings {
 public:
  // This machine, its readings under the given roots.
  static std::shared_ptr<DeviceAccess> ThisMachine(const std::string& sys_root = "/sys",
                                                   const std::string& proc_root = "/proc");

  // Opens `address`: for "local", ThisMachine(); otherwise connects (Transport::Connect),
  // chooses the driver build for the device's architecture and CPU (`driver_path` given: that
  // host file instead), copies it there once, asks it what it is (`--build-info`: target and CPU
  // level, as recorded) and reads the device's facts with its probe. Errors: one line each, from
  // the transport, ChooseDriverBuild, or a driver that refuses the CPU ("... this CPU lacks
  // asimddp (dotprod); use the armv8-a build ...").
  static Result<std::shared_ptr<DeviceAccess>> Open(const DeviceAddress& address,
                                                    const TransportOptions& options = {},
                                                    const std::string& driver_path = "");

  const std::string& Uri() const { return uri_; }
  bool IsHost() const { return transport_->IsHost(); }
  const std::shared_ptr<Transport>& transport() const { return transport_; }

  // The driver on the device (a device path) and its build, recorded in runtime.build:
  // {"target", "cpu_level", "sha256", "static": true}. For this machine both are empty: the
  // llamacpp runtime runs the driver built beside pipette.
  const std::string& DriverPath() const { return driver_path_; }
  const nlohmann::json& DriverBuildJson() const { return driver_build_; }

  // The device's facts, read once and kept (label: as DeviceJson takes it). Errors: the probe
  // failed (the link is down).
  Result<DeviceInfo> Info();
  // The record's `device` block: DeviceJson(Info(), label) plus "uri" and "transport".
  Result<nlohmann::json> Fingerprint(const std::string& label);

  // Readings (DeviceReadings), on the device.
  std::vector<ThermalSample> Thermal() override;
  CpuSample Cpu(const std::vector<int>& own_pids) override;
  ThrottleCounts Throttle() override;
  EnergyReading Energy() override;
  // /proc/<pid>/status of a process on the device; nullopt when it is gone.
  std::optional<ProcMemory> Memory(int pid);

  // Runs the probe on the device (platform/probe.h request; reply with "ok": true). Errors: the
  // transport's, or the driver's own refusal (its one line).
  Result<nlohmann::json> Probe(const nlohmann::json& request);

  // Memory bandwidth measured on the device (platform/bandwidth.h): here by MeasureBandwidth
  // (with options' roots), on a remote device by its driver's probe, there (threads, runs and
  // total_bytes are passed; roots and pinning are the device's defaults). Takes seconds and
  // disturbs the device: never during a cell. Errors: the options do not fit the device (its one
  // line, no stage), the link (stage "device").
  Result<BandwidthResult> Bandwidth(const BandwidthOptions& options);

  // The noise floor measured on the device (platform/noise_floor.h): here by MeasureNoiseFloor, on
  // a remote device by its driver's probe (runs and run_ms are passed; the CPUs are the
  // device's). Takes seconds: never during a cell. Errors as Bandwidth's.
  Result<NoiseFloorResult> NoiseFloor(const NoiseFloorOptions& options);

  // A file already on the device (a model named `device:/PATH`): its size, its SHA-256 computed
  // there (the device's sha256sum: coreutils, busybox or Android's toybox), and a host copy of
  // its first `head_bytes` bytes (0: none), to read its header from. Nothing of the file is copied to the
  // host beyond that. Kept for this DeviceAccess's life per path, size and modification time, so
  // a suite's cells hash a file once; the host copy is kept per digest in the device cache
  // (DeviceModelHeadFolder). A remote device only. Errors, one line naming the device and the
  // path: not absolute, no such file, not a regular file, no sha256sum there, the link.
  struct File {
    std::string path;  // on the device, as given
    uint64_t size_bytes = 0;
    std::string sha256;
    std::string head_path;    // host file with the first bytes; "" when none were asked for
    uint64_t head_bytes = 0;  // how many it holds: min(head_bytes asked, size_bytes)
  };
  Result<File> DeviceFile(const std::string& device_path, uint64_t head_bytes);

 private:
  DeviceAccess() = default;

  std::string uri_;
  std::shared_ptr<Transport> transport_;
  std::string sys_root_ = "/sys", proc_root_ = "/proc";
  std::string driver_path_;
  nlohmann::json driver_build_ = nlohmann::json::object();
  std::mutex mu_;
  std::optional<DeviceInfo> info_;
  std::map<std::string, std::string> sha_by_stat_;  // "path\nsize\nmtime" -> SHA-256
};

// Where host copies of device files' first bytes are kept (DeviceAccess::DeviceFile):
// <cache>/device-models ($PIPETTE_CACHE, else $XDG_CACHE_HOME/pipette, else ~/.cache/pipette).
std::string DeviceModelHeadFolder();

}  // namespace pipette
