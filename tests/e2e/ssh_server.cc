#include "ssh_server.h"

#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "model_fixtures.h"
#include "tests/support/free_port.h"

namespace pipette::testing_models {
namespace fs = std::filesystem;
namespace {

bool Listening(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::unique_ptr<SshServer> SshServer::Start(std::string* why) {
  const std::string sshd = "/usr/sbin/sshd";
  const std::string keygen = FindOnPath("ssh-keygen");
  if (access(sshd.c_str(), X_OK) != 0 || keygen.empty() || FindOnPath("ssh").empty()) {
    *why = "OpenSSH's server and client are not installed (Debian: openssh-server, "
           "openssh-client; scripts/deps.sh --test installs them)";
    return nullptr;
  }
  std::unique_ptr<SshServer> s(new SshServer());
  static int n = 0;
  s->dir_ = WorkDir() + "/sshd-" + std::to_string(n++);
  fs::create_directories(s->dir_ + "/device");
  const passwd* pw = getpwuid(getuid());
  s->user_ = pw ? pw->pw_name : "root";
  for (const char* key : {"host_key", "client_key", "stranger_key"}) {
    std::string out;
    auto r = RunTool({keygen, "-q", "-t", "ed25519", "-N", "", "-f", s->dir_ + "/" + key}, &out);
    if (!r.ok() || !r->exited || r->code != 0) {
      *why = "ssh-keygen failed: " + out;
      return nullptr;
    }
  }
  fs::copy_file(s->dir_ + "/client_key.pub", s->dir_ + "/authorized_keys");
  s->port_ = testing::FreePort();
  std::ofstream(s->dir_ + "/known_hosts")
      << "[127.0.0.1]:" << s->port_ << " " << ReadAll(s->dir_ + "/host_key.pub");
  std::ofstream(s->dir_ + "/empty_known_hosts") << "";
  std::ofstream(s->dir_ + "/sshd_config")
      << "Port " << s->port_ << "\nListenAddress 127.0.0.1\nHostKey " << s->dir_
      << "/host_key\nAuthorizedKeysFile " << s->dir_ << "/authorized_keys\nPidFile "
      << s->dir_ << "/sshd.pid\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
      << "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
      << "MaxStartups 100\nMaxSessions 100\nLogLevel ERROR\n";
  if (!s->Launch(why)) return nullptr;
  return s;
}

bool SshServer::Launch(std::string* why) {
  fs::create_directories("/run/sshd");  // sshd's privilege-separation folder
  auto child = ChildProcess::Start({"/usr/sbin/sshd", "-D", "-e", "-f", dir_ + "/sshd_config"},
                                   dir_ + "/sshd.log");
  if (!child.ok()) {
    *why = child.error().message;
    return false;
  }
  sshd_ = std::make_unique<ChildProcess>(std::move(*child));
  for (int i = 0; i < 200 && !Listening(port_); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  if (!Listening(port_)) {
    *why = "sshd did not start: " + ReadAll(dir_ + "/sshd.log");
    return false;
  }
  return true;
}

bool SshServer::Restart(std::string* why) {
  Kill();
  return Launch(why);
}

SshServer::~SshServer() { Kill(); }

std::string SshServer::Uri() const {
  return "ssh://" + user_ + "@127.0.0.1:" + std::to_string(port_) + "?dir=" + dir_ + "/device";
}

std::string SshServer::UriWithDefaultDir() const {
  return "ssh://" + user_ + "@127.0.0.1:" + std::to_string(port_);
}

std::string SshServer::ClientConfig(bool known, bool key) const {
  const std::string path = dir_ + "/client_config" + (known ? "" : "_unknown") + (key ? "" : "_stranger");
  std::ofstream(path) << "Host 127.0.0.1\n  IdentityFile " << dir_
                      << (key ? "/client_key" : "/stranger_key") << "\n  IdentitiesOnly yes\n"
                      << "  UserKnownHostsFile " << dir_
                      << (known ? "/known_hosts" : "/empty_known_hosts") << "\n"
                      << "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n";
  return path;
}

void SshServer::Kill() {
  if (!sshd_) return;
  // Every sshd process of the server (its sessions are its descendants; the commands they run
  // are not sshd and stay, as on a real device whose link dropped), then the listener.
  std::vector<std::string> level = {std::to_string(sshd_->Pid())};
  std::vector<std::string> sshds;
  while (!level.empty()) {
    std::vector<std::string> next;
    for (const std::string& parent : level) {
      std::string out;
      RunTool({"/usr/bin/pgrep", "-P", parent, "sshd"}, &out);
      std::istringstream in(out);
      for (std::string pid; in >> pid;) next.push_back(pid);
    }
    sshds.insert(sshds.end(), next.begin(), next.end());
    level = next;
  }
  for (const std::string& pid : sshds) kill(std::stoi(pid), SIGKILL);
  sshd_->Kill(SIGKILL);
  sshd_->Wait();
  sshd_.reset();
}

}  // namespace pipette::testing_models
