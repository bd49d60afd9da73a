#include "runtimes/openai/server_process.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>
#include <utility>

#include "platform/interrupt.h"
#include "runtimes/openai/http.h"
#include "runtimes/openai/openai_client.h"

namespace pipette {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr char kStage[] = "start";

// The last non-empty line of the log (its last 4 KiB), on one line, "" when there is none.
std::string LastLogLine(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r' || tail.back() == ' ')) {
    tail.pop_back();
  }
  std::string line =
      tail.substr(tail.find_last_of('\n') == std::string::npos ? 0 : tail.find_last_of('\n') + 1);
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line;
}

std::string Basename(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

enum class ChildState { kRunning, kEnded, kGone };

// Whether the child has ended, without reaping it: while it is an unreaped zombie its process
// group id cannot be reused, so signalling the group stays safe. kGone: it is no longer our child
// to wait for (reaped elsewhere); its group must not be signalled.
ChildState Check(pid_t pid, bool block) {
  siginfo_t info{};
  const int options = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
  while (waitid(P_PID, static_cast<id_t>(pid), &info, options) != 0) {
    if (errno != EINTR) return ChildState::kGone;
  }
  return info.si_pid == pid ? ChildState::kEnded : ChildState::kRunning;
}

// Where readiness polling stands.
struct Probe {
  std::string path = "/health";  // becomes /v1/models on a server without /health
  std::string last_answer = "nothing answered";
};

// One readiness request: true when the server serves.
bool ServesNow(HttpClient& http, const std::string& root, milliseconds timeout, Probe* probe) {
  const HttpResponse r = http.Get(root + probe->path, timeout);
  if (r.failure != TransportFailure::kNone) {
    probe->last_answer = r.failure_detail;
    return false;
  }
  if (probe->path == "/health" && r.status == 200) return true;
  if (probe->path == "/v1/models" && r.ok()) return true;
  if (probe->path == "/health" && (r.status == 404 || r.status == 405)) {
    probe->path = "/v1/models";
    return ServesNow(http, root, timeout, probe);
  }
  probe->last_answer = fmt::format("GET {} answered HTTP {}", probe->path, r.status);
  return false;
}

}  // namespace

Result<int> FreeLocalPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return MakeError(std::string("cannot open a TCP socket: ") + strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // the kernel picks a free port
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    close(fd);
    return MakeError(std::string("cannot find a free TCP port on 127.0.0.1: ") + strerror(err));
  }
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

ServerProcess::ServerProcess(std::unique_ptr<ChildProcess> child, std::string log_path)
    : child_(std::move(child)), pid_(child_->Pid()), log_path_(std::move(log_path)) {}

ServerProcess::ServerProcess(ServerProcess&& o) noexcept
    : child_(std::move(o.child_)),
      pid_(std::exchange(o.pid_, -1)),
      log_path_(std::move(o.log_path_)),
      ready_ms_(o.ready_ms_),
      stopped_(o.stopped_),
      exit_(o.exit_) {}

ServerProcess& ServerProcess::operator=(ServerProcess&& o) noexcept {
  if (this != &o) {
    Stop();
    child_ = std::move(o.child_);
    pid_ = std::exchange(o.pid_, -1);
    log_path_ = std::move(o.log_path_);
    ready_ms_ = o.ready_ms_;
    stopped_ = o.stopped_;
    exit_ = o.exit_;
  }
  return *this;
}

ServerProcess::~ServerProcess() { Stop(); }

Result<ServerProcess> ServerProcess::Start(const std::vector<std::string>& argv,
                                           const std::string& base_url, const std::string& log_path,
                                           milliseconds ready_timeout) {
  if (argv.empty()) return MakeError("no server program to start", kStage);
  if (access(argv[0].c_str(), X_OK) != 0) {
    return MakeError(argv[0] + " is missing or not executable; check the server's path", kStage);
  }
  Result<std::string> root = NormalizeBaseUrl(base_url);
  if (!root.ok()) return root.error();
  Result<HttpClient> http = HttpClient::Create();
  if (!http.ok()) return Error{http.error().message, kStage};
  http->SetAbortCheck([] { return Interrupted(); });

  // ChildProcess pipes the child's stdout to us, and nobody reads it while the server runs: a
  // chatty server would block on a full pipe. The shell points stdout at the log (stderr) and
  // then becomes the server (exec), so Pid() is the server's own.
  std::vector<std::string> wrapped = {"/bin/sh", "-c", "exec \"$@\" </dev/null 1>&2", "sh"};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  const auto started = steady_clock::now();
  Result<ChildProcess> child = ChildProcess::Start(wrapped, log_path);
  if (!child.ok()) return Error{child.error().message, kStage};
  child->CloseStdin();
  ServerProcess server(std::make_unique<ChildProcess>(std::move(*child)), log_path);

  const std::string name = Basename(argv[0]);
  const std::string see_log = log_path.empty() ? "" : "; see " + log_path;
  const auto deadline = started + ready_timeout;
  Probe probe;
  for (milliseconds delay(10);; delay = std::min(delay * 2, milliseconds(250))) {
    if (Check(server.pid_, /*block=*/false) != ChildState::kRunning) {
      const ExitInfo exit = server.Stop();
      const std::string last = log_path.empty() ? "" : LastLogLine(log_path);
      return MakeError(
          fmt::format("{} ended before it served at {} ({}){}{}", name, *root, exit.Describe(),
                      last.empty() ? "" : "; last log line: '" + last + "'", see_log),
          kStage);
    }
    if (Interrupted()) {
      server.Stop();
      return MakeError("interrupted by the user while " + name + " was starting", kStage);
    }
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0) {
      server.Stop();
      return MakeError(fmt::format("{} did not serve at {} within {:g} s ({}){}", name, *root,
                                   static_cast<double>(ready_timeout.count()) / 1000.0,
                                   probe.last_answer, see_log),
                       kStage);
    }
    if (ServesNow(*http, *root, std::min(left, milliseconds(2000)), &probe)) break;
    std::this_thread::sleep_for(std::min(delay, left));
  }
  server.ready_ms_ =
      std::chrono::duration<double, std::milli>(steady_clock::now() - started).count();
  return server;
}

bool ServerProcess::Running() const {
  return child_ && !stopped_ && Check(child_->Pid(), /*block=*/false) == ChildState::kRunning;
}

ExitInfo ServerProcess::Stop(milliseconds grace) {
  if (!child_ || stopped_) return exit_;
  stopped_ = true;
  const pid_t pid = child_->Pid();
  if (Check(pid, /*block=*/false) == ChildState::kRunning) {
    ::kill(-pid, SIGTERM);
    const auto deadline = steady_clock::now() + grace;
    while (Check(pid, /*block=*/false) == ChildState::kRunning && steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    if (Check(pid, /*block=*/false) == ChildState::kRunning) ::kill(-pid, SIGKILL);
  }
  if (Check(pid, /*block=*/true) == ChildState::kEnded) {
    ::kill(-pid, SIGKILL);  // helpers left in its group; the unreaped leader keeps the id ours
  }
  exit_ = child_->Wait().value_or(ExitInfo{});
  return exit_;
}

}  // namespace pipette
