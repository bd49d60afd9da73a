// A real PostgreSQL server for tests (no mocks): started by this test process on first use,
// from the Debian `postgresql` package's binaries, in a temporary folder, on a free TCP port on
// 127.0.0.1 (trust authentication, fsync off), and stopped (`pg_ctl stop -m immediate`) and
// deleted at process exit, or by a small reaper process when this one dies without exiting
// (killed by a test timeout). As root, the server runs as the unprivileged `postgres` user.
//
// Thread-safety: all functions may be called from any thread (one mutex).
#pragma once

#include <string>

#include "pipette/status.h"

namespace pipette::testing {

// The URL ("postgresql://pipette@127.0.0.1:<port>/t<n>") of a new, empty database on the test
// server, starting the server on the first call. Errors say why no server can run (binaries
// missing: "install the postgresql package (scripts/deps.sh --test)"; initdb or start failed,
// with the last line of its log). Tests skip on such an error.
Result<std::string> FreshPostgresDatabase();

// Stops the test server at once (`pg_ctl stop -m immediate`: connections drop mid-request) and
// starts it again on the same port with the same data, so a test can take the database away.
// Errors: no server started yet (call FreshPostgresDatabase first), pg_ctl failed.
Status StopTestPostgres();
Status StartTestPostgres();

}  // namespace pipette::testing
