// A TCP port on 127.0.0.1 that nothing listens on, for a server a test starts (PostgreSQL,
// nginx, sshd, pipette serve).
#pragma once

namespace pipette::testing {

// A port the kernel just handed out and released; 0 when no socket could be bound. Another
// process may take it before the caller binds it, which the servers' own start-up reports.
int FreePort();

}  // namespace pipette::testing
