#include "dashboard/device_names.h"

#include "pipette/record.h"

namespace pipette::dashboard {

DeviceNames::DeviceNames(const std::vector<FleetClient>& clients) {
  std::map<std::string, int64_t> when;  // device id -> created_at of the registration named
  for (const FleetClient& c : clients) {
    const std::string id = record::StringAt(c.profile, "/id");
    if (id.empty() || c.label.empty()) continue;
    if (auto it = when.find(id); it != when.end() && it->second > c.created_at) continue;
    when[id] = c.created_at;
    names_[id] = c.label;
  }
}

Result<DeviceNames> DeviceNames::Load(FleetStore& store) {
  auto clients = store.ListClients();
  if (!clients.ok()) return clients.error();
  return DeviceNames(*clients);
}

std::string DeviceNames::Of(const std::string& device_id) const {
  const auto it = names_.find(device_id);
  return it != names_.end() ? it->second : device_id.substr(0, 8);
}

}  // namespace pipette::dashboard
