// The adb transport: `adb -s SERIAL push` to copy, `adb -s SERIAL shell` to run, for Android
// phones and boards on USB or adb over TCP. Android lets the shell user write and execute in
// /data/local/tmp, where llama.cpp's own Android instructions put their binaries too.
#include "platform/transport_impl.h"

namespace pipette {
namespace {

class AdbTransport : public RemoteTransport {
 public:
  AdbTransport(DeviceAddress address, TransportOptions options, std::string adb)
      : RemoteTransport(address, options, "/data/local/tmp/pipette"),
        adb_(std::move(adb)),
        serial_(address.serial) {}

 protected:
  std::vector<std::string> ClientArgv(const std::string& command) const override {
    return {adb_, "-s", serial_, "shell", command};
  }

  Error LinkError(const CommandRun& run) const override {
    const std::string e = run.err + run.out;
    if (MessageHas(e, "not found") || MessageHas(e, "no devices")) {
      return MakeError(Name() + ": no device " + serial_ +
                           " is attached (`adb devices` lists the serials; plug it in, or "
                           "`adb connect HOST:PORT` for adb over TCP)",
                       "device");
    }
    if (MessageHas(e, "unauthorized")) {
      return MakeError(Name() + ": the device has not authorized this computer; accept the USB "
                           "debugging prompt on its screen and try again",
                       "device");
    }
    if (MessageHas(e, "offline")) {
      return MakeError(Name() + ": the device is offline; reconnect it (or `adb reconnect`)",
                       "device");
    }
    const std::string last = LastLine(e);
    return MakeError(Name() + ": adb shell failed (" + (last.empty() ? run.exit.Describe() : last) +
                         "; the command's exit status did not come back)",
                     "device");
  }

  Status Push(const std::string& local_path, const std::string& device_path) override {
    return Copy({adb_, "-s", serial_, "push", local_path, device_path}, local_path);
  }

  Status Pull(const std::string& device_path, const std::string& local_path) override {
    return Copy({adb_, "-s", serial_, "pull", device_path, local_path}, device_path);
  }

 private:
  Status Copy(const std::vector<std::string>& argv, const std::string& what) {
    auto r = RunCommand(argv, options().copy_timeout);
    if (!r) return Error{r.error().message, "device"};
    if (r->timed_out) {
      return MakeError(Name() + ": copying " + what + " did not finish within " +
                           std::to_string(options().copy_timeout.count() / 1000) +
                           " s (the device or its link stalled)",
                       "device");
    }
    if (r->exit.exited && r->exit.code == 0) return Status::Ok();
    const std::string e = r->err + r->out;
    if (MessageHas(e, "No space left") || MessageHas(e, "no space")) return OutOfSpace(what);
    if (MessageHas(e, "not found") || MessageHas(e, "unauthorized") || MessageHas(e, "offline")) {
      CommandRun run;
      run.err = e;
      return LinkError(run);
    }
    return MakeError(Name() + ": copying " + what + " failed (" + LastLine(e) + ")", "device");
  }

  std::string adb_;
  std::string serial_;
};

}  // namespace

Result<std::shared_ptr<Transport>> MakeAdbTransport(const DeviceAddress& address,
                                                    const TransportOptions& options) {
  const std::string adb = FindOnPath("adb");
  if (adb.empty()) {
    return MakeError("adb is not installed here; install it (Debian: apt-get install adb) to "
                     "measure " + address.Uri());
  }
  return std::shared_ptr<Transport>(std::make_shared<AdbTransport>(address, options, adb));
}

}  // namespace pipette
