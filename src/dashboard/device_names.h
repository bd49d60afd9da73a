// How the dashboard names a device (issue 23 item 5): by the one name it registered with (the
// label of the client whose registration profile carries that device id; the newest such
// registration when a device registered twice), else by its id's first 8 characters. A run's
// tag (the records' device.label) is shown as a tag, never as the device's name, so one machine
// has one name on every page, the same as `pipette serve clients list` gives it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pipette/fleet_store.h"
#include "pipette/status.h"

namespace pipette::dashboard {

class DeviceNames {
 public:
  explicit DeviceNames(const std::vector<FleetClient>& clients);
  // The registered clients of `store`. Errors: the store's.
  static Result<DeviceNames> Load(FleetStore& store);

  // The name of `device_id`, or the first 8 characters of the id.
  std::string Of(const std::string& device_id) const;
  bool Named(const std::string& device_id) const { return names_.count(device_id) > 0; }

 private:
  std::map<std::string, std::string> names_;  // device id -> name
};

}  // namespace pipette::dashboard
