// The SQLite backend of FleetStore (pipette/fleet_store.h): one file, WAL, every write one
// BEGIN IMMEDIATE transaction (so separate instances and processes may share the file).
#pragma once

#include <memory>
#include <string>

#include "pipette/fleet_store.h"

namespace pipette {

// Opens (creating parent folders, the file and the schema when missing) the fleet database at
// `path`. Errors name the path: not an SQLite file, read-only, busy, a schema newer than this
// build.
Result<std::unique_ptr<FleetStore>> OpenSqliteFleetStore(const std::string& path);

}  // namespace pipette
