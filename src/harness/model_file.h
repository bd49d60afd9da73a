// The model file a cell measures, wherever it is: a host file, or a file already on the cell's
// device ("device:/PATH", kDeviceModelPrefix in pipette/runtime.h). The record reads its header
// and its SHA-256 through here, and the runtime gets the path it opens.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "pipette/gguf.h"
#include "pipette/status.h"

namespace pipette {

class DeviceAccess;

// True for "device:/PATH" on a device that is not this machine (null: this machine).
bool OnRemoteDevice(const std::string& path, const DeviceAccess* device);

// The path the runtime opens: "device:/PATH" stays so on a remote device; on this machine it is
// PATH, the same file. Host paths are returned as they are.
std::string RuntimeModelPath(const std::string& path, const DeviceAccess* device);

// The record's model.path: an absolute host path, or "device:/PATH" for a file on the device.
std::string RecordModelPath(const std::string& path, const DeviceAccess* device);

// The GGUF header (pipette/gguf.h). On a remote device it is read from a host copy of the file's
// first bytes (16 MiB, more when the header is longer: a vocabulary of 256k tokens takes several
// MiB), hashed there as well (DeviceAccess::DeviceFile). Errors as ReadGgufInfo, or the device's
// one line (no such file there, no sha256sum, the link).
Result<GgufInfo> ReadModelHeader(const std::string& path, DeviceAccess* device);

// The file's SHA-256: on a remote device computed there, otherwise by `hash_file` when given
// (the CLI's cache) or by reading the file.
Result<std::string> ModelSha256(const std::string& path, DeviceAccess* device,
                                const std::function<Result<std::string>(const std::string&)>& hash_file);

}  // namespace pipette
