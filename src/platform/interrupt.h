// Ctrl-C handling (DESIGN.md 9: "Ctrl-C in the middle of a suite ... no lost or corrupted data").
//
// Child processes run in their own process group, so a terminal's SIGINT reaches only pipette.
// pipette's handler records the interrupt and sends SIGKILL to the registered runtime process;
// the harness then sees the runtime end, records the cell as failed ("interrupted"), stores it
// and exits. A second SIGINT ends pipette at once (the default action).
#pragma once

#include <sys/types.h>

namespace pipette {

// Installs the handler for SIGINT, SIGTERM and SIGHUP (a closed terminal). Idempotent.
void InstallInterruptHandler();

// True once one of those signals arrived. Async-signal-safe, thread-safe.
bool Interrupted();

// Sleeps `seconds` in short steps, waking early on an interrupt. False when interrupted.
bool SleepUnlessInterrupted(double seconds);

// The process to stop on interrupt (0: none). Async-signal-safe, thread-safe.
void SetInterruptTarget(pid_t pid);

}  // namespace pipette
