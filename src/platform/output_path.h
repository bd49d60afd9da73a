// Guarding the files a command writes (`-o FILE`): writing must never destroy what the user
// meant to keep (DESIGN.md 9: "no lost or corrupted data").
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "pipette/status.h"

namespace pipette {

// OK when `out` may be created or replaced. Errors (one line naming `out` and what to do):
// empty path; its folder does not exist; it exists and is not a regular file (a directory, a
// device such as /dev/full, a fifo); it is the same file as one of `inputs`; it is an SQLite
// database (a results store); it is `store` (when not empty, the results store the command
// reads) or one of SQLite's side files of it, `<store>-wal`, `<store>-shm` or `<store>-journal`,
// whether or not they exist now (SQLite deletes or replays them on the next open). Replacing
// another regular file is allowed, as `-o` promises.
Status CheckOutputPath(const std::string& out, const std::vector<std::string>& inputs = {},
                       const std::string& store = {});

// Writes `path` whole or not at all: `write` fills a temporary file beside it, which is renamed
// over `path` only when `write` and the stream succeeded; otherwise the temporary file is removed
// and an existing `path` is left as it was. `what` names the content in errors ("the report":
// "<path>: cannot write the report; check the directory"). Errors from `write` come back
// prefixed with `path`.
Status WriteFileAtomically(const std::string& path, const std::string& what,
                           const std::function<Status(std::ostream&)>& write);

}  // namespace pipette
