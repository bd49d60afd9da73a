#include "store/sqlite.h"

#include <string>

namespace pipette::store {

Error SqliteError(const std::string& path, sqlite3* db, int rc, std::string_view doing) {
  const std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {  // the primary code; extended codes keep it in the low byte
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return MakeError(path + ": database is busy (another pipette is writing); retry", "store");
    case SQLITE_FULL:
      return MakeError(path +
                           ": disk full (or store size limit reached) while writing; free space "
                           "and retry (results already stored are intact)",
                       "store");
    case SQLITE_READONLY:
      return MakeError(path +
                           ": store is read-only; check the permissions of the file and its "
                           "directory, or give a store path that is writable",
                       "store");
    case SQLITE_NOTADB:
      return MakeError(path +
                           ": not a pipette store (not an SQLite database); move the file away "
                           "or give another store path",
                       "store");
    case SQLITE_CORRUPT:
      return MakeError(path + ": the store is corrupt (" + detail +
                           "); restore it from a backup or move it away",
                       "store");
    case SQLITE_CANTOPEN:
      return MakeError(path + ": cannot open the store (" + detail +
                           "); check that the directory exists and is writable",
                       "store");
    case SQLITE_IOERR:
      return MakeError(path + ": I/O error (" + detail + ") while " + std::string(doing) +
                           "; check the disk, then retry",
                       "store");
    case SQLITE_NOMEM:
      return MakeError(path + ": out of memory while " + std::string(doing), "store");
    default:
      return MakeError(path + ": SQLite error while " + std::string(doing) + ": " + detail,
                       "store");
  }
}

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, int busy_timeout_ms, bool create) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &raw,
      SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Error error = SqliteError(path, raw, rc, "opening the store");
    sqlite3_close(raw);
    return error;
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  std::unique_ptr<Db> db(new Db(path, raw));
  // SQLite opens a write-protected file read-only without complaint; say so now, not on the
  // first write.
  if (sqlite3_db_readonly(raw, "main") == 1) return db->ErrorFor(SQLITE_READONLY, "opening");
  return db;
}

Db::~Db() {
  for (auto& [sql, cached] : cache_) sqlite3_finalize(cached.stmt);
  sqlite3_close_v2(db_);
}

Status Db::Exec(const std::string& sql, std::string_view doing) {
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return ErrorFor(rc, doing);
  return Status::Ok();
}

Result<Stmt> Db::Prepare(const std::string& sql) {
  auto found = cache_.find(sql);
  if (found != cache_.end() && !found->second.in_use) {
    found->second.in_use = true;
    return Stmt(this, found->second.stmt, &found->second.in_use);
  }
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return ErrorFor(rc, "preparing a query");
  // The same text already in use (a nested query) gets its own statement, finalized after use.
  if (found != cache_.end() || cache_.size() >= kCachedStatements || stmt == nullptr) {
    return Stmt(this, stmt);
  }
  Cached& entry = cache_[sql];
  entry.stmt = stmt;
  entry.in_use = true;
  return Stmt(this, stmt, &entry.in_use);
}

Result<std::optional<int64_t>> Db::QueryInt(const std::string& sql) {
  auto stmt = Prepare(sql);
  if (!stmt.ok()) return stmt.error();
  auto row = stmt->Step("reading the store");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<int64_t>();
  return std::optional<int64_t>(stmt->Int(0));
}

Result<std::optional<std::string>> Db::QueryText(const std::string& sql) {
  auto stmt = Prepare(sql);
  if (!stmt.ok()) return stmt.error();
  auto row = stmt->Step("reading the store");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(stmt->Text(0));
}

Stmt::~Stmt() {
  if (in_use_ == nullptr) {
    sqlite3_finalize(stmt_);
    return;
  }
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  *in_use_ = false;
}

void Stmt::Bind(int i, std::string_view text) {
  sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}
void Stmt::Bind(int i, int64_t value) { sqlite3_bind_int64(stmt_, i, value); }
void Stmt::Bind(int i, double value) { sqlite3_bind_double(stmt_, i, value); }
void Stmt::BindNull(int i) { sqlite3_bind_null(stmt_, i); }
void Stmt::Bind(int i, const std::optional<double>& value) {
  if (value) {
    Bind(i, *value);
  } else {
    BindNull(i);
  }
}

Result<bool> Stmt::Step(std::string_view doing) {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->ErrorFor(rc, doing);
}

Status Stmt::Run(std::string_view doing) {
  auto row = Step(doing);
  if (!row.ok()) return row.error();
  return Status::Ok();
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Stmt::Text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (p == nullptr) return {};
  return std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

int64_t Stmt::Int(int col) const { return sqlite3_column_int64(stmt_, col); }

std::optional<double> Stmt::OptDouble(int col) const {
  if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(stmt_, col);
}

WriteTransaction::~WriteTransaction() {
  // After some errors (SQLITE_FULL, SQLITE_IOERR) SQLite has already rolled back.
  if (open_ && sqlite3_get_autocommit(db_.raw()) == 0) {
    sqlite3_exec(db_.raw(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

namespace {
Status RunOne(Db& db, const std::string& sql, std::string_view doing) {
  auto stmt = db.Prepare(sql);
  if (!stmt.ok()) return stmt.error();
  return stmt->Run(doing);
}
}  // namespace

Status WriteTransaction::Begin(std::string_view doing) {
  Status s = RunOne(db_, "BEGIN IMMEDIATE", doing);
  open_ = s.ok();
  return s;
}

Status WriteTransaction::Commit(std::string_view doing) {
  Status s = RunOne(db_, "COMMIT", doing);
  if (s.ok()) open_ = false;
  return s;
}

}  // namespace pipette::store
