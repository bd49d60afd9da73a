// A thin RAII layer over the SQLite C API for the store, and the one place that turns SQLite
// result codes into user-facing Errors. Not thread-safe (one connection per thread).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pipette/status.h"

namespace pipette::store {

// "<path>: <what went wrong>; <what to do>" for result code `rc` of `db` (may be null).
// `doing` says what was attempted ("storing result X") and is kept for unexpected codes only.
Error SqliteError(const std::string& path, sqlite3* db, int rc, std::string_view doing);

class Stmt;

// An open connection. Methods return Errors made by SqliteError.
class Db {
 public:
  // Opens `path` read-write (creating it if missing when `create`); sets the busy timeout in ms.
  static Result<std::unique_ptr<Db>> Open(const std::string& path, int busy_timeout_ms,
                                          bool create = true);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  const std::string& path() const { return path_; }
  sqlite3* raw() { return db_; }

  // Runs one or more statements that return no rows needed by the caller.
  Status Exec(const std::string& sql, std::string_view doing);
  // Prepares one statement. A connection keeps up to kCachedStatements prepared statements by
  // their text and hands them out again once the last user has let go (reset, bindings cleared):
  // parsing SQL was a tenth of the server's time per submission.
  Result<Stmt> Prepare(const std::string& sql);
  static constexpr size_t kCachedStatements = 96;
  // Runs a statement that yields one integer (e.g. a PRAGMA); nullopt if it yields no row.
  Result<std::optional<int64_t>> QueryInt(const std::string& sql);
  // Runs a statement that yields one text value; nullopt if it yields no row.
  Result<std::optional<std::string>> QueryText(const std::string& sql);

  Error ErrorFor(int rc, std::string_view doing) { return SqliteError(path_, db_, rc, doing); }

 private:
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  Db(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::string path_;
  sqlite3* db_;
  // Node-based: a Stmt keeps a pointer to its entry's in_use across rehashes.
  std::unordered_map<std::string, Cached> cache_;
};

// A prepared statement; on destruction finalized, or reset and returned to its connection's
// cache. Must not outlive its Db. Bind indexes start at 1.
class Stmt {
 public:
  Stmt(Db* db, sqlite3_stmt* stmt, bool* in_use = nullptr)
      : db_(db), stmt_(stmt), in_use_(in_use) {}
  Stmt(Stmt&& other) noexcept : db_(other.db_), stmt_(other.stmt_), in_use_(other.in_use_) {
    other.stmt_ = nullptr;
    other.in_use_ = nullptr;
  }
  Stmt& operator=(Stmt&&) = delete;
  ~Stmt();

  void Bind(int i, std::string_view text);
  void Bind(int i, int64_t value);
  void Bind(int i, double value);
  void BindNull(int i);
  void Bind(int i, const std::optional<double>& value);

  // Advances: true when a row is available, false when done, Error otherwise.
  Result<bool> Step(std::string_view doing);
  // Steps to completion, expecting no rows.
  Status Run(std::string_view doing);
  void Reset();

  std::string Text(int col) const;
  int64_t Int(int col) const;
  std::optional<double> OptDouble(int col) const;

 private:
  Db* db_;
  sqlite3_stmt* stmt_;
  bool* in_use_;  // the cache entry's flag when the statement is the Db's; else owned
};

// Holds a write transaction (BEGIN IMMEDIATE): rolled back unless Commit() succeeds.
class WriteTransaction {
 public:
  explicit WriteTransaction(Db& db) : db_(db) {}
  ~WriteTransaction();
  Status Begin(std::string_view doing);
  Status Commit(std::string_view doing);

 private:
  Db& db_;
  bool open_ = false;
};

}  // namespace pipette::store
