#include "platform/device_access.h"

#include <sstream>

#include "base/sha256.h"
#include "platform/probe.h"
#include "platform/transport_impl.h"

namespace pipette {
namespace {

using nlohmann::json;

// The flags (x86) or Features (ARM) words of a /proc/cpuinfo text.
std::string CpuWords(const std::string& cpuinfo) {
  std::istringstream in(cpuinfo);
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    if (key == "flags" || key == "Features") return line.substr(colon + 1);
  }
  return "";
}

}  // namespace

std::shared_ptr<DeviceAccess> DeviceAccess::ThisMachine(const std::string& sys_root,
                                                        const std::string& proc_root) {
  std::shared_ptr<DeviceAccess> d(new DeviceAccess());
  d->uri_ = "local";
  d->transport_ = MakeLocalTransport(DeviceAddress{}, TransportOptions{});
  d->sys_root_ = sys_root;
  d->proc_root_ = proc_root;
  return d;
}

Result<std::shared_ptr<DeviceAccess>> DeviceAccess::Open(const DeviceAddress& address,
                                                         const TransportOptions& options,
                                                         const std::string& driver_path) {
  if (address.kind == TransportKind::kLocal) return ThisMachine();
  auto transport = OpenTransport(address, options);
  if (!transport) return transport.error();
  auto machine = (*transport)->Connect();
  if (!machine) return machine.error();
  std::shared_ptr<DeviceAccess> d(new DeviceAccess());
  d->uri_ = address.Uri();
  d->transport_ = *transport;
  DriverBuild build;
  if (!driver_path.empty()) {
    build.path = driver_path;
  } else {
    auto cpuinfo = d->transport_->Run({"cat", "/proc/cpuinfo"});
    if (!cpuinfo) return cpuinfo.error();
    auto chosen = ChooseDriverBuild(DeviceDriverFolder(), *machine, CpuWords(cpuinfo->out));
    if (!chosen) return Error{d->uri_ + ": " + chosen.error().message, "device"};
    build = *chosen;
  }
  auto sha = Sha256OfFile(build.path);
  if (!sha) return sha.error();
  auto installed = d->transport_->Install(build.path, *sha, "bin", "pipette-llamacpp-driver", true);
  if (!installed) return installed.error();
  d->driver_path_ = *installed;
  // What the binary says it is, run there: a build the device cannot run fails here, in one line.
  auto info = d->transport_->Run({*installed, "--build-info"});
  if (!info) return info.error();
  const json self = json::parse(info->out, nullptr, false);
  if (info->exit_code != 0 || !self.is_object()) {
    const std::string why = LastLine(info->err);
    return MakeError(d->uri_ + ": the driver " + build.path + " does not run there (" +
                         (why.empty() ? "exit status " + std::to_string(info->exit_code) : why) +
                         "); build one for its architecture (" + *machine +
                         ") with scripts/build-device.sh",
                     "device");
  }
  d->driver_build_ = {{"target", self.value("target", "")},
                      {"cpu_level", self.value("cpu_level", "")},
                      {"sha256", *sha},
                      {"static", true},
                      {"device_path", *installed}};
  if (auto refusal = d->transport_->Run({*installed, "--probe", "{}"}); !refusal) {
    return refusal.error();
  } else if (refusal->exit_code != 0) {
    return MakeError(d->uri_ + ": " + LastLine(refusal->err), "device");
  }
  if (auto facts = d->Info(); !facts) return facts.error();
  return d;
}

Result<json> DeviceAccess::Probe(const json& request) {
  auto r = transport_->Run({driver_path_, "--probe", request.dump()});
  if (!r) return r.error();
  if (r->exit_code != 0) {
    const std::string why = LastLine(r->err);
    return MakeError(uri_ + ": the driver's probe failed (" +
                         (why.empty() ? "exit status " + std::to_string(r->exit_code) : why) + ")",
                     "device");
  }
  json reply = json::parse(r->out, nullptr, false);
  if (reply.is_discarded() || !reply.is_object() || !reply.value("ok", false)) {
    return MakeError(uri_ + ": the driver's probe gave an unreadable answer", "device");
  }
  return reply;
}

Result<DeviceInfo> DeviceAccess::Info() {
  std::lock_guard<std::mutex> lock(mu_);
  if (info_) return *info_;
  if (IsHost()) {
    info_ = ReadDeviceInfo(DeviceRoots{proc_root_, sys_root_, "/etc"});
    return *info_;
  }
  auto reply = Probe({{"device", true}});
  if (!reply) return reply.error();
  info_ = DeviceFactsFromJson(reply->value("device", json::object()));
  return *info_;
}

Result<json> DeviceAccess::Fingerprint(const std::string& label) {
  auto info = Info();
  if (!info) return info.error();
  json block = DeviceJson(*info, label);
  block["uri"] = uri_;
  const TransportKind kind = transport_->Address().kind;
  block["transport"] = kind == TransportKind::kSsh ? "ssh" : kind == TransportKind::kAdb ? "adb" : "local";
  return block;
}

std::vector<ThermalSample> DeviceAccess::Thermal() {
  if (IsHost()) return ReadThermalSnapshot(sys_root_);
  auto r = Probe({{"thermal", true}});
  return r ? ThermalFromProbe(*r) : std::vector<ThermalSample>{};
}

CpuSample DeviceAccess::Cpu(const std::vector<int>& own_pids) {
  if (IsHost()) return ReadCpuSample(proc_root_, own_pids);
  auto r = Probe({{"cpu_pids", own_pids}});
  return r ? CpuFromProbe(*r) : CpuSample{};
}

ThrottleCounts DeviceAccess::Throttle() {
  if (IsHost()) return ReadThrottleCounts(sys_root_);
  auto r = Probe({{"throttle", true}});
  return r ? ThrottleFromProbe(*r) : ThrottleCounts{};
}

EnergyReading DeviceAccess::Energy() {
  if (IsHost()) return ReadEnergy(sys_root_);
  auto r = Probe({{"energy", true}});
  return r ? EnergyFromProbe(*r) : EnergyReading{};
}

std::optional<ProcMemory> DeviceAccess::Memory(int pid) {
  if (IsHost()) return ReadProcMemory(pid, proc_root_);
  auto r = Probe({{"memory_pid", pid}});
  return r ? MemoryFromProbe(*r) : std::nullopt;
}

}  // namespace pipette
