// DeviceInfo as JSON, every field kept, for the trip from the device's probe to the host (which
// reads it back with DeviceFactsFromJson, device_id.cc).
#include "platform/device.h"

namespace pipette {
namespace {

using nlohmann::json;

template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}


}  // namespace

json DeviceFactsToJson(const DeviceInfo& d) {
  json caches = json::array();
  for (const auto& c : d.cpu.caches) {
    caches.push_back({{"level", c.level}, {"type", c.type}, {"size_bytes", c.size_bytes},
                      {"shared_cpus", c.shared_cpus}});
  }
  json gpus = json::array();
  for (const auto& g : d.gpus) {
    gpus.push_back({{"card", g.card}, {"vendor_id", g.vendor_id}, {"device_id", g.device_id},
                    {"vendor", g.vendor}, {"name", g.name}, {"driver", g.driver},
                    {"pci_slot", g.pci_slot}, {"memory_bytes", g.memory_bytes}});
  }
  json zones = json::array();
  for (const auto& z : d.thermal_zones) zones.push_back({{"zone", z.zone}, {"type", z.type}});
  json clusters = json::array();
  for (const auto& c : d.clusters) clusters.push_back({{"cpus", c.cpus}, {"max_khz", c.max_khz}});
  json frequency = nullptr;
  if (d.frequency) {
    frequency = {{"governor", d.frequency->governor}, {"driver", d.frequency->driver},
                 {"min_khz", d.frequency->min_khz}, {"max_khz", d.frequency->max_khz}};
  }
  json battery = nullptr;
  if (d.battery) {
    battery = {{"name", d.battery->name}, {"level_percent", Opt(d.battery->level_percent)},
               {"status", d.battery->status}, {"celsius", Opt(d.battery->celsius)}};
  }
  return {{"os", {{"name", d.os.name}, {"version_id", d.os.version_id},
                  {"pretty_name", d.os.pretty_name}, {"kernel", d.os.kernel},
                  {"arch", d.os.arch}}},
          {"cpu", {{"model", d.cpu.model}, {"vendor", d.cpu.vendor},
                   {"physical_cores", d.cpu.physical_cores},
                   {"logical_cores", d.cpu.logical_cores}, {"smt", d.cpu.smt},
                   {"flags", d.cpu.flags}, {"caches", caches}}},
          {"board", d.board},
          {"frequency", frequency},
          {"memory_bytes", d.memory_bytes},
          {"swap_bytes", d.swap_bytes},
          {"gpus", gpus},
          {"power", {{"source", d.power.source}, {"profile", d.power.profile},
                     {"profile_source", d.power.profile_source}}},
          {"thermal_zones", zones},
          {"virtualized", Opt(d.virtualized)},
          {"machine_id", d.machine_id},
          {"clusters", clusters},
          {"battery", battery},
          {"emulated_on", d.emulated_on}};
}

}  // namespace pipette
