#include "runtimes/llamacpp/driver_client.h"
#include "runtimes/llamacpp/protocol.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/json_depth.h"
#include "platform/file_tail.h"
#include "platform/interrupt.h"

namespace pipette {

std::string DefaultDriverPath() {
  if (const char* env = std::getenv("PIPETTE_DRIVER"); env && *env) return env;
  const std::string beside = ExecutableDir() + "/pipette-llamacpp-driver";
  if (access(beside.c_str(), X_OK) == 0) return beside;
#ifdef PIPETTE_BUILD_DRIVER_PATH
  return PIPETTE_BUILD_DRIVER_PATH;
#else
  return beside;
#endif
}

LlamaCppDriver::LlamaCppDriver(ChildProcess child, std::string log_path,
                               std::chrono::milliseconds timeout,
                               std::shared_ptr<Transport> transport)
    : child_(std::move(child)),
      transport_(std::move(transport)),
      log_path_(std::move(log_path)),
      timeout_(timeout) {
  device_pid_ = child_.Pid();
}

void LlamaCppDriver::EndOnDevice() {
  if (transport_ && !transport_->IsHost() && device_pid_ > 1) {
    transport_->KillGroup(device_pid_);
    device_pid_ = -1;
  }
}

LlamaCppDriver::~LlamaCppDriver() {
  if (!quit_) Quit(1000);
  SetInterruptTarget(0);
}

Result<std::unique_ptr<LlamaCppDriver>> LlamaCppDriver::Start(const std::string& driver_path,
                                                              const std::string& log_path,
                                                              std::chrono::milliseconds timeout,
                                                              std::shared_ptr<Transport> transport) {
  auto child = transport ? transport->Start({driver_path}, log_path)
                         : ChildProcess::Start({driver_path}, log_path);
  if (!child) return Error{child.error().message, "start"};
  std::unique_ptr<LlamaCppDriver> d(
      new LlamaCppDriver(std::move(*child), log_path, timeout, std::move(transport)));
  SetInterruptTarget(d->Pid());
  auto ready = d->ReadReply("start");
  if (!ready) return ready.error();
  const nlohmann::json line = ParseBoundedJson(*ready);
  if (line.is_object() && line.contains("pid") && line["pid"].is_number_integer()) {
    d->device_pid_ = line["pid"].get<int>();
  }
  return d;
}

Result<std::string> LlamaCppDriver::ReadReply(const std::string& stage) {
  auto line = child_.ReadLine(timeout_);
  if (line) return *line;
  if (child_.TimedOut() || child_.LineTooLong()) {
    child_.Kill(SIGKILL);
    child_.Wait();
    EndOnDevice();
    quit_ = true;
    if (Interrupted()) return MakeError("interrupted by the user during " + stage, stage);
    if (child_.LineTooLong()) {
      return MakeError("runtime process sent a reply longer than 256 MiB during " + stage +
                       " (killed)", stage);
    }
    return MakeError("runtime process did not answer within " +
                     std::to_string(timeout_.count() / 1000) + " s during " + stage +
                     " (killed); raise the request timeout (request_timeout_s) if the work "
                     "is that long",
                     stage);
  }
  return Died(stage);
}

Error LlamaCppDriver::Died(const std::string& stage) {
  auto exit = child_.Wait(std::chrono::milliseconds(2000));
  if (!exit) {
    child_.Kill(SIGKILL);
    exit = child_.Wait();
  }
  // On another device the local process is the link: tell a lost link from a dead driver.
  if (transport_ && !transport_->IsHost()) {
    if (auto alive = transport_->Run({"true"}); !alive) {
      quit_ = true;
      if (Interrupted()) return MakeError("interrupted by the user during " + stage, stage);
      return MakeError("lost the link to the device during " + stage + " (" +
                           alive.error().message + ")",
                       stage);
    }
  }
  EndOnDevice();
  quit_ = true;
  std::string tail = StderrTail(300);
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  const size_t nl = tail.rfind('\n');
  if (nl != std::string::npos) tail = tail.substr(nl + 1);
  if (Interrupted()) return MakeError("interrupted by the user during " + stage, stage);
  const bool remote = transport_ && !transport_->IsHost();
  std::string msg = remote ? "runtime process on " + transport_->Address().Uri() + " ended (" +
                                 exit->Describe() + " of its link) during " + stage
                           : "runtime process " + exit->Describe() + " during " + stage;
  if (!tail.empty() && exit->exited) msg += " (last log line: " + tail + ")";
  return MakeError(msg, stage);
}

Result<nlohmann::json> LlamaCppDriver::Call(const nlohmann::json& request,
                                            const std::string& stage) {
  if (quit_) return MakeError("runtime process is no longer running", stage);
  if (auto s = child_.WriteLine(request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)); !s) return Died(stage);
  const auto line = ReadReply(stage);
  if (!line) return line.error();
  return ReplyFromLine(*line, stage);
}

Result<nlohmann::json> ReplyFromLine(std::string_view line, const std::string& stage) {
  nlohmann::json reply = ParseBoundedJson(line);
  if (reply.is_discarded() || !reply.is_object()) {
    return MakeError("runtime process sent an unreadable reply during " + stage, stage);
  }
  const auto text = [&](const char* key, const std::string& otherwise) {
    const auto it = reply.find(key);
    return it != reply.end() && it->is_string() ? it->get<std::string>() : otherwise;
  };
  const auto ok = reply.find("ok");
  if (ok == reply.end() || !ok->is_boolean() || !ok->get<bool>()) {
    return MakeError(text("error", "unknown runtime error"), text("stage", stage));
  }
  return reply;
}

Result<std::vector<int32_t>> LlamaCppDriver::Tokenize(const std::string& text) {
  auto r = Call({{"cmd", "tokenize"}, {"text", text}, {"add_special", true}}, "input");
  if (!r) return r.error();
  auto reply = protocol::ReadReply<protocol::TokenizeReply>(*r, "input");
  if (!reply) return reply.error();
  return std::move(reply->tokens);
}

ExitInfo LlamaCppDriver::Quit(int grace_ms) {
  if (!quit_) {
    quit_ = true;
    if (child_.WriteLine(R"({"cmd":"quit"})").ok()) child_.ReadLine(std::chrono::milliseconds(grace_ms));
    child_.CloseStdin();
  }
  auto exit = child_.Wait(std::chrono::milliseconds(grace_ms));
  if (!exit) {
    child_.Kill(SIGKILL);
    exit = child_.Wait();
    EndOnDevice();
  }
  return *exit;
}

std::string LlamaCppDriver::StderrTail(size_t max_bytes) const {
  return ReadFileTail(log_path_, max_bytes);
}

Result<LoadedDriver> StartAndLoad(const std::string& driver_path, const std::string& log_path,
                                  std::chrono::milliseconds timeout, const std::string& model,
                                  const nlohmann::json& settings,
                                  const std::function<void(int pid)>& on_started,
                                  std::shared_ptr<Transport> transport, const nlohmann::json& extra) {
  const auto t0 = std::chrono::steady_clock::now();
  auto driver = LlamaCppDriver::Start(driver_path, log_path, timeout, std::move(transport));
  if (!driver) return driver.error();
  if (on_started) on_started((*driver)->Pid());
  nlohmann::json load = {{"cmd", "load"}, {"model", model}, {"settings", settings}};
  load.update(extra);
  auto reply = (*driver)->Call(load, "load");
  if (!reply) return reply.error();
  LoadedDriver out;
  out.driver = std::move(*driver);
  out.load_reply = std::move(*reply);
  out.load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace pipette
