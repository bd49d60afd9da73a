// The store's SQL schema and its migrations (PRAGMA user_version).
#pragma once

#include "pipette/status.h"
#include "store/sqlite.h"

namespace pipette::store {

// The schema version this build writes; a store with a higher user_version is refused.
inline constexpr int kSchemaVersion = 2;

// PRAGMA application_id of a pipette store ("PIPE").
inline constexpr int kApplicationId = 0x50495045;

// Makes `db` a pipette store at kSchemaVersion: sets WAL mode, checks that the file is a
// pipette store (or an empty database), creates or upgrades the schema in one write
// transaction. Safe when several processes open a new file at once.
Status EnsureSchema(Db& db);

}  // namespace pipette::store
