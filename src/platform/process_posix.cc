#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "platform/process.h"

namespace pipette {
namespace {

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

ExitInfo FromWaitStatus(int status) {
  ExitInfo e;
  if (WIFEXITED(status)) {
    e.exited = true;
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.signal = WTERMSIG(status);
  }
  return e;
}

// argv as execv(2) takes it; the strings stay owned by `argv`.
std::vector<char*> ExecArgv(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  return args;
}

}  // namespace

std::string ExitInfo::Describe() const {
  if (signaled) return "killed by signal " + std::to_string(signal) + " (" + SignalName(signal) + ")";
  if (exited) return "exit code " + std::to_string(code);
  return "still running";
}

Result<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv,
                                         const std::string& stderr_path) {
  if (argv.empty()) return MakeError("no program to start");
  if (access(argv[0].c_str(), X_OK) != 0) {
    return MakeError(argv[0] + " is missing or not executable; rebuild with scripts/build.sh");
  }
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) return MakeError(std::string("pipe: ") + strerror(errno));
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    return MakeError(std::string("pipe: ") + strerror(errno));
  }
  int err_fd = -1;
  if (!stderr_path.empty()) {
    err_fd = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (err_fd < 0) return MakeError("cannot write " + stderr_path + ": " + strerror(errno));
  }
  std::vector<char*> args = ExecArgv(argv);

  const pid_t pid = fork();
  if (pid < 0) return MakeError(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);  // own process group: a terminal's Ctrl-C reaches pipette, which decides
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // no orphaned runtime if pipette is killed
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    if (err_fd >= 0) dup2(err_fd, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  if (err_fd >= 0) close(err_fd);
  ChildProcess c;
  c.pid_ = pid;
  c.in_fd_ = in_pipe[1];
  c.out_fd_ = out_pipe[0];
  return c;
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept { *this = std::move(o); }

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    Close();
    pid_ = o.pid_;
    in_fd_ = o.in_fd_;
    out_fd_ = o.out_fd_;
    buffer_ = std::move(o.buffer_);
    reaped_ = o.reaped_;
    exit_ = o.exit_;
    o.pid_ = -1;
    o.in_fd_ = o.out_fd_ = -1;
    o.reaped_ = true;
  }
  return *this;
}

ChildProcess::~ChildProcess() { Close(); }

void ChildProcess::Close() {
  if (in_fd_ >= 0) close(in_fd_);
  if (out_fd_ >= 0) close(out_fd_);
  in_fd_ = out_fd_ = -1;
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
    reaped_ = true;
  }
}

Status ChildProcess::WriteLine(const std::string& line) {
  std::string data = line + "\n";
  const char* p = data.data();
  size_t left = data.size();
  // A dead child makes write() raise SIGPIPE; the harness must survive it.
  signal(SIGPIPE, SIG_IGN);
  while (left > 0) {
    const ssize_t n = write(in_fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError(std::string("runtime process stopped accepting input: ") + strerror(errno));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

std::optional<std::string> ChildProcess::ReadLine(
    std::optional<std::chrono::milliseconds> timeout) {
  timed_out_ = line_too_long_ = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout.value_or(std::chrono::milliseconds(0));
  for (;;) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (buffer_.size() > kMaxLineBytes) {
      line_too_long_ = true;
      return std::nullopt;
    }
    if (timeout) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out_ = true;
        return std::nullopt;
      }
      pollfd pfd{out_fd_, POLLIN, 0};
      const int r = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
      if (r < 0 && errno != EINTR) return std::nullopt;
      if (r <= 0) continue;
    }
    char chunk[65536];
    const ssize_t n = read(out_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void ChildProcess::CloseStdin() {
  if (in_fd_ >= 0) close(in_fd_);
  in_fd_ = -1;
}

std::optional<ExitInfo> ChildProcess::Wait(std::optional<std::chrono::milliseconds> timeout) {
  if (reaped_) return exit_;
  const auto deadline = std::chrono::steady_clock::now() + timeout.value_or(std::chrono::milliseconds(0));
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, timeout ? WNOHANG : 0);
    if (r == pid_) {
      reaped_ = true;
      exit_ = FromWaitStatus(status);
      return exit_;
    }
    if (r < 0 && errno != EINTR) {
      reaped_ = true;
      return exit_;
    }
    if (timeout && std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    if (timeout) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void ChildProcess::Kill(int sig) {
  if (pid_ > 0 && !reaped_) kill(pid_, sig);
}

Result<ExitInfo> RunTool(const std::vector<std::string>& argv, std::string* output) {
  char tmpl[] = "/tmp/pipette-tool-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) return MakeError(std::string("mkstemp: ") + strerror(errno));
  close(fd);
  const std::string log_path = tmpl;
  auto child = ChildProcess::Start(argv, log_path);
  if (!child.ok()) {
    unlink(log_path.c_str());
    return child.error();
  }
  child->CloseStdin();
  std::string out;
  while (auto line = child->ReadLine()) out += *line + "\n";
  const ExitInfo exit = *child->Wait();
  std::ifstream err(log_path);
  std::stringstream ss;
  ss << err.rdbuf();
  unlink(log_path.c_str());
  if (output) *output = out + ss.str();
  return exit;
}

Result<CommandRun> RunCommand(const std::vector<std::string>& argv,
                              std::chrono::milliseconds timeout, const std::string& stdin_path) {
  if (argv.empty()) return MakeError("no program to run");
  if (access(argv[0].c_str(), X_OK) != 0) return MakeError(argv[0] + " is missing or not executable");
  const int in_fd = open(stdin_path.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in_fd < 0) return MakeError("cannot read " + stdin_path + ": " + strerror(errno));
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    close(in_fd);
    return MakeError(std::string("pipe: ") + strerror(errno));
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(in_fd);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return MakeError(std::string("pipe: ") + strerror(errno));
  }
  std::vector<char*> args = ExecArgv(argv);
  const pid_t pid = fork();
  if (pid < 0) return MakeError(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(in_fd, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in_fd);
  close(out_pipe[1]);
  close(err_pipe[1]);
  CommandRun run;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&run.out, &run.err};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      run.timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      break;
    }
    const int r = poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char chunk[65536];
      const ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
      if (n > 0) {
        sinks[i]->append(chunk, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.exit = FromWaitStatus(status);
  return run;
}

std::string FindOnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

std::string ExecutableDir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.rfind('/'));
}

}  // namespace pipette
