// Internals of platform/transport.h: the three implementations and the part that ssh and adb
// share (a device reached through a client program that runs shell commands there).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "platform/process.h"
#include "platform/transport.h"

namespace pipette {

std::shared_ptr<Transport> MakeLocalTransport(const DeviceAddress& address,
                                              const TransportOptions& options);
Result<std::shared_ptr<Transport>> MakeSshTransport(const DeviceAddress& address,
                                                    const TransportOptions& options);
Result<std::shared_ptr<Transport>> MakeAdbTransport(const DeviceAddress& address,
                                                    const TransportOptions& options);

// Marks the end of a device command's output: "<sentinel><exit status>". `adb shell` does not
// always pass the exit status back (older adb and devices without its shell protocol), so every
// remote command echoes it, and a missing sentinel means the link failed, whatever the client's
// own exit status says.
inline constexpr const char* kExitSentinel = "\n@@pipette-exit=";

// Whether a client's message contains `what`: ssh's and adb's failures are told apart by it.
inline bool MessageHas(const std::string& text, const char* what) {
  return text.find(what) != std::string::npos;
}

// A device reached through a client program (ssh, adb) that runs a command in the device's shell.
class RemoteTransport : public Transport {
 public:
  RemoteTransport(DeviceAddress address, TransportOptions options, std::string default_dir);

  const DeviceAddress& Address() const override { return address_; }
  bool IsHost() const override { return false; }
  std::string DeviceDir() const override { return dir_; }
  Result<std::string> Connect() override;
  Result<DeviceCommand> Run(const std::vector<std::string>& argv) override;
  Result<std::string> Install(const std::string& local_path, const std::string& sha256,
                              const std::string& kind, const std::string& name,
                              bool executable) override;
  Status Fetch(const std::string& device_path, const std::string& local_path) override;
  Result<ChildProcess> Start(const std::vector<std::string>& argv,
                             const std::string& stderr_path) override;
  Status KillGroup(int pgid) override;

 protected:
  // The host argv that runs `command` (one string) in the device's shell.
  virtual std::vector<std::string> ClientArgv(const std::string& command) const = 0;
  // One line for a failure of the link itself, read from the client's stderr and exit status.
  virtual Error LinkError(const CommandRun& run) const = 0;
  // Copies a host file to a device path (written as it is; the caller renames it when whole).
  virtual Status Push(const std::string& local_path, const std::string& device_path) = 0;
  // Copies a device file to a host path.
  virtual Status Pull(const std::string& device_path, const std::string& local_path) = 0;

  // Runs `command` in `sh -c` on the device, stdin from `stdin_path` (empty: nothing). Errors:
  // the link failed (LinkError) or `timeout` passed (stage "device").
  Result<DeviceCommand> Shell(const std::string& command, std::chrono::milliseconds timeout,
                              const std::string& stdin_path = "");

  // One line for a copy that filled the device: nothing of it was kept.
  Error OutOfSpace(const std::string& what) const;

  const TransportOptions& options() const { return options_; }
  std::string Name() const { return address_.Uri(); }

 private:
  DeviceAddress address_;
  TransportOptions options_;
  std::string dir_;
};

// The last non-empty line of `text`, trimmed ("" when none).
std::string LastLine(const std::string& text);

}  // namespace pipette
