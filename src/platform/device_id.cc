// The host's half of the device fingerprint (see device.h): the hashes (flags_hash, device.id)
// and the record's `device` block. Kept apart from device_linux.cc, which reads the facts and
// also runs on the device inside pipette-llamacpp-driver, linked without OpenSSL.
#include <algorithm>

#include "base/sha256.h"
#include "platform/device.h"

namespace pipette {
namespace {

using nlohmann::json;

json StrOrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

template <typename T>
std::optional<T> OptFrom(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

}  // namespace

void CompleteDeviceInfo(DeviceInfo& d) {
  d.cpu.flags_hash = d.cpu.flags.empty() ? "" : Sha256Hex(d.cpu.flags + " ").substr(0, 16);
}

DeviceInfo ReadDeviceInfo(const DeviceRoots& roots) {
  DeviceInfo d = ReadDeviceFacts(roots);
  CompleteDeviceInfo(d);
  return d;
}

uint64_t RoundedMemoryForId(uint64_t memory_bytes) {
  constexpr uint64_t kStep = 256ull << 20;
  return (memory_bytes + kStep / 2) / kStep * kStep;
}

std::string DeviceId(const DeviceInfo& d) {
  json caches = json::array();
  for (const auto& c : d.cpu.caches) caches.push_back({c.level, c.type, c.size_bytes});
  std::vector<std::string> gpus;
  for (const auto& g : d.gpus) {
    gpus.push_back(g.vendor_id.empty() ? "driver:" + g.driver : g.vendor_id + ":" + g.device_id);
  }
  std::sort(gpus.begin(), gpus.end());
  const json stable = {{"arch", d.os.arch},
                       {"cpu_model", d.cpu.model},
                       {"cpu_vendor", d.cpu.vendor},
                       {"physical_cores", d.cpu.physical_cores},
                       {"logical_cores", d.cpu.logical_cores},
                       {"caches", caches},
                       {"memory_bytes_rounded", RoundedMemoryForId(d.memory_bytes)},
                       {"gpus", gpus},
                       {"machine_id", d.machine_id}};
  return Sha256Hex("pipette.device/1\n" + stable.dump());
}

json DeviceJson(const DeviceInfo& d, const std::string& label) {
  json caches = json::array();
  for (const auto& c : d.cpu.caches) {
    caches.push_back({{"level", c.level},
                      {"type", StrOrNull(c.type)},
                      {"size_bytes", c.size_bytes},
                      {"shared_cpus", StrOrNull(c.shared_cpus)}});
  }
  json gpus = json::array();
  for (const auto& g : d.gpus) {
    gpus.push_back({{"card", StrOrNull(g.card)},
                    {"vendor_id", StrOrNull(g.vendor_id)},
                    {"device_id", StrOrNull(g.device_id)},
                    {"vendor", StrOrNull(g.vendor)},
                    {"name", StrOrNull(g.name)},
                    {"driver", StrOrNull(g.driver)},
                    {"pci_slot", StrOrNull(g.pci_slot)},
                    {"memory_bytes", g.memory_bytes ? json(g.memory_bytes) : json(nullptr)}});
  }
  json zones = json::array();
  for (const auto& z : d.thermal_zones) zones.push_back({{"zone", z.zone}, {"type", z.type}});
  json frequency = nullptr;
  if (d.frequency) {
    frequency = {{"governor", StrOrNull(d.frequency->governor)},
                 {"driver", StrOrNull(d.frequency->driver)},
                 {"min_khz", d.frequency->min_khz ? json(d.frequency->min_khz) : json(nullptr)},
                 {"max_khz", d.frequency->max_khz ? json(d.frequency->max_khz) : json(nullptr)}};
  }
  json clusters = json::array();
  for (const auto& c : d.clusters) clusters.push_back({{"cpus", c.cpus}, {"max_khz", c.max_khz}});
  json battery = nullptr;
  if (d.battery) {
    battery = {{"name", d.battery->name},
               {"level_percent", d.battery->level_percent ? json(*d.battery->level_percent)
                                                          : json(nullptr)},
               {"status", StrOrNull(d.battery->status)},
               {"celsius", d.battery->celsius ? json(*d.battery->celsius) : json(nullptr)}};
  }
  return {{"id", DeviceId(d)},
          {"label", label},
          {"os",
           {{"name", d.os.name},
            {"version_id", StrOrNull(d.os.version_id)},
            {"pretty_name", StrOrNull(d.os.pretty_name)},
            {"kernel", d.os.kernel},
            {"arch", d.os.arch}}},
          {"cpu",
           {{"model", StrOrNull(d.cpu.model)},
            {"vendor", StrOrNull(d.cpu.vendor)},
            {"physical_cores", d.cpu.physical_cores},
            {"logical_cores", d.cpu.logical_cores},
            {"smt", d.cpu.smt},
            {"flags_hash", StrOrNull(d.cpu.flags_hash)},
            {"caches", caches}}},
          {"board", StrOrNull(d.board)},
          {"frequency", frequency},
          {"memory_bytes", d.memory_bytes},
          {"swap_bytes", d.swap_bytes},
          {"governor", d.frequency ? StrOrNull(d.frequency->governor) : json(nullptr)},
          {"gpus", gpus},
          {"power",
           {{"source", d.power.source},
            {"profile", StrOrNull(d.power.profile)},
            {"profile_source", StrOrNull(d.power.profile_source)}}},
          {"thermal_zones", zones},
          {"virtualized", d.virtualized ? json(*d.virtualized) : json(nullptr)},
          {"clusters", clusters},
          {"battery", battery},
          {"emulated", !d.emulated_on.empty()},
          {"emulated_on", StrOrNull(d.emulated_on)}};
}

json DeviceFingerprint(const std::string& label, const DeviceRoots& roots) {
  return DeviceJson(ReadDeviceInfo(roots), label);
}

json DeviceFingerprint(const std::string& label, const std::string& proc_root,
                       const std::string& sys_root) {
  return DeviceFingerprint(label, DeviceRoots{proc_root, sys_root, "/etc"});
}

DeviceInfo DeviceFactsFromJson(const json& j) {
  DeviceInfo d;
  const json os = j.value("os", json::object());
  d.os.name = os.value("name", "unknown");
  d.os.version_id = os.value("version_id", "");
  d.os.pretty_name = os.value("pretty_name", "");
  d.os.kernel = os.value("kernel", "");
  d.os.arch = os.value("arch", "");
  const json cpu = j.value("cpu", json::object());
  d.cpu.model = cpu.value("model", "");
  d.cpu.vendor = cpu.value("vendor", "");
  d.cpu.physical_cores = cpu.value("physical_cores", 0);
  d.cpu.logical_cores = cpu.value("logical_cores", 0);
  d.cpu.smt = cpu.value("smt", false);
  d.cpu.flags = cpu.value("flags", "");
  for (const auto& c : cpu.value("caches", json::array())) {
    d.cpu.caches.push_back({c.value("level", 0), c.value("type", ""),
                            c.value("size_bytes", uint64_t{0}), c.value("shared_cpus", "")});
  }
  d.board = j.value("board", "");
  if (j.contains("frequency") && j["frequency"].is_object()) {
    const json& f = j["frequency"];
    d.frequency = CpuFrequency{f.value("governor", ""), f.value("driver", ""),
                               f.value("min_khz", uint64_t{0}), f.value("max_khz", uint64_t{0})};
  }
  d.memory_bytes = j.value("memory_bytes", uint64_t{0});
  d.swap_bytes = j.value("swap_bytes", uint64_t{0});
  for (const auto& g : j.value("gpus", json::array())) {
    d.gpus.push_back({g.value("card", ""), g.value("vendor_id", ""), g.value("device_id", ""),
                      g.value("vendor", ""), g.value("name", ""), g.value("driver", ""),
                      g.value("pci_slot", ""), g.value("memory_bytes", uint64_t{0})});
  }
  const json power = j.value("power", json::object());
  d.power.source = power.value("source", "unknown");
  d.power.profile = power.value("profile", "");
  d.power.profile_source = power.value("profile_source", "");
  for (const auto& z : j.value("thermal_zones", json::array())) {
    d.thermal_zones.push_back({z.value("zone", 0), z.value("type", ""), std::nullopt});
  }
  d.virtualized = OptFrom<bool>(j, "virtualized");
  d.machine_id = j.value("machine_id", "");
  for (const auto& c : j.value("clusters", json::array())) {
    d.clusters.push_back({c.value("cpus", ""), c.value("max_khz", uint64_t{0})});
  }
  if (j.contains("battery") && j["battery"].is_object()) {
    const json& b = j["battery"];
    d.battery = BatteryInfo{b.value("name", ""), OptFrom<int>(b, "level_percent"),
                            b.value("status", ""), OptFrom<double>(b, "celsius")};
  }
  d.emulated_on = j.value("emulated_on", "");
  CompleteDeviceInfo(d);
  return d;
}

}  // namespace pipette
