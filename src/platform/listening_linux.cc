#include "platform/listening.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace pipette {
namespace {

// Inodes of the sockets listening on `port`, from /proc/net/tcp or tcp6: lines of
// "sl local_address rem_address st ... inode", local_address "ADDR:PORT" in hex, st 0A = LISTEN.
void ListeningInodes(const std::string& table, int port, std::set<std::string>& inodes) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string sl, local, remote, state, skip, inode;
    f >> sl >> local >> remote >> state;
    for (int i = 0; i < 5; ++i) f >> skip;  // tx:rx, tr:when, retrnsmt, uid, timeout
    f >> inode;
    const size_t colon = local.rfind(':');
    if (colon == std::string::npos || state != "0A") continue;
    if (std::stoi(local.substr(colon + 1), nullptr, 16) == port) inodes.insert(inode);
  }
}

}  // namespace

bool ListensOnPort(pid_t pid, int port) {
  std::set<std::string> inodes;
  ListeningInodes("/proc/net/tcp", port, inodes);
  ListeningInodes("/proc/net/tcp6", port, inodes);
  if (inodes.empty()) return false;
  std::error_code ec;
  for (const auto& fd : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(pid) + "/fd", ec)) {
    const auto target = std::filesystem::read_symlink(fd.path(), ec);
    if (ec) continue;
    const std::string t = target.string();  // "socket:[12345]"
    if (t.rfind("socket:[", 0) == 0 && inodes.count(t.substr(8, t.size() - 9))) return true;
  }
  return false;
}

}  // namespace pipette
