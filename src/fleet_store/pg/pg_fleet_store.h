// The PostgreSQL backend of FleetStore (pipette/fleet_store.h), over libpqxx.
#pragma once

#include <memory>
#include <string>

#include "pipette/fleet_store.h"

namespace pipette {

// Connects to `url` ("postgresql://user[:password]@host[:port]/db") and creates the schema when
// missing. Errors name the URL without its password.
Result<std::unique_ptr<FleetStore>> OpenPgFleetStore(const std::string& url);

}  // namespace pipette
