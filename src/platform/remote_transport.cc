#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "platform/transport_impl.h"

namespace pipette {

std::string LastLine(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) last = line;
  }
  return last;
}

RemoteTransport::RemoteTransport(DeviceAddress address, TransportOptions options,
                                 std::string default_dir)
    : address_(std::move(address)), options_(options) {
  dir_ = address_.dir.empty() ? std::move(default_dir) : address_.dir;
}

Result<DeviceCommand> RemoteTransport::Shell(const std::string& command,
                                             std::chrono::milliseconds timeout,
                                             const std::string& stdin_path) {
  const std::string wrapped = "sh -c " + ShellQuote("{ " + command + "\n}; printf '" +
                                                    "\\n@@pipette-exit=%s\\n' \"$?\"");
  auto run = RunCommand(ClientArgv(wrapped), timeout, stdin_path);
  if (!run) return Error{run.error().message, "device"};
  if (run->timed_out) {
    return MakeError(Name() + " did not answer within " + std::to_string(timeout.count() / 1000) +
                         " s (the device or its link stalled); check it and try again",
                     "device");
  }
  const size_t at = run->out.rfind(kExitSentinel);
  if (at == std::string::npos) return LinkError(*run);
  DeviceCommand c;
  c.exit_code = std::atoi(run->out.c_str() + at + std::char_traits<char>::length(kExitSentinel));
  c.out = run->out.substr(0, at);
  c.err = std::move(run->err);
  return c;
}

Result<std::string> RemoteTransport::Connect() {
  // The folder made absolute there (a relative one is under the login's home), so that every
  // path pipette names on the device means the same wherever a command starts.
  auto r = Shell("mkdir -p " + ShellQuote(dir_) + " && cd " + ShellQuote(dir_) +
                     " && pwd && uname -m",
                 options_.command_timeout);
  if (!r) return r.error();
  if (r->exit_code != 0) {
    return MakeError(Name() + ": cannot create pipette's folder " + dir_ + " there (" +
                         LastLine(r->err) + "); give a writable one with ?dir=PATH",
                     "device");
  }
  std::istringstream lines(r->out);
  std::string dir, arch;
  std::getline(lines, dir);
  std::getline(lines, arch);
  if (dir.empty() || dir[0] != '/' || arch.empty()) {
    return MakeError(Name() + ": `pwd` and `uname -m` printed nothing usable there", "device");
  }
  dir_ = dir;
  return arch;
}

Result<DeviceCommand> RemoteTransport::Run(const std::vector<std::string>& argv) {
  std::string command;
  for (const auto& a : argv) command.append(command.empty() ? "" : " ").append(ShellQuote(a));
  return Shell(command, options_.command_timeout);
}

Result<std::string> RemoteTransport::Install(const std::string& local_path,
                                             const std::string& sha256, const std::string& kind,
                                             const std::string& name, bool executable) {
  namespace fs = std::filesystem;
  const std::string folder = dir_ + "/" + kind + "/" + sha256;
  const std::string final_path = folder + "/" + name;
  std::error_code ec;
  const uint64_t size = fs::file_size(local_path, ec);
  if (ec) return MakeError("cannot read " + local_path + ": " + ec.message());
  auto probe = Shell("mkdir -p " + ShellQuote(folder) + " && if [ -f " + ShellQuote(final_path) +
                         " ]; then echo present; else df -Pk " + ShellQuote(folder) +
                         " | tail -n 1; fi",
                     options_.command_timeout);
  if (!probe) return probe.error();
  if (probe->exit_code != 0) {
    return MakeError(Name() + ": cannot create " + folder + " (" + LastLine(probe->err) + ")",
                     "device");
  }
  const std::string seen = LastLine(probe->out);
  if (seen == "present") return final_path;
  // df -Pk: Filesystem 1024-blocks Used Available Capacity Mounted-on
  std::istringstream fields(seen);
  std::string fs_name, blocks, used, available;
  fields >> fs_name >> blocks >> used >> available;
  if (!available.empty() && std::all_of(available.begin(), available.end(), ::isdigit)) {
    const uint64_t free_bytes = std::stoull(available) * 1024;
    // 16 MiB to spare: a device with its storage full misbehaves in other ways.
    if (free_bytes < size + (16ull << 20)) {
      return MakeError(Name() + " has " + std::to_string(free_bytes >> 20) + " MiB free in " +
                           dir_ + " but " + name + " needs " + std::to_string(size >> 20) +
                           " MiB; free some space there or give another folder with ?dir=PATH",
                       "device");
    }
  }
  const std::string tmp = final_path + ".part-" + std::to_string(getpid());
  const Status pushed = Push(local_path, tmp);
  if (!pushed) {
    Shell("rm -f " + ShellQuote(tmp), options_.command_timeout);
    return pushed.error();
  }
  auto done = Shell((executable ? "chmod 755 " + ShellQuote(tmp) + " && " : std::string()) +
                        "mv -f " + ShellQuote(tmp) + " " + ShellQuote(final_path),
                    options_.command_timeout);
  if (!done || done->exit_code != 0) {
    Shell("rm -f " + ShellQuote(tmp), options_.command_timeout);
    if (!done) return done.error();
    return MakeError(Name() + ": cannot put " + name + " in place (" + LastLine(done->err) + ")",
                     "device");
  }
  return final_path;
}

Error RemoteTransport::OutOfSpace(const std::string& what) const {
  return MakeError(Name() + " ran out of space copying " + what +
                       " (nothing was kept); free some space there or give another folder "
                       "with ?dir=PATH",
                   "device");
}

Status RemoteTransport::Fetch(const std::string& device_path, const std::string& local_path) {
  return Pull(device_path, local_path);
}

Result<ChildProcess> RemoteTransport::Start(const std::vector<std::string>& argv,
                                            const std::string& stderr_path) {
  std::string command = "cd " + ShellQuote(dir_) + " && exec";
  for (const auto& a : argv) command.append(" ").append(ShellQuote(a));
  const auto client = ClientArgv("sh -c " + ShellQuote(command));
  return ChildProcess::Start(client, stderr_path);
}

Status RemoteTransport::KillGroup(int pgid) {
  if (pgid <= 1) return Status::Ok();
  const std::string id = std::to_string(pgid);
  auto r = Shell("kill -9 -" + id + " 2>/dev/null; kill -9 " + id + " 2>/dev/null; true",
                 options_.command_timeout);
  if (!r) return r.error();
  return Status::Ok();
}

}  // namespace pipette
