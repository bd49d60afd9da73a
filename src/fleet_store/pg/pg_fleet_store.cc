#include "fleet_store/pg/pg_fleet_store.h"

namespace pipette {

// Filled in below; this first version only reports that the backend is not ready.
Result<std::unique_ptr<FleetStore>> OpenPgFleetStore(const std::string& url) {
  (void)url;
  return MakeError("fleet store: the PostgreSQL backend is not built yet");
}

}  // namespace pipette
