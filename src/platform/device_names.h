// The one name of each device (issue 23 item 5): given once, on the host that measures it
// (`pipette device --device URI --name NAME`, or `pipette register --label NAME`, which names the
// device it registers), and shown for that device by every command. A run's tag (`--label`, a
// suite's `label`: device.label in the record) is a different thing and never stands for the
// device's name. The fleet server keeps its own: the name each device registered with.
//
// Kept in one host file, device-names.json: {"schema": "pipette.device-names/1",
// "names": {"<device id>": "<name>"}} under $PIPETTE_CONFIG, else $XDG_CONFIG_HOME/pipette,
// else ~/.config/pipette. Thread-compatible; writes replace the file atomically.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "pipette/status.h"

namespace pipette {

std::string DeviceNamesPath();

// Every name given on this host (device id -> name); empty when there is no file or it cannot be
// read (a broken file is reported by NameDevice, which would replace it).
std::map<std::string, std::string> ReadDeviceNames();
std::optional<std::string> DeviceNameOf(const std::string& device_id);

// A name people type and read: 1 to 64 characters, ASCII letters and digits, spaces inside and
// . _ - ( ) + #; no leading or trailing space. Errors: one line naming the name (what cannot be
// printed shown as '?') and the rule.
Status CheckDeviceName(const std::string& name);

// Names the device `device_id` (replacing its name; another device may not have the same one:
// one name, one device). Errors: CheckDeviceName's, a name taken by another device (naming it),
// the file cannot be read or written.
Status NameDevice(const std::string& device_id, const std::string& name);

// How a device is shown: its name, else the first 8 characters of its id.
std::string DeviceShownAs(const std::string& device_id,
                          const std::map<std::string, std::string>& names);

}  // namespace pipette
