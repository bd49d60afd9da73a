#include "platform/device_access.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "base/json_depth.h"
#include "base/sha256.h"
#include "platform/cache_dir.h"
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
  const json self = ParseBoundedJson(info->out);
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
  json reply = ParseBoundedJson(r->out);
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

Result<DeviceAccess::File> DeviceAccess::DeviceFile(const std::string& path, uint64_t head_bytes) {
  const std::string name = uri_ + ": device:" + path;
  if (path.empty() || path[0] != '/') {
    return MakeError(name + " is not an absolute path; give device:/full/path/on/the/device");
  }
  // %s size, %Y modification time, %F the kind of file: GNU, busybox and toybox stat all have them.
  auto stat = transport_->Run({"stat", "-L", "-c", "%s %Y %F", path});
  if (!stat) return stat.error();
  if (stat->exit_code != 0) {
    return MakeError(name + ": no such file on the device (" + LastLine(stat->err) +
                         "); copy it there first, or give the host's file without device:",
                     "device");
  }
  std::istringstream facts(stat->out);
  File f;
  f.path = path;
  std::string mtime, kind;
  facts >> f.size_bytes >> mtime;
  std::getline(facts >> std::ws, kind);
  if (kind != "regular file" && kind != "regular empty file") {
    return MakeError(name + " is a " + (kind.empty() ? "special file" : kind) +
                         ", not a model file; give the path of a .gguf file",
                     "device");
  }
  const std::string key = path + "\n" + std::to_string(f.size_bytes) + "\n" + mtime;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = sha_by_stat_.find(key); it != sha_by_stat_.end()) f.sha256 = it->second;
  }
  if (f.sha256.empty()) {
    auto sum = transport_->Run({"sha256sum", path});
    if (!sum) return sum.error();
    const std::string digest = sum->out.substr(0, std::min<size_t>(64, sum->out.size()));
    const bool hex = digest.size() == 64 &&
                     digest.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (sum->exit_code != 0 || !hex) {
      return MakeError(name + ": cannot hash it there (" +
                           (sum->exit_code == 127 ? std::string("the device has no sha256sum")
                                                  : LastLine(sum->err)) +
                           "); install coreutils or busybox on the device, or give the host's file",
                       "device");
    }
    f.sha256 = digest;
    std::lock_guard<std::mutex> lock(mu_);
    sha_by_stat_[key] = digest;
  }
  f.head_bytes = std::min(head_bytes, f.size_bytes);
  if (head_bytes == 0) return f;
  const std::string folder = DeviceModelHeadFolder();
  f.head_path = folder + "/" + f.sha256 + "." + std::to_string(f.head_bytes) + ".head";
  std::error_code ec;
  if (std::filesystem::file_size(f.head_path, ec) == f.head_bytes && !ec) return f;
  std::filesystem::create_directories(folder, ec);
  if (ec) return MakeError("cannot create " + folder + " (" + ec.message() + ")");
  // The first bytes, cut on the device (dd: everywhere, busybox and toybox included) and fetched
  // under a temporary name on both ends.
  const std::string part = "head-" + std::to_string(getpid()) + ".part";
  const std::string there = transport_->DeviceDir() + "/" + part;
  const uint64_t mib = 1 << 20;
  auto cut = transport_->Run({"dd", "if=" + path, "of=" + there, "bs=" + std::to_string(mib),
                              "count=" + std::to_string((f.head_bytes + mib - 1) / mib)});
  Status fetched = !cut                  ? Status(cut.error())
                   : cut->exit_code != 0 ? Status(MakeError(name + ": cannot read it there (" +
                                                                LastLine(cut->err) + ")",
                                                            "device"))
                                         : transport_->Fetch(there, f.head_path + "." + part);
  (void)transport_->Run({"rm", "-f", there});
  if (fetched.ok()) {
    std::filesystem::resize_file(f.head_path + "." + part, f.head_bytes, ec);
    if (!ec) std::filesystem::rename(f.head_path + "." + part, f.head_path, ec);
    if (ec) fetched = MakeError("cannot write " + f.head_path + " (" + ec.message() + ")");
  }
  if (!fetched.ok()) {
    std::filesystem::remove(f.head_path + "." + part, ec);
    return fetched.error();
  }
  return f;
}

std::string DeviceModelHeadFolder() { return PipetteCacheDir() + "/device-models"; }

Result<BandwidthResult> DeviceAccess::Bandwidth(const BandwidthOptions& options) {
  if (IsHost()) return MeasureBandwidth(options);
  auto reply = Probe({{"bandwidth",
                       {{"threads", options.threads},
                        {"runs", options.runs},
                        {"total_bytes", options.total_bytes}}}});
  if (!reply) return reply.error();
  auto measured = BandwidthFromProbe(*reply);
  if (!measured) return MakeError(uri_ + ": " + measured.error().message);  // options refused
  return measured;
}

Result<NoiseFloorResult> DeviceAccess::NoiseFloor(const NoiseFloorOptions& options) {
  if (IsHost()) return MeasureNoiseFloor(options);
  auto reply = Probe({{"noise_floor", {{"runs", options.runs}, {"run_ms", options.run_ms}}}});
  if (!reply) return reply.error();
  auto measured = NoiseFloorFromProbe(*reply);
  if (!measured) return MakeError(uri_ + ": " + measured.error().message);  // options refused
  return measured;
}

std::optional<ProcMemory> DeviceAccess::Memory(int pid) {
  if (IsHost()) return ReadProcMemory(pid, proc_root_);
  auto r = Probe({{"memory_pid", pid}});
  return r ? MemoryFromProbe(*r) : std::nullopt;
}

}  // namespace pipette
