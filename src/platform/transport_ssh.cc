// The ssh transport: OpenSSH's client in batch mode (keys or an agent; a password prompt would
// hang a suite), one multiplexed connection per device (ControlMaster), so that a probe or a
// kill costs a round trip and not a handshake.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "platform/transport_impl.h"

namespace pipette {
namespace {

class SshTransport : public RemoteTransport {
 public:
  SshTransport(DeviceAddress address, TransportOptions options, std::string ssh)
      : RemoteTransport(address, options, ".cache/pipette-device"),
        ssh_(std::move(ssh)),
        a_(std::move(address)) {
    const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
    control_dir_ = std::string(runtime_dir && *runtime_dir ? runtime_dir : "/tmp") +
                   "/pipette-ssh-" + std::to_string(getuid());
    std::error_code ec;
    std::filesystem::create_directories(control_dir_, ec);
    std::filesystem::permissions(control_dir_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
  }

 protected:
  std::vector<std::string> ClientArgv(const std::string& command) const override {
    std::vector<std::string> argv = {ssh_};
    if (const char* config = std::getenv("PIPETTE_SSH_CONFIG"); config && *config) {
      argv.insert(argv.end(), {"-F", config});
    }
    const auto connect_s = std::max<int64_t>(1, options().command_timeout.count() / 1000);
    for (const std::string& o :
         {std::string("BatchMode=yes"), "ConnectTimeout=" + std::to_string(connect_s),
          std::string("ServerAliveInterval=5"), std::string("ServerAliveCountMax=3"),
          std::string("ControlMaster=auto"), "ControlPath=" + control_dir_ + "/%C",
          std::string("ControlPersist=60"), std::string("LogLevel=ERROR")}) {
      argv.insert(argv.end(), {"-o", o});
    }
    argv.push_back("-T");
    if (a_.port) argv.insert(argv.end(), {"-p", std::to_string(a_.port)});
    if (!a_.user.empty()) argv.insert(argv.end(), {"-l", a_.user});
    argv.push_back(a_.host);
    argv.push_back(command);
    return argv;
  }

  Error LinkError(const CommandRun& run) const override {
    const std::string& e = run.err;
    const std::string where = Name();
    const std::string port = a_.port ? " -p " + std::to_string(a_.port) : "";
    const std::string login = (a_.user.empty() ? "" : a_.user + "@") + a_.host;
    if (MessageHas(e, "REMOTE HOST IDENTIFICATION HAS CHANGED")) {
      return MakeError(where + ": the host key of " + a_.host +
                           " has CHANGED since it was accepted (another machine, or someone in "
                           "between); check it, then remove the old key with ssh-keygen -R " +
                           a_.host,
                       "device");
    }
    if (MessageHas(e, "Host key verification failed") || MessageHas(e, "host key is known") ||
        MessageHas(e, "No ED25519 host key") || MessageHas(e, "No RSA host key") ||
        MessageHas(e, "No ECDSA host key")) {
      return MakeError(where + ": the host key of " + a_.host +
                           " is not known here and pipette never accepts one silently; check its "
                           "fingerprint and accept it once with `ssh" + port + " " + login +
                           " true` (or add `ssh-keyscan" + port + " " + a_.host +
                           "` to ~/.ssh/known_hosts)",
                       "device");
    }
    if (MessageHas(e, "Permission denied") || MessageHas(e, "Too many authentication failures")) {
      return MakeError(where + ": authentication refused by " + a_.host +
                           "; pipette logs in with a key (no password prompts): install yours "
                           "there with `ssh-copy-id" + port + " " + login +
                           "` or load it into ssh-agent",
                       "device");
    }
    for (const char* unreachable :
         {"Connection refused", "No route to host", "Connection timed out", "timed out",
          "Could not resolve hostname", "Network is unreachable", "Name or service not known",
          "Connection reset", "closed by remote host", "Broken pipe", "Connection closed"}) {
      if (MessageHas(e, unreachable)) {
        return MakeError(where + ": cannot reach " + a_.host + " (" + LastLine(e) +
                             "); check that it is on, on the network and runs sshd",
                         "device");
      }
    }
    const std::string last = LastLine(e);
    return MakeError(where + ": ssh failed (" + (last.empty() ? run.exit.Describe() : last) + ")",
                     "device");
  }

  Status Push(const std::string& local_path, const std::string& device_path) override {
    auto r = Shell("cat > " + ShellQuote(device_path), options().copy_timeout, local_path);
    if (!r) return r.error();
    if (r->exit_code != 0) return CopyError(local_path, device_path, r->err);
    return Status::Ok();
  }

  Status Pull(const std::string& device_path, const std::string& local_path) override {
    auto r = Shell("cat " + ShellQuote(device_path), options().copy_timeout);
    if (!r) return r.error();
    if (r->exit_code != 0) {
      return MakeError(Name() + ": cannot read " + device_path + " (" + LastLine(r->err) + ")",
                       "device");
    }
    std::ofstream out(local_path, std::ios::binary | std::ios::trunc);
    out.write(r->out.data(), static_cast<std::streamsize>(r->out.size()));
    if (!out) return MakeError("cannot write " + local_path);
    return Status::Ok();
  }

 private:
  Error CopyError(const std::string& local_path, const std::string& device_path,
                  const std::string& err) const {
    if (MessageHas(err, "No space left")) return OutOfSpace(local_path + " to " + device_path);
    return MakeError(Name() + ": copying " + local_path + " failed (" + LastLine(err) + ")",
                     "device");
  }

  std::string ssh_;
  DeviceAddress a_;
  std::string control_dir_;
};

}  // namespace

Result<std::shared_ptr<Transport>> MakeSshTransport(const DeviceAddress& address,
                                                    const TransportOptions& options) {
  const std::string ssh = FindOnPath("ssh");
  if (ssh.empty()) {
    return MakeError("ssh is not installed here; install OpenSSH's client (Debian: "
                     "apt-get install openssh-client) to measure " + address.Uri());
  }
  return std::shared_ptr<Transport>(std::make_shared<SshTransport>(address, options, ssh));
}

}  // namespace pipette
