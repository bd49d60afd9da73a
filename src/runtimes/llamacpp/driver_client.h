// Harness side of the `llamacpp` runtime: starts pipette-llamacpp-driver as a child process and
// exchanges JSON lines with it (protocol.h, docs/driver-protocol.md).
//
// A driver that crashes, is killed or stops answering never takes the harness down: every call
// returns an Error whose stage is the stage being run and whose message says how the process
// ended ("runtime process killed by signal 9 (SIGKILL) during decode").
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipette/status.h"
#include "platform/process.h"
#include "platform/transport.h"

namespace pipette {

// Path of the driver binary: $PIPETTE_DRIVER if set, else pipette-llamacpp-driver beside the
// running executable, else in the build tree (tests).
std::string DefaultDriverPath();

// Not thread-safe, except Pid() and Kill().
class LlamaCppDriver {
 public:
  // Starts the driver with its stderr going to `log_path` and waits up to `timeout` for its
  // ready line. `timeout` also bounds every later Call(): a runtime that does not answer in time
  // is killed and the call fails naming the stage (a hung or stopped runtime never hangs pipette).
  // `transport` (may be null: this machine) is where the driver runs; `driver_path` is then a
  // path on that device. The driver announces its pid (its process group) there in its ready
  // line; every way the driver can end here also ends that group there (KillGroup), so a lost
  // link or a timeout never leaves a driver running on the device.
  static Result<std::unique_ptr<LlamaCppDriver>> Start(
      const std::string& driver_path, const std::string& log_path,
      std::chrono::milliseconds timeout = std::chrono::minutes(10),
      std::shared_ptr<Transport> transport = nullptr);
  ~LlamaCppDriver();

  // Sends `request` and returns the reply when it has "ok": true. A reply with "ok": false
  // becomes its error (stage from the reply, else `stage`); a dead driver becomes an error naming
  // how it ended, during `stage`.
  Result<nlohmann::json> Call(const nlohmann::json& request, const std::string& stage);

  // The model's tokenization of `text`, BOS included when the model adds one (stage "input").
  Result<std::vector<int32_t>> Tokenize(const std::string& text);

  // The local process: the driver itself on this machine, else the ssh or adb client.
  pid_t Pid() const { return child_.Pid(); }
  // The driver's pid (and process group) on its device, as its ready line said.
  int DevicePid() const { return device_pid_; }
  void Kill(int sig) { child_.Kill(sig); }

  // Asks the driver to quit and reaps it (SIGKILL after `grace_ms`). Returns how it ended.
  ExitInfo Quit(int grace_ms = 5000);

  // The last `max_bytes` of the driver's stderr (the llama.cpp log).
  std::string StderrTail(size_t max_bytes = 4000) const;

 private:
  LlamaCppDriver(ChildProcess child, std::string log_path, std::chrono::milliseconds timeout,
                 std::shared_ptr<Transport> transport);
  Error Died(const std::string& stage);
  Result<std::string> ReadReply(const std::string& stage);
  // Ends the driver's process group on its device (remote transports only).
  void EndOnDevice();

  ChildProcess child_;
  std::shared_ptr<Transport> transport_;
  int device_pid_ = -1;
  std::string log_path_;
  std::chrono::milliseconds timeout_;
  bool quit_ = false;
};

// One reply line as Call() reads it: the reply object when it has "ok": true; else the Error it
// carries (its "error" and "stage" when they are text; `stage` otherwise), or "runtime process
// sent an unreadable reply" for a line that is not a JSON object.
Result<nlohmann::json> ReplyFromLine(std::string_view line, const std::string& stage);

// A driver with a model loaded: the load reply (docs/driver-protocol.md) and the time from
// starting the process to the model being ready (DESIGN.md 4.3 `load_time`), ms.
struct LoadedDriver {
  std::unique_ptr<LlamaCppDriver> driver;
  nlohmann::json load_reply;
  double load_ms = 0;
};

// Starts the driver and loads `model` with `settings` (the `settings` object of the load request).
// `on_started` (may be empty) receives the pid before the load. Errors as Start() and Call().
// `extra` members are added to the load request ("sample_memory_ms"); `transport` as Start's.
Result<LoadedDriver> StartAndLoad(const std::string& driver_path, const std::string& log_path,
                                  std::chrono::milliseconds timeout, const std::string& model,
                                  const nlohmann::json& settings,
                                  const std::function<void(int pid)>& on_started = {},
                                  std::shared_ptr<Transport> transport = nullptr,
                                  const nlohmann::json& extra = nlohmann::json::object());

}  // namespace pipette
