#include "store/schema.h"

#include <chrono>
#include <string>
#include <thread>

namespace pipette::store {
namespace {

// kMigrations[v] takes a store from user_version v to v + 1. Append; never edit a shipped one.
constexpr const char* kMigrations[] = {
    // 0 -> 1: results, raw samples, model-file hash cache.
    R"sql(
CREATE TABLE results (
  result_id       TEXT PRIMARY KEY NOT NULL,
  config_id       TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
  benchmark_id    TEXT NOT NULL,
  benchmark_type  TEXT NOT NULL,
  model_file      TEXT NOT NULL,
  model_sha256    TEXT NOT NULL,
  quant           TEXT NOT NULL,
  runtime         TEXT NOT NULL,
  runtime_version TEXT NOT NULL,
  runtime_commit  TEXT NOT NULL,
  threads         INTEGER NOT NULL,
  device_id       TEXT NOT NULL,
  label           TEXT NOT NULL,
  started_at      TEXT NOT NULL,
  finished_at     TEXT NOT NULL,
  headline_metric TEXT NOT NULL,
  headline_unit   TEXT NOT NULL,
  headline        REAL,
  record          TEXT NOT NULL
);
CREATE INDEX results_by_time ON results (started_at DESC, result_id DESC);
CREATE INDEX results_by_config ON results (config_id, status);
CREATE INDEX results_by_benchmark ON results (benchmark_id);
CREATE INDEX results_by_model ON results (model_sha256);
CREATE INDEX results_by_device ON results (device_id);
CREATE TABLE samples (
  result_id TEXT NOT NULL REFERENCES results (result_id) ON DELETE CASCADE,
  rep       INTEGER NOT NULL,
  metric    TEXT NOT NULL,
  value     REAL NOT NULL,
  PRIMARY KEY (result_id, rep, metric)
) WITHOUT ROWID;
CREATE INDEX samples_by_metric ON samples (metric);
CREATE TABLE file_hashes (
  path       TEXT PRIMARY KEY NOT NULL,
  size_bytes INTEGER NOT NULL,
  mtime_ns   INTEGER NOT NULL,
  sha256     TEXT NOT NULL,
  hashed_at  TEXT NOT NULL
);
)sql",
    // 1 -> 2: eval completions, one row per attempt, in their own table (the record's JSON keeps
    // everything else; reading a record puts them back as its `completions`).
    R"sql(
CREATE TABLE completions (
  result_id  TEXT NOT NULL REFERENCES results (result_id) ON DELETE CASCADE,
  ord        INTEGER NOT NULL,
  sample_key TEXT NOT NULL,
  sample_id  TEXT NOT NULL,
  stop       TEXT NOT NULL,
  correct    INTEGER NOT NULL,
  extracted  TEXT NOT NULL,
  method     TEXT NOT NULL,
  completion TEXT NOT NULL,
  attempt    TEXT NOT NULL,
  PRIMARY KEY (result_id, ord)
) WITHOUT ROWID;
CREATE INDEX completions_by_sample ON completions (sample_id);
)sql",
};
static_assert(std::size(kMigrations) == kSchemaVersion);

// Switching to WAL needs a moment of exclusive access; another process opening the same new file
// can hold it, and SQLite reports that without waiting on the busy handler.
Status EnableWal(Db& db) {
  for (int attempt = 0;; ++attempt) {
    auto mode = db.QueryText("PRAGMA journal_mode = WAL");
    if (mode.ok()) return Status::Ok();  // "wal", or the old mode where WAL is unsupported
    const bool busy = (sqlite3_errcode(db.raw()) & 0xff) == SQLITE_BUSY;
    if (!busy || attempt >= 200) return mode.error();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Refuses a file that is an SQLite database of some other program.
Status CheckIsPipetteStore(Db& db) {
  auto app_id = db.QueryInt("PRAGMA application_id");
  if (!app_id.ok()) return app_id.error();
  if (app_id->value_or(0) == kApplicationId) return Status::Ok();
  auto tables = db.QueryInt("SELECT count(*) FROM sqlite_schema");
  if (!tables.ok()) return tables.error();
  if (app_id->value_or(0) == 0 && tables->value_or(0) == 0) return Status::Ok();  // new file
  return MakeError(db.path() +
                       ": an SQLite database of another program, not a pipette store; give "
                       "another store path",
                   "store");
}

}  // namespace

Status EnsureSchema(Db& db) {
  if (Status s = EnableWal(db); !s.ok()) return s;
  if (Status s = db.Exec("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL", "configuring");
      !s.ok()) {
    return s;
  }
  if (Status s = CheckIsPipetteStore(db); !s.ok()) return s;
  auto version = db.QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.error();
  if (**version == kSchemaVersion) return Status::Ok();  // the common case: no write lock

  WriteTransaction txn(db);
  if (Status s = txn.Begin("creating the schema"); !s.ok()) return s;
  // Read again under the lock: another process may have just created or upgraded it.
  if (Status s = CheckIsPipetteStore(db); !s.ok()) return s;
  version = db.QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.error();
  const int64_t from = **version;
  if (from > kSchemaVersion) {
    return MakeError(db.path() + ": the store has schema version " + std::to_string(from) +
                         ", newer than this pipette understands (" +
                         std::to_string(kSchemaVersion) + "); upgrade pipette",
                     "store");
  }
  for (int64_t v = from; v < kSchemaVersion; ++v) {
    if (Status s = db.Exec(kMigrations[v], "upgrading the schema"); !s.ok()) return s;
  }
  const std::string stamp = "PRAGMA application_id = " + std::to_string(kApplicationId) +
                            "; PRAGMA user_version = " + std::to_string(kSchemaVersion);
  if (Status s = db.Exec(stamp, "upgrading the schema"); !s.ok()) return s;
  return txn.Commit("creating the schema");
}

}  // namespace pipette::store
