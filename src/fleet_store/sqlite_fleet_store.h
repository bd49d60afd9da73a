// The SQLite backend of FleetStore (pipette/fleet_store.h): one file, WAL, every write one
// BEGIN IMMEDIATE transaction (so separate instances and processes may share the file).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "pipette/fleet_store.h"

namespace pipette {

// Opens (creating parent folders, the file and the schema when missing) the fleet database at
// `path`. Errors name the path: not an SQLite file, read-only, busy, a schema newer than this
// build. `max_size_bytes` > 0: the quota of FleetStoreOptions (PRAGMA max_page_count, set on this
// connection).
Result<std::unique_ptr<FleetStore>> OpenSqliteFleetStore(const std::string& path,
                                                         int64_t max_size_bytes = 0);

}  // namespace pipette
