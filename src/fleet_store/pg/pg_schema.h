// The fleet database's tables on PostgreSQL: the same tables and columns as the SQLite backend
// (times BIGINT Unix seconds, reals DOUBLE PRECISION, ids and timestamps compared byte by byte).
#pragma once

#include <pqxx/pqxx>
#include <string>

namespace pipette::pg {

constexpr int kSchemaVersion = 1;

// Creates the missing tables and indexes and records schema_version, in one transaction that
// holds an advisory lock, so stores opened at the same time do not race. Returns the version
// found (kSchemaVersion after creating; 0 when a meta table holds no version: not a fleet
// database). Throws pqxx exceptions (the caller's boundary).
int EnsureSchema(pqxx::connection& conn);

}  // namespace pipette::pg
