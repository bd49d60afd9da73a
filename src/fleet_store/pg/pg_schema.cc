#include "fleet_store/pg/pg_schema.h"

#include <cstdlib>
#include <string>

namespace pipette::pg {
namespace {

// The SQLite store's tables (sqlite_fleet_store.cc has the commented schema), in PostgreSQL types.
// Text compared as bytes (COLLATE "C"), as SQLite's BINARY collation does: the order of listings,
// the keyset cursor and lower() must not depend on the database's locale. settings is JSONB (the
// setting filters read it); record stays TEXT, the exact bytes stored.
//
// Two differences from SQLite, both for concurrent writers and readers that SQLite does not have:
//  - The number of results is kept in kCountShards rows of result_counts, not in one meta row:
//    every insert adds 1 to the row of its connection (pg_backend_pid() % kCountShards) in its
//    transaction, and the count is their sum. One row would be locked by each insert from its
//    UPDATE to its COMMIT, so concurrent submissions queued on it one at a time.
//  - results.metrics holds the record's "metrics" member as compact JSON text (NULL in rows stored
//    before schema version 2): the dashboard's summaries read it instead of parsing the whole
//    record (13 KB) as json for each row, most of what /quality and /scaling cost.
constexpr const char* kTables = R"sql(
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS clients (
  client_id TEXT COLLATE "C" PRIMARY KEY,
  public_key TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL,
  label TEXT NOT NULL DEFAULT '',
  labels TEXT NOT NULL DEFAULT '[]',
  profile TEXT NOT NULL DEFAULT '{}',
  capabilities TEXT,
  created_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS preauth_keys (
  key_id TEXT PRIMARY KEY,
  secret_sha256 TEXT NOT NULL,
  labels TEXT NOT NULL DEFAULT '[]',
  expires_at BIGINT NOT NULL DEFAULT 0,
  spent_at BIGINT,
  spent_by TEXT
);
CREATE TABLE IF NOT EXISTS nonces (
  client_id TEXT NOT NULL,
  nonce TEXT NOT NULL,
  keep_until BIGINT NOT NULL,
  PRIMARY KEY (client_id, nonce)
);
CREATE INDEX IF NOT EXISTS nonces_by_keep_until ON nonces (keep_until);
CREATE TABLE IF NOT EXISTS results (
  result_id TEXT COLLATE "C" PRIMARY KEY,
  client_id TEXT COLLATE "C" NOT NULL,
  received_at BIGINT NOT NULL,
  config_id TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  benchmark_id TEXT COLLATE "C" NOT NULL,
  benchmark_type TEXT COLLATE "C" NOT NULL,
  model_file TEXT COLLATE "C" NOT NULL,
  model_sha256 TEXT COLLATE "C" NOT NULL,
  quant TEXT COLLATE "C" NOT NULL,
  quant_label TEXT COLLATE "C" NOT NULL,
  runtime TEXT COLLATE "C" NOT NULL,
  device_id TEXT COLLATE "C" NOT NULL,
  label TEXT COLLATE "C" NOT NULL,
  started_at TEXT COLLATE "C" NOT NULL,
  threads BIGINT NOT NULL,
  headline_metric TEXT COLLATE "C" NOT NULL,
  headline_unit TEXT COLLATE "C" NOT NULL,
  headline DOUBLE PRECISION,
  ci_low DOUBLE PRECISION,
  ci_high DOUBLE PRECISION,
  headline_n BIGINT NOT NULL,
  ci_reached INTEGER NOT NULL,
  profile_mismatch INTEGER NOT NULL,
  settings JSONB NOT NULL,
  record TEXT NOT NULL,
  metrics TEXT
);
CREATE TABLE IF NOT EXISTS result_counts (
  shard INTEGER PRIMARY KEY,
  n BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS results_by_time ON results (started_at DESC, result_id DESC);
CREATE INDEX IF NOT EXISTS results_by_benchmark
  ON results (benchmark_id, started_at DESC, result_id DESC);
CREATE INDEX IF NOT EXISTS results_by_device ON results (device_id, started_at DESC, result_id DESC);
CREATE INDEX IF NOT EXISTS results_by_model
  ON results (model_sha256, model_file, started_at DESC, result_id DESC);
CREATE INDEX IF NOT EXISTS results_by_quant
  ON results (lower(quant), started_at DESC, result_id DESC);
CREATE INDEX IF NOT EXISTS results_by_runtime ON results (runtime, started_at DESC, result_id DESC);
CREATE INDEX IF NOT EXISTS results_by_label ON results (label, started_at DESC, result_id DESC);
CREATE INDEX IF NOT EXISTS results_by_status ON results (status, started_at DESC, result_id DESC);
CREATE INDEX IF NOT EXISTS results_by_settings ON results USING GIN (settings);
CREATE TABLE IF NOT EXISTS plans (
  plan_id TEXT COLLATE "C" PRIMARY KEY,
  name TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
  job_id TEXT COLLATE "C" PRIMARY KEY,
  plan_id TEXT COLLATE "C" NOT NULL,
  idx INTEGER NOT NULL,
  spec TEXT NOT NULL,
  state TEXT NOT NULL,
  client_id TEXT COLLATE "C" NOT NULL DEFAULT '',
  lease_expires_at BIGINT NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  result_id TEXT COLLATE "C" NOT NULL DEFAULT '',
  expires_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_plan ON jobs (plan_id, idx);
CREATE INDEX IF NOT EXISTS jobs_queue ON jobs (state, created_at, idx);
CREATE TABLE IF NOT EXISTS job_failures (
  job_id TEXT COLLATE "C" NOT NULL,
  client_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  at BIGINT NOT NULL,
  retriable INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS job_failures_by_job ON job_failures (job_id, client_id);
)sql";

// Any constant: serializes schema creation between stores opening the same database at once
// (CREATE TABLE IF NOT EXISTS alone races on the catalog).
constexpr int64_t kSchemaLock = 0x7069706574746531;

// The records' TOAST compression: lz4 where the server has it (PostgreSQL 14 and later, built with
// lz4), else PostgreSQL's default, pglz. Storing 20,000 copies of the 11.5 KB stories260K record
// took the server 3.2 s with pglz and 0.7 s with lz4, for the same size on disk. Only rows stored
// from then on are compressed so; a database made before keeps its rows as they are.
void CompressRecordsWithLz4(pqxx::work& tx) {
  const bool lz4 = tx.exec("SELECT EXISTS (SELECT 1 FROM pg_settings WHERE name = "
                           "'default_toast_compression' AND 'lz4' = ANY (enumvals))")[0][0]
                       .as<bool>();
  if (!lz4) return;
  const pqxx::result now = tx.exec(
      "SELECT attcompression FROM pg_attribute WHERE attrelid = 'results'::regclass AND attname "
      "= 'record'");
  if (!now.empty() && std::string(now[0][0].c_str()) == "l") return;
  tx.exec("ALTER TABLE results ALTER COLUMN record SET COMPRESSION lz4");
}

void AddCountShards(pqxx::work& tx, const std::string& first) {
  tx.exec("INSERT INTO result_counts (shard, n) SELECT s, CASE WHEN s = 0 THEN " + first +
          " ELSE 0 END FROM generate_series(0, " + std::to_string(kCountShards - 1) +
          ") s ON CONFLICT (shard) DO NOTHING");
}

// Version 1 to 2: the count moves from meta into result_counts (shard 0 takes it), and results
// gains its metrics column, NULL in the rows already there (readers fall back to the record).
void MigrateFrom1(pqxx::work& tx) {
  tx.exec("ALTER TABLE results ADD COLUMN IF NOT EXISTS metrics TEXT");
  tx.exec("CREATE TABLE IF NOT EXISTS result_counts (shard INTEGER PRIMARY KEY, n BIGINT "
          "NOT NULL)");
  AddCountShards(tx, "COALESCE((SELECT value::bigint FROM meta WHERE key = 'result_count'), 0)");
  tx.exec("DELETE FROM meta WHERE key = 'result_count'");
  tx.exec("UPDATE meta SET value = '2' WHERE key = 'schema_version'");
}

}  // namespace

int EnsureSchema(pqxx::connection& conn) {
  pqxx::work tx(conn);
  tx.exec_params("SELECT pg_advisory_xact_lock($1)", kSchemaLock);
  if (tx.exec("SELECT to_regclass('meta') IS NOT NULL")[0][0].as<bool>()) {
    const pqxx::result v = tx.exec("SELECT value FROM meta WHERE key = 'schema_version'");
    // The tables exist; another version is left as it is, for the caller to report.
    int version = v.empty() ? 0 : std::atoi(v[0][0].c_str());
    if (version == 1) {
      MigrateFrom1(tx);
      version = 2;
    }
    if (version == kSchemaVersion) {
      CompressRecordsWithLz4(tx);
      tx.commit();
    }
    return version;
  }
  tx.exec(kTables);
  tx.exec("INSERT INTO meta (key, value) VALUES ('schema_version', '" +
          std::to_string(kSchemaVersion) +
          "') ON CONFLICT (key) DO NOTHING");
  AddCountShards(tx, "0");
  CompressRecordsWithLz4(tx);
  tx.commit();
  return kSchemaVersion;
}

}  // namespace pipette::pg
