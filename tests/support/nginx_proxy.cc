#include "tests/support/nginx_proxy.h"
#include "tests/support/free_port.h"

#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace pipette::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(std::string(path ? path : "") + ":/usr/sbin:/sbin");
  for (std::string d; std::getline(dirs, d, ':');) {
    if (!d.empty() && ::access((d + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

bool Accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

// Runs a shell command line, its output to `log`: Error with the log's end when it fails.
Status Shell(const std::string& line, const std::string& log) {
  const int rc = std::system((line + " >>'" + log + "' 2>&1").c_str());
  if (rc == 0) return Status::Ok();
  std::string text = ReadAll(log);
  if (text.size() > 600) text = text.substr(text.size() - 600);
  return MakeError(std::string("'").append(line, 0, 80).append("...' failed: ").append(text));
}

// Replaces the one occurrence of `from` in the site file: a placeholder that is gone means the
// file changed under the test, which must then be told what to replace.
Status ReplaceOnce(std::string* text, const std::string& from, const std::string& to) {
  const size_t at = text->find(from);
  if (at == std::string::npos || text->find(from, at + 1) != std::string::npos) {
    return MakeError(DeployedSiteFile() + " no longer has '" + from +
                     "' exactly once; update tests/support/nginx_proxy.cc");
  }
  text->replace(at, from.size(), to);
  return Status::Ok();
}

}  // namespace

std::string DeployedSiteFile() { return std::string(PIPETTE_SOURCE_DIR) + "/deploy/nginx/pipette.conf"; }

Result<std::unique_ptr<NginxProxy>> NginxProxy::Start(const std::string& dir, int upstream_port,
                                                      int workers) {
  if (!OnPath("nginx") || !OnPath("openssl")) {
    return MakeError("needs nginx and openssl; install them (scripts/deps.sh --test)");
  }
  std::unique_ptr<NginxProxy> p(new NginxProxy());
  p->dir_ = dir;
  p->ca_file_ = dir + "/ca.pem";
  const std::string log = dir + "/openssl.log";
  const std::string q = "'" + dir + "/";
  // A CA, and a server certificate for the names the tests connect to, signed by it.
  std::ofstream(dir + "/server.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                                     << "extendedKeyUsage=serverAuth\n";
  for (const std::string& line : {
           "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
           "-subj '/CN=pipette test CA' -addext basicConstraints=critical,CA:TRUE "
           "-addext keyUsage=critical,keyCertSign,cRLSign -keyout " + q + "ca.key' -out " + q +
               "ca.pem'",
           "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "
           "'/CN=localhost' -keyout " + q + "server.key' -out " + q + "server.csr'",
           "openssl x509 -req -days 2 -in " + q + "server.csr' -CA " + q + "ca.pem' -CAkey " + q +
               "ca.key' -CAcreateserial -extfile " + q + "server.ext' -out " + q + "server.pem'",
       }) {
    if (Status s = Shell(line, log); !s.ok()) return s.error();
  }

  p->https_port_ = FreePort();
  p->http_port_ = FreePort();
  std::string site = ReadAll(DeployedSiteFile());
  const std::string https = "127.0.0.1:" + std::to_string(p->https_port_);
  const std::string http = "127.0.0.1:" + std::to_string(p->http_port_);
  const std::pair<std::string, std::string> edits[] = {
      {"listen 443 ssl http2;", "listen " + https + " ssl http2;"},
      {"listen [::]:443 ssl http2;", ""},
      {"listen 80;", "listen " + http + ";"},
      {"listen [::]:80;", ""},
      {"/etc/letsencrypt/live/fleet.example.org/fullchain.pem", dir + "/server.pem"},
      {"/etc/letsencrypt/live/fleet.example.org/privkey.pem", dir + "/server.key"},
      {"server 127.0.0.1:8750;", "server 127.0.0.1:" + std::to_string(upstream_port) + ";"},
  };
  for (const auto& [from, to] : edits) {
    if (Status s = ReplaceOnce(&site, from, to); !s.ok()) return s.error();
  }
  for (size_t at; (at = site.find("fleet.example.org")) != std::string::npos;) {
    site.replace(at, 17, "localhost");
  }
  std::ofstream(dir + "/pipette.conf") << site;

  fs::create_directories(dir + "/tmp");
  std::ofstream conf(dir + "/nginx.conf");
  // As root nginx's workers would run as nobody, who cannot write the temporary folders here.
  if (::geteuid() == 0) conf << "user root;\n";
  conf << "worker_processes " << workers << ";\n"
       << "pid " << dir << "/nginx.pid;\n"
       << "error_log " << dir << "/error.log warn;\n"
       << "worker_rlimit_nofile 16384;\n"
       << "events { worker_connections 8192; }\n"
       << "http {\n"
       << "  access_log off;\n"
       << "  client_body_temp_path " << dir << "/tmp/body;\n"
       << "  proxy_temp_path " << dir << "/tmp/proxy;\n"
       << "  fastcgi_temp_path " << dir << "/tmp/fastcgi;\n"
       << "  uwsgi_temp_path " << dir << "/tmp/uwsgi;\n"
       << "  scgi_temp_path " << dir << "/tmp/scgi;\n"
       << "  include " << dir << "/pipette.conf;\n"
       << "}\n";
  conf.close();

  const std::string error_log = dir + "/error.log";
  const std::string conf_path = dir + "/nginx.conf";
  const pid_t pid = ::fork();
  if (pid < 0) return MakeError("cannot fork nginx");
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execlp("nginx", "nginx", "-p", dir.c_str(), "-e", error_log.c_str(), "-c",
             conf_path.c_str(), "-g", "daemon off;", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  p->pid_ = pid;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!Accepts(p->https_port_)) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      p->pid_ = -1;
      std::string text = ReadAll(error_log);
      if (text.size() > 800) text = text.substr(text.size() - 800);
      return MakeError("nginx exited at start: " + text);
    }
    if (std::chrono::steady_clock::now() > until) {
      return MakeError("nginx did not listen on " + https + " within 15 s: " + ReadAll(error_log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return p;
}

NginxProxy::~NginxProxy() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGQUIT);
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(-pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

std::string NginxProxy::url() const { return "https://localhost:" + std::to_string(https_port_); }

std::string NginxProxy::error_log() const { return ReadAll(dir_ + "/error.log"); }

}  // namespace pipette::testing
