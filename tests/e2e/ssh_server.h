// A throwaway OpenSSH server for device tests (DESIGN.md 8a): Debian's sshd on 127.0.0.1 at a
// free port, with its own host key, and a client key it made and authorized; the client side is
// a config file for PIPETTE_SSH_CONFIG (ssh -F) that names the key and a known_hosts file holding
// the server's key, so nothing of the user's ~/.ssh is read or changed.
#pragma once

#include <memory>
#include <string>

#include "platform/process.h"

namespace pipette::testing_models {

class SshServer {
 public:
  // Starts it; nullptr with `why` set when this machine cannot (no sshd, no ssh-keygen).
  static std::unique_ptr<SshServer> Start(std::string* why);
  ~SshServer();

  int port() const { return port_; }
  // "ssh://root@127.0.0.1:PORT" (the current user's name), with ?dir=<a folder of its own>.
  std::string Uri() const;
  // The same without ?dir=: pipette's default folder under the login's home.
  std::string UriWithDefaultDir() const;
  const std::string& dir() const { return dir_; }
  // The config file for PIPETTE_SSH_CONFIG; `known` false: one with an empty known_hosts (an
  // unknown host key); `key` false: one naming a key the server does not know.
  std::string ClientConfig(bool known = true, bool key = true) const;
  // Kills the server and every session it serves (a dropped link).
  void Kill();
  // Kills it and starts it again on the same port with the same keys: a device that rebooted
  // (pipette's folder there survives, as on a phone's or a board's storage).
  bool Restart(std::string* why);
  pid_t Pid() const { return sshd_ ? sshd_->Pid() : -1; }

 private:
  bool Launch(std::string* why);
  std::string dir_;
  int port_ = 0;
  std::string user_;
  std::unique_ptr<ChildProcess> sshd_;
};

}  // namespace pipette::testing_models
