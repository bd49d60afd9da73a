// pipette's cache folder on this machine, as scripts/llama.sh and scripts/build-device.sh name it:
// $PIPETTE_CACHE, else $XDG_CACHE_HOME/pipette, else ~/.cache/pipette (the home folder from
// $HOME, else the password database). Everything cached lives under it: llama.cpp and driver
// builds, device drivers, bandwidth results, device files' first bytes.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "pipette/status.h"

namespace pipette {

std::string PipetteCacheDir();

// A per-device file of the cache, PipetteCacheDir()/<prefix>-<device_id>.json (bandwidth,
// noise floor); empty when device_id is not a lowercase hex string (it would escape the folder).
std::string DeviceCacheFile(const std::string& prefix, const std::string& device_id);

// Writes `body` with "schema" and "device_id" added to DeviceCacheFile(prefix, device_id),
// creating the folder and replacing the file atomically. Errors name `what` ("the bandwidth
// cache"): an invalid device id, a folder or file that cannot be written.
Status StoreDeviceCacheFile(const std::string& prefix, const std::string& device_id,
                            const std::string& schema, nlohmann::json body,
                            const std::string& what);

}  // namespace pipette
