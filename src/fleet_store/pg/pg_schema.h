// The fleet database's tables on PostgreSQL: the same tables and columns as the SQLite backend
// (times BIGINT Unix seconds, reals DOUBLE PRECISION, ids and timestamps compared byte by byte).
#pragma once

#include <pqxx/pqxx>
#include <string>

namespace pipette::pg {

constexpr int kSchemaVersion = 2;  // 1: before result_counts and results.metrics

// The rows of result_counts (pg_schema.cc says why the count is kept in shards).
constexpr int kCountShards = 64;

// The number of stored results: the sum of the shards.
constexpr const char* kCountResultsSql = "SELECT COALESCE(sum(n), 0) FROM result_counts";

// Creates the missing tables and indexes and records schema_version, or migrates a version 1
// database, in one transaction that holds an advisory lock, so stores opened at the same time do
// not race. Returns the version found (kSchemaVersion after creating or migrating; 0 when a meta
// table holds no version: not a fleet database). Throws pqxx exceptions (the caller's boundary).
int EnsureSchema(pqxx::connection& conn);

}  // namespace pipette::pg
