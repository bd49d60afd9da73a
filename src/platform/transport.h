// Transports (DESIGN.md 8a): how pipette reaches the device a cell runs on. A transport copies
// files to the device, starts a process there with its stdin and stdout as pipes to us, runs a
// command to completion, reads a file back, and ends a process group there. Three
// implementations: local (this machine: a child process), ssh (OpenSSH's client, one multiplexed
// connection per device) and adb (`adb -s SERIAL push` / `shell`). Nothing above platform/
// knows which one is in use: the runtimes see a ChildProcess, the harness sees readings.
//
// Device addresses, as users write them (`--device`):
//   local                       this machine (the default)
//   ssh://[user@]host[:port]    through OpenSSH's client with BatchMode=yes (keys or an agent,
//                               never a password prompt); ~/.ssh/config applies, and
//                               $PIPETTE_SSH_CONFIG names another config file (ssh -F)
//   adb://SERIAL                through `adb -s SERIAL` (the adb on $PATH)
// Either remote form may end in "?dir=PATH": pipette's folder on the device (default:
// .cache/pipette-device under the login's home for ssh, /data/local/tmp/pipette for adb).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "pipette/status.h"
#include "platform/process.h"

namespace pipette {

enum class TransportKind { kLocal, kSsh, kAdb };

struct DeviceAddress {
  TransportKind kind = TransportKind::kLocal;
  std::string user;    // ssh: the login, "" = ssh's own default
  std::string host;    // ssh: host name or address ("[::1]" written as such in the URI)
  int port = 0;        // ssh: 0 = ssh's default (22 or the config's)
  std::string serial;  // adb: the device serial (`adb devices`)
  std::string dir;     // pipette's folder on the device; "" = the transport's default

  // The canonical URI: "local", "ssh://pi@board:2222", "adb://R58M12345" (dir= when given).
  std::string Uri() const;
};

// Parses `text` as above. Errors (one line, naming the text and the forms that are accepted):
// an unknown scheme, an empty host or serial, a port that is not 1..65535, characters a shell or
// ssh would read as options (a host or serial starting with '-', spaces, quotes).
Result<DeviceAddress> ParseDeviceAddress(const std::string& text);

// Bounds of a transport's commands.
struct TransportOptions {
  // Longest wait for one short command on the device (a probe, a check, a kill), and for ssh's
  // connection to come up. A stalled device fails the command after this, never hangs pipette.
  std::chrono::milliseconds command_timeout{std::chrono::seconds(60)};
  // Longest wait for copying one file (a model of several GB over USB 2 takes minutes).
  std::chrono::milliseconds copy_timeout{std::chrono::minutes(60)};
};

// A command run to completion on the device.
struct DeviceCommand {
  int exit_code = 0;  // the command's own exit status on the device
  std::string out;    // its stdout
  std::string err;    // its stderr
};

// Thread-compatible: one transport per device, used by one cell at a time; Run and KillGroup may
// be called from another thread while a started process runs.
class Transport {
 public:
  virtual ~Transport() = default;

  virtual const DeviceAddress& Address() const = 0;
  // True when the device is this machine: its processes are ours to see (/proc/<pid>), and host
  // paths are device paths.
  virtual bool IsHost() const = 0;
  // pipette's folder on the device (created by Connect, and an absolute path after it).
  virtual std::string DeviceDir() const = 0;

  // Reaches the device and prepares pipette's folder there (a relative ?dir= is under the
  // login's home); returns `uname -m` of the device ("aarch64"). Errors, one line each: unreachable, authentication refused, an unknown host key
  // (with how to accept it; never accepted silently), no such adb device, a stalled device.
  virtual Result<std::string> Connect() = 0;

  // Runs argv on the device (each argument passed as it is: quoted for the device's shell) and
  // returns its exit status and output. A non-zero exit of the command is not an Error; a
  // transport failure or the timeout is (stage "device").
  virtual Result<DeviceCommand> Run(const std::vector<std::string>& argv) = 0;

  // Copies the host file `local_path`, whose SHA-256 is `sha256`, to
  // <DeviceDir>/<kind>/<sha256>/<name> once: a file already there under that digest is not copied
  // again. Free space on the device is checked first ("the device has X free in DIR, NAME needs
  // Y"), and the copy is written under a temporary name and renamed when whole, so an interrupted
  // or failed copy leaves nothing that could be taken for the file. `executable` sets mode 0755.
  // Returns the device path.
  virtual Result<std::string> Install(const std::string& local_path, const std::string& sha256,
                                      const std::string& kind, const std::string& name,
                                      bool executable) = 0;

  // Copies the device file `device_path` to the host file `local_path` (replaced).
  virtual Status Fetch(const std::string& device_path, const std::string& local_path) = 0;

  // Starts argv on the device with its stdin and stdout as the returned process's pipes and its
  // stderr written to the host file `stderr_path` (truncated first). The returned ChildProcess
  // is the local end (the process itself for local, the ssh or adb client otherwise): killing it
  // ends the link, not necessarily the device process; KillGroup does that.
  virtual Result<ChildProcess> Start(const std::vector<std::string>& argv,
                                     const std::string& stderr_path) = 0;

  // Ends the process group `pgid` on the device with SIGKILL. Not an error when it is gone.
  virtual Status KillGroup(int pgid) = 0;
};

// Opens the transport for `address` (nothing is contacted until Connect). Errors: the client
// program (ssh, adb) is not installed, with the Debian package that has it.
Result<std::shared_ptr<Transport>> OpenTransport(const DeviceAddress& address,
                                                 const TransportOptions& options = {});

// `arg` quoted for a POSIX shell (single quotes): the device's shell sees it as one word.
std::string ShellQuote(const std::string& arg);

}  // namespace pipette
