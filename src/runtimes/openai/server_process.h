// An OpenAI-compatible server that pipette starts itself (llama-server, vLLM, ...), run as a child
// process with all its output in a log file, and waited for until it serves.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "pipette/status.h"
#include "platform/process.h"

namespace pipette {

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0). Another
// process may take it before the caller binds it: good enough to give a server its port.
// Errors: no socket could be bound (message names the reason).
Result<int> FreeLocalPort();

// Not thread-safe, except Pid(), which may be read from any thread. Move-only; the destructor
// stops a server that is still running (as Stop()).
class ServerProcess {
 public:
  // Starts argv[0] (a path, no PATH search) with argv, its stdout and stderr both written to
  // `log_path` (truncated first; empty: both go to our stderr), and waits until it serves at
  // `base_url` ("http://127.0.0.1:8080"): GET /health answers 200 (llama-server answers 503 while
  // loading), or, where /health does not exist, GET /v1/models answers 2xx. Polls every 10 ms at
  // first, backing off to 250 ms. Errors (stage "start"; the server is stopped before returning):
  // argv[0] is missing or not executable; the server ended before it served (how it ended and the
  // last line of its log); it did not serve within `ready_timeout` (what it last answered); the
  // user interrupted pipette (platform/interrupt.h).
  static Result<ServerProcess> Start(const std::vector<std::string>& argv,
                                     const std::string& base_url, const std::string& log_path,
                                     std::chrono::milliseconds ready_timeout);

  ServerProcess(ServerProcess&&) noexcept;
  ServerProcess& operator=(ServerProcess&&) noexcept;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess();

  // The server's process id; it leads its own process group. -1 after a move. Start() does not
  // make it platform/interrupt.h's target (the caller decides what Ctrl-C stops).
  pid_t Pid() const { return pid_; }

  // Time from starting the process to its first ready answer, ms (DESIGN.md 4.3 `load_time` when
  // pipette starts the server).
  double ready_ms() const { return ready_ms_; }
  const std::string& log_path() const { return log_path_; }

  // Whether the server process is still running (an ended one is not reaped by this call).
  bool Running() const;

  // Stops the server: SIGTERM to its process group, up to `grace` for it to exit, then SIGKILL
  // (helpers it started in its group, such as vLLM's engine processes, go with it). Returns how
  // it ended; calling it again returns the same.
  ExitInfo Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

 private:
  ServerProcess(std::unique_ptr<ChildProcess> child, std::string log_path);

  std::unique_ptr<ChildProcess> child_;
  pid_t pid_ = -1;
  std::string log_path_;
  double ready_ms_ = 0;
  bool stopped_ = false;
  ExitInfo exit_;
};

}  // namespace pipette
