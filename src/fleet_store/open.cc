// OpenFleetStore: the backend by the name of the database.
#include <cstdlib>
#include <string>

#include "fleet_store/sqlite_fleet_store.h"
#include "pipette/fleet_store.h"
#ifdef PIPETTE_HAVE_PG_FLEET_STORE
#include "fleet_store/pg/pg_fleet_store.h"
#endif

namespace pipette {

Result<std::unique_ptr<FleetStore>> OpenFleetStore(const std::string& db,
                                                   const FleetStoreOptions& options) {
  if (db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0) {
#ifdef PIPETTE_HAVE_PG_FLEET_STORE
    return OpenPgFleetStore(db);
#else
    return MakeError("fleet store: this build has no PostgreSQL backend; give an SQLite file");
#endif
  }
  if (db.empty()) return MakeError("fleet store: no database given; give a file or a URL");
  return OpenSqliteFleetStore(db, options.max_size_bytes);
}

std::string DefaultFleetDbPath() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/pipette/fleet.db";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.local/share/pipette/fleet.db";
  return "pipette-fleet.db";
}

}  // namespace pipette
