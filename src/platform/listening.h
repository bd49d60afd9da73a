// Which process listens on a local TCP port (Linux: /proc/net/tcp{,6} and /proc/PID/fd).
#pragma once

#include <sys/types.h>

namespace pipette {

// True when `pid` holds a socket listening on TCP `port` (IPv4 or IPv6, any address); false when
// it holds none. Sockets of its children are not its own. Returns false too when /proc cannot be
// read (a caller that must be sure treats false as "not shown").
bool ListensOnPort(pid_t pid, int port);

}  // namespace pipette
