// The local transport: the device is this machine. Files are used where they are, processes
// are our children.
#include <signal.h>
#include <sys/utsname.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "platform/transport_impl.h"

namespace pipette {
namespace {

class LocalTransport : public Transport {
 public:
  LocalTransport(DeviceAddress address, TransportOptions options)
      : address_(std::move(address)), options_(options) {}

  const DeviceAddress& Address() const override { return address_; }
  bool IsHost() const override { return true; }
  std::string DeviceDir() const override { return address_.dir; }

  Result<std::string> Connect() override {
    utsname u{};
    if (uname(&u) != 0) return MakeError(std::string("uname: ") + strerror(errno), "device");
    return std::string(u.machine);
  }

  Result<DeviceCommand> Run(const std::vector<std::string>& argv) override {
    if (argv.empty()) return MakeError("no command to run", "device");
    std::vector<std::string> resolved = argv;
    resolved[0] = FindOnPath(argv[0]);
    if (resolved[0].empty()) return MakeError(argv[0] + " is not on PATH", "device");
    auto run = RunCommand(resolved, options_.command_timeout);
    if (!run) return Error{run.error().message, "device"};
    if (run->timed_out) {
      return MakeError(argv[0] + " did not finish within " +
                           std::to_string(options_.command_timeout.count() / 1000) + " s",
                       "device");
    }
    return DeviceCommand{run->exit.exited ? run->exit.code : 128 + run->exit.signal,
                         std::move(run->out), std::move(run->err)};
  }

  Result<std::string> Install(const std::string& local_path, const std::string&,
                              const std::string&, const std::string&, bool) override {
    return std::filesystem::absolute(local_path).string();
  }

  Status Fetch(const std::string& device_path, const std::string& local_path) override {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::equivalent(device_path, local_path, ec)) return Status::Ok();
    fs::copy_file(device_path, local_path, fs::copy_options::overwrite_existing, ec);
    if (ec) return MakeError("cannot copy " + device_path + " to " + local_path + ": " + ec.message());
    return Status::Ok();
  }

  Result<ChildProcess> Start(const std::vector<std::string>& argv,
                             const std::string& stderr_path) override {
    return ChildProcess::Start(argv, stderr_path);
  }

  Status KillGroup(int pgid) override {
    if (pgid > 1 && kill(-pgid, SIGKILL) != 0 && errno != ESRCH) {
      return MakeError("cannot end process group " + std::to_string(pgid) + ": " + strerror(errno));
    }
    return Status::Ok();
  }

 private:
  DeviceAddress address_;
  TransportOptions options_;
};

}  // namespace

std::shared_ptr<Transport> MakeLocalTransport(const DeviceAddress& address,
                                              const TransportOptions& options) {
  return std::make_shared<LocalTransport>(address, options);
}

Result<std::shared_ptr<Transport>> OpenTransport(const DeviceAddress& address,
                                                 const TransportOptions& options) {
  switch (address.kind) {
    case TransportKind::kLocal:
      return MakeLocalTransport(address, options);
    case TransportKind::kSsh:
      return MakeSshTransport(address, options);
    case TransportKind::kAdb:
      return MakeAdbTransport(address, options);
  }
  return MakeError("unknown transport");
}

}  // namespace pipette
