// BackupFleetDb: SQLite's online backup of a fleet database (include/pipette/fleet_store.h).
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "pipette/fleet_store.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

bool IsPostgres(const std::string& db) {
  return db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0;
}

}  // namespace

Status BackupFleetDb(const std::string& db, const std::string& out_path) {
  if (IsPostgres(db)) {
    return MakeError("a PostgreSQL fleet database is backed up with its own tool: pg_dump "
                     "--format=custom --file=FILE '<the URL>' (restore with pg_restore)");
  }
  if (out_path.empty()) return MakeError("no backup file given; give -o FILE");
  if (out_path.find("://") != std::string::npos) {
    return MakeError(out_path + " is a URL; a backup is written to a file: give -o FILE");
  }
  std::error_code ec;
  if (fs::exists(out_path, ec)) {
    return MakeError(out_path + " exists; give a new file (a backup never replaces one)");
  }
  const fs::path folder = fs::absolute(out_path, ec).parent_path();
  if (!fs::is_directory(folder, ec)) {
    return MakeError(out_path + ": no folder " + folder.string() + "; create it or give another -o");
  }
  if (fs::is_directory(db, ec)) return MakeError(db + " is a folder, not a fleet database");
  if (!fs::is_regular_file(db, ec)) {
    return MakeError(db + ": no such fleet database; give the file pipette serve --db uses");
  }
  sqlite3* src = nullptr;
  if (sqlite3_open_v2(db.c_str(), &src, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    const std::string why = src ? sqlite3_errmsg(src) : "out of memory";
    sqlite3_close(src);
    return MakeError(db + ": cannot open (" + why + ")");
  }
  sqlite3_busy_timeout(src, 10000);
  // Only a fleet database is backed up: its clients and results tables are there.
  sqlite3_stmt* check = nullptr;
  int tables = -1;
  if (sqlite3_prepare_v2(src,
                         "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                         "('clients', 'results')",
                         -1, &check, nullptr) == SQLITE_OK &&
      sqlite3_step(check) == SQLITE_ROW) {
    tables = sqlite3_column_int(check, 0);
  }
  sqlite3_finalize(check);
  if (tables != 2) {
    const std::string why = tables < 0 ? std::string(sqlite3_errmsg(src)) : "no fleet tables";
    sqlite3_close(src);
    return MakeError(db + " is not a pipette fleet database (" + why +
                     "); give the file pipette serve --db uses");
  }
  const std::string part = out_path + ".part-" + std::to_string(getpid());
  sqlite3* dst = nullptr;
  std::string failure;
  if (sqlite3_open_v2(part.c_str(), &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    failure = "cannot create " + part + " (" + (dst ? sqlite3_errmsg(dst) : "out of memory") + ")";
  } else if (sqlite3_backup* b = sqlite3_backup_init(dst, "main", src, "main"); b == nullptr) {
    failure = std::string("cannot start the backup (") + sqlite3_errmsg(dst) + ")";
  } else {
    // All pages in one step: one read transaction of the source, so the copy is the database as
    // of one moment, with every commit acknowledged before it; writers go on meanwhile (WAL).
    const int rc = sqlite3_backup_step(b, -1);
    sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) {
      failure = rc == SQLITE_FULL ? "the disk is full" : sqlite3_errstr(rc);
    } else if (sqlite3_exec(dst, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr) !=
               SQLITE_OK) {
      failure = sqlite3_errmsg(dst);
    }
  }
  sqlite3_close(dst);
  sqlite3_close(src);
  if (failure.empty()) {
    fs::rename(part, out_path, ec);
    if (ec) failure = "cannot rename " + part + " to " + out_path + ": " + ec.message();
  }
  if (!failure.empty()) {
    fs::remove(part, ec);
    return MakeError("backup of " + db + " failed: " + failure + "; nothing was written", "backup");
  }
  return Status::Ok();
}

}  // namespace pipette
