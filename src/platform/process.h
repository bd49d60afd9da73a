// Child processes: the runtime driver and llama.cpp's tools run as separate processes
// (DESIGN.md 2) so that their memory is their own and a crash cannot take the harness down.
// POSIX implementation in process_posix.cc.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette {

// How a child ended.
struct ExitInfo {
  bool exited = false;    // true: normal exit with `code`
  int code = 0;
  bool signaled = false;  // true: killed by `signal`
  int signal = 0;
  // "exit code 3" or "killed by signal 9 (SIGKILL)".
  std::string Describe() const;
};

// A child with its stdin/stdout as pipes to us and its stderr captured to a file (so a chatty
// runtime can never block on a full pipe). The child runs in its own process group (a terminal's
// Ctrl-C reaches only us; platform/interrupt.h decides) and is killed if we die. Move-only; the destructor kills (SIGKILL) and reaps a
// child that is still running. Not thread-safe, except Pid() and Kill(), which may be called from
// any thread while another thread reads or writes.
class ChildProcess {
 public:
  // Starts argv[0] (a path; no PATH search) with argv. `stderr_path` receives the child's stderr
  // (truncated first); empty means inherit ours. Errors: the program does not exist or is not
  // executable (message names it), pipes or fork fail.
  static Result<ChildProcess> Start(const std::vector<std::string>& argv,
                                    const std::string& stderr_path);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t Pid() const { return pid_; }

  // Writes `line` plus '\n' to the child's stdin. Errors: the child closed its stdin (it died).
  Status WriteLine(const std::string& line);

  // Reads one '\n'-terminated line from the child's stdout (without the '\n'). Returns
  // std::nullopt at end of file (the child exited or closed stdout), after `timeout` without a
  // complete line (TimedOut() is then true), or when the line exceeds kMaxLineBytes (LineTooLong()).
  std::optional<std::string> ReadLine(
      std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  bool TimedOut() const { return timed_out_; }
  bool LineTooLong() const { return line_too_long_; }
  static constexpr size_t kMaxLineBytes = 256u << 20;  // 256 MiB: far above any real reply

  // Closes our end of the child's stdin (the child sees end of input).
  void CloseStdin();

  // Waits for the child to end. With a timeout, returns std::nullopt if it is still running then.
  std::optional<ExitInfo> Wait(std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  // Sends `sig` to the child if it is still running.
  void Kill(int sig);

 private:
  ChildProcess() = default;
  void Close();

  pid_t pid_ = -1;
  int in_fd_ = -1;   // child's stdin (we write)
  int out_fd_ = -1;  // child's stdout (we read)
  std::string buffer_;
  bool timed_out_ = false;
  bool line_too_long_ = false;
  bool reaped_ = false;
  ExitInfo exit_;
};

// Runs a tool to completion, capturing stdout and stderr together into `output` (may be null).
// Returns its exit info. Errors: it could not be started.
Result<ExitInfo> RunTool(const std::vector<std::string>& argv, std::string* output);

// What RunCommand saw: the exit, stdout and stderr apart, and whether the time ran out.
struct CommandRun {
  ExitInfo exit;
  std::string out;         // stdout, whole
  std::string err;         // stderr, whole
  bool timed_out = false;  // killed (SIGKILL, its process group) after the timeout
};

// Runs argv (argv[0] a path; no PATH search) to completion with stdin read from `stdin_path`
// (empty: /dev/null), killing its process group when `timeout` passes first. Errors: it could not
// be started (the message names the program).
Result<CommandRun> RunCommand(const std::vector<std::string>& argv,
                              std::chrono::milliseconds timeout,
                              const std::string& stdin_path = "");

// The full path of `name` on $PATH (a name with a '/' is returned as it is), or "" when absent.
std::string FindOnPath(const std::string& name);

// Directory of the running executable (from /proc/self/exe).
std::string ExecutableDir();

}  // namespace pipette
