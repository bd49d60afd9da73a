// The SQLite fleet store (sqlite_fleet_store.h).
//
// The schema (version 2; the PostgreSQL store in pg/ mirrors these tables and columns):
//
//   meta(key TEXT PK, value TEXT)  schema_version = 2; result_count = rows in results (kept by
//       PutResult in the same transaction, so the unfiltered total of a listing costs nothing)
//   clients(client_id TEXT PK, public_key TEXT UNIQUE NOT NULL, status TEXT NOT NULL
//       ('pending'|'approved'|'revoked'), label TEXT, labels TEXT (JSON array), profile TEXT
//       (JSON object), capabilities TEXT (JSON, NULL before the first claim), created_at INTEGER)
//   preauth_keys(key_id TEXT PK, secret_sha256 TEXT NOT NULL (SHA-256 of the secret's 32 bytes:
//       fleet_store::PreauthSecretDigest), labels TEXT (JSON array), expires_at INTEGER (0:
//       never), spent_at INTEGER NULL, spent_by TEXT NULL)
//   nonces(client_id TEXT, nonce TEXT, keep_until INTEGER, PK(client_id, nonce))
//   results(result_id TEXT PK, client_id, received_at INTEGER, config_id, status, benchmark_id,
//       benchmark_type, model_file, model_sha256, quant, quant_label, runtime, device_id, label,
//       started_at, threads INTEGER, headline_metric, headline_unit, headline REAL, ci_low REAL,
//       ci_high REAL, headline_n INTEGER, ci_reached INTEGER, profile_mismatch INTEGER,
//       settings TEXT (JSON: runtime.settings), record TEXT (JSON: the record, compact dump))
//       Text columns are '' where the record lacks the field. quant_label (QuantLabel of the
//       record's model block) is an addition to the first plan: rows are listed without parsing
//       a record. Indexes: newest first (started_at DESC, result_id DESC, benchmark_id: since
//       version 2, so a family of benchmarks is filtered in the index) and one per filter, each
//       followed by (started_at, result_id) so a filtered page needs no sort.
//   result_models(model_sha256 TEXT, model_file TEXT, PK(both)): every (digest, file) pair of
//       results, kept by PutResult: the model filter (digest prefix or file-name substring) is
//       matched against these few rows, then each pair is a range of results_by_model.
//   plans(plan_id TEXT PK, name TEXT, created_at INTEGER, expires_at INTEGER (0: never))
//   jobs(job_id TEXT PK, plan_id TEXT, idx INTEGER, spec TEXT (JSON JobSpec), state TEXT,
//       client_id TEXT ('' when none), lease_expires_at INTEGER, attempts INTEGER, result_id TEXT
//       ('' when none), expires_at INTEGER, created_at INTEGER)
//       Indexes (state, created_at, idx), (plan_id, idx).
//   job_failures(job_id TEXT, client_id TEXT, reason TEXT, at INTEGER, retriable INTEGER)
//       Index (job_id, client_id).
//
// Times are Unix seconds. A lease is held through lease_expires_at (expired when < now); a plan's
// queued jobs expire when expires_at < now.
#include "fleet_store/sqlite_fleet_store.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <system_error>

#include "fleet_store/common.h"
#include "fleet_store/group_commit.h"
#include "fleet_store/per_file.h"
#include "pipette/record.h"
#include "store/record.h"
#include "store/sqlite.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using store::Db;
using store::Stmt;
using store::WriteTransaction;

constexpr int kSchemaVersion = 2;
constexpr int kBusyTimeoutMs = 10000;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
CREATE TABLE clients (
  client_id    TEXT PRIMARY KEY NOT NULL,
  public_key   TEXT UNIQUE NOT NULL,
  status       TEXT NOT NULL,
  label        TEXT NOT NULL DEFAULT '',
  labels       TEXT NOT NULL DEFAULT '[]',
  profile      TEXT NOT NULL DEFAULT '{}',
  capabilities TEXT,
  created_at   INTEGER NOT NULL
);
CREATE TABLE preauth_keys (
  key_id        TEXT PRIMARY KEY NOT NULL,
  secret_sha256 TEXT NOT NULL,
  labels        TEXT NOT NULL DEFAULT '[]',
  expires_at    INTEGER NOT NULL DEFAULT 0,
  spent_at      INTEGER,
  spent_by      TEXT
);
CREATE TABLE nonces (
  client_id  TEXT NOT NULL,
  nonce      TEXT NOT NULL,
  keep_until INTEGER NOT NULL,
  PRIMARY KEY (client_id, nonce)
) WITHOUT ROWID;
CREATE INDEX nonces_by_keep_until ON nonces (keep_until);
CREATE TABLE results (
  result_id        TEXT PRIMARY KEY NOT NULL,
  client_id        TEXT NOT NULL,
  received_at      INTEGER NOT NULL,
  config_id        TEXT NOT NULL,
  status           TEXT NOT NULL,
  benchmark_id     TEXT NOT NULL,
  benchmark_type   TEXT NOT NULL,
  model_file       TEXT NOT NULL,
  model_sha256     TEXT NOT NULL,
  quant            TEXT NOT NULL,
  quant_label      TEXT NOT NULL,
  runtime          TEXT NOT NULL,
  device_id        TEXT NOT NULL,
  label            TEXT NOT NULL,
  started_at       TEXT NOT NULL,
  threads          INTEGER NOT NULL,
  headline_metric  TEXT NOT NULL,
  headline_unit    TEXT NOT NULL,
  headline         REAL,
  ci_low           REAL,
  ci_high          REAL,
  headline_n       INTEGER NOT NULL,
  ci_reached       INTEGER NOT NULL,
  profile_mismatch INTEGER NOT NULL,
  settings         TEXT NOT NULL,
  record           TEXT NOT NULL
);
CREATE INDEX results_by_time ON results (started_at DESC, result_id DESC, benchmark_id);
CREATE INDEX results_by_benchmark ON results (benchmark_id, started_at DESC, result_id DESC);
CREATE INDEX results_by_device ON results (device_id, started_at DESC, result_id DESC);
CREATE INDEX results_by_model ON results (model_sha256, model_file, started_at DESC,
                                          result_id DESC);
CREATE INDEX results_by_quant ON results (quant COLLATE NOCASE, started_at DESC, result_id DESC);
CREATE INDEX results_by_runtime ON results (runtime, started_at DESC, result_id DESC);
CREATE INDEX results_by_label ON results (label, started_at DESC, result_id DESC);
CREATE INDEX results_by_status ON results (status, started_at DESC, result_id DESC);
CREATE TABLE result_models (
  model_sha256 TEXT NOT NULL,
  model_file   TEXT NOT NULL,
  PRIMARY KEY (model_sha256, model_file)
) WITHOUT ROWID;
CREATE TABLE plans (
  plan_id    TEXT PRIMARY KEY NOT NULL,
  name       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE TABLE jobs (
  job_id           TEXT PRIMARY KEY NOT NULL,
  plan_id          TEXT NOT NULL,
  idx              INTEGER NOT NULL,
  spec             TEXT NOT NULL,
  state            TEXT NOT NULL,
  client_id        TEXT NOT NULL DEFAULT '',
  lease_expires_at INTEGER NOT NULL DEFAULT 0,
  attempts         INTEGER NOT NULL DEFAULT 0,
  result_id        TEXT NOT NULL DEFAULT '',
  expires_at       INTEGER NOT NULL,
  created_at       INTEGER NOT NULL
);
CREATE INDEX jobs_queue ON jobs (state, created_at, idx);
CREATE INDEX jobs_by_plan ON jobs (plan_id, idx);
CREATE TABLE job_failures (
  job_id    TEXT NOT NULL,
  client_id TEXT NOT NULL,
  reason    TEXT NOT NULL,
  at        INTEGER NOT NULL,
  retriable INTEGER NOT NULL
);
CREATE INDEX job_failures_by_job ON job_failures (job_id, client_id);
INSERT INTO meta (key, value) VALUES ('schema_version', '2'), ('result_count', '0');
)sql";

// The columns a listing reads, in ReadRow's order.
constexpr const char* kRowColumns =
    "result_id, config_id, status, benchmark_id, benchmark_type, model_file, model_sha256, quant, "
    "runtime, device_id, label, started_at, threads, headline, headline_metric, headline_unit, "
    "ci_low, ci_high, headline_n, ci_reached, quant_label, client_id, received_at, "
    "profile_mismatch";

FleetResultRow ReadRow(const Stmt& st) {
  FleetResultRow out;
  ResultRow& r = out.row;
  std::string* texts[] = {&r.result_id,      &r.config_id,  &r.status,       &r.benchmark_id,
                          &r.benchmark_type, &r.model_file, &r.model_sha256, &r.quant,
                          &r.runtime,        &r.device_id,  &r.label,        &r.started_at};
  for (int i = 0; i < 12; ++i) *texts[i] = st.Text(i);
  r.threads = static_cast<int>(st.Int(12));
  r.headline = st.OptDouble(13);
  r.headline_metric = st.Text(14);
  r.headline_unit = st.Text(15);
  r.headline_ci95_low = st.OptDouble(16);
  r.headline_ci95_high = st.OptDouble(17);
  r.headline_n = static_cast<int>(st.Int(18));
  r.ci_reached = st.Int(19) != 0;
  r.quant_label = st.Text(20);
  out.client_id = st.Text(21);
  out.received_at = st.Int(22);
  out.profile_mismatch = st.Int(23) != 0;
  return out;
}

std::string Lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool IsNumber(const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(v);
}

// A WHERE clause and its parameters (as in src/store/store.cc, over the fleet's columns).
struct Where {
  std::string sql;
  std::vector<std::string> params;

  void Add(const std::string& condition, const std::vector<std::string>& condition_params) {
    sql += sql.empty() ? " WHERE " : " AND ";
    sql += condition;
    params.insert(params.end(), condition_params.begin(), condition_params.end());
  }
  // "(c OR c ...)" over `values`; `params_of` gives each value's parameters.
  template <typename ParamsOf>
  void AddAny(const std::string& condition, const std::vector<std::string>& values,
              ParamsOf params_of) {
    if (values.empty()) return;
    std::string any;
    std::vector<std::string> p;
    for (const std::string& v : values) {
      any += (any.empty() ? "(" : " OR ") + condition;
      for (std::string& x : params_of(v)) p.push_back(std::move(x));
    }
    Add(any + ")", p);
  }
  void AddAny(const std::string& condition, const std::vector<std::string>& values) {
    AddAny(condition, values, [](const std::string& v) { return std::vector<std::string>{v}; });
  }
};

// The upper end of the range of texts that start with `prefix` (BINARY collation compares bytes;
// 0xff never occurs in UTF-8).
std::string PrefixEnd(const std::string& prefix) { return prefix + "\xff"; }

// One runtime.settings entry against its filter value (ParseSettingFilter's rules), on the
// `settings` column. The key is one of RecordedSettingNames(): a plain name, safe in the path.
std::pair<std::string, std::vector<std::string>> SettingCondition(const SettingFilter& f) {
  const std::string path = "'$." + f.key + "'";
  const std::string value = "json_extract(settings, " + path + ")";
  const std::string type = "json_type(settings, " + path + ")";
  if (f.value == "true" || f.value == "false") return {type + " = ?", {f.value}};
  if (IsNumber(f.value)) {
    return {"((" + type + " = 'text' AND " + value + " = ?) OR (" + type +
                " IN ('integer', 'real') AND " + value + " = CAST(? AS REAL)))",
            {f.value, f.value}};
  }
  return {"(" + type + " = 'text' AND " + value + " = ? COLLATE NOCASE)", {f.value}};
}

// The filter's conditions (no order, no limit). Device and model-digest prefixes are ranges so
// that their indexes serve them.
Result<Where> BuildWhere(const ResultFilter& f) {
  Where w;
  w.AddAny("benchmark_id = ?", f.benchmarks);
  // The (digest, file) pairs that match come from the small result_models table; each pair is
  // then a range of results_by_model, so neither the page nor the count scans all results.
  if (!f.models.empty()) {
    Where models;
    models.AddAny("((model_sha256 >= ? AND model_sha256 < ?) OR instr(model_file, ?) > 0)",
                  f.models, [](const std::string& v) {
                    const std::string lower = Lowercase(v);
                    return std::vector<std::string>{lower, PrefixEnd(lower), v};
                  });
    w.Add("(model_sha256, model_file) IN (SELECT model_sha256, model_file FROM result_models" +
              models.sql + ")",
          models.params);
  }
  w.AddAny("quant = ? COLLATE NOCASE", f.quants);
  if (!f.status.empty()) w.Add("status = ?", {f.status});
  w.AddAny("(device_id >= ? AND device_id < ?)", f.devices, [](const std::string& v) {
    const std::string lower = Lowercase(v);
    return std::vector<std::string>{lower, PrefixEnd(lower)};
  });
  w.AddAny("runtime = ?", f.runtimes);
  w.AddAny("label = ?", f.labels);
  std::map<std::string, std::vector<SettingFilter>> by_key;  // alternatives ORed, keys ANDed
  for (const std::string& text : f.settings) {
    auto parsed = ParseSettingFilter(text);
    if (!parsed.ok()) return parsed.error();
    by_key[parsed->key].push_back(*parsed);
  }
  for (const auto& [key, alternatives] : by_key) {
    std::string any;
    std::vector<std::string> params;
    for (const SettingFilter& alternative : alternatives) {
      auto [condition, p] = SettingCondition(alternative);
      any += (any.empty() ? "(" : " OR ") + condition;
      params.insert(params.end(), p.begin(), p.end());
    }
    w.Add(any + ")", params);
  }
  if (!f.since.empty()) {
    auto since = ParseSince(f.since);
    if (!since.ok()) return since.error().Wrap("since");
    w.Add("started_at >= ?", {*since});
  }
  return w;
}

// SELECT `columns` of the rows `filter` selects that come before `after` (a cursor position;
// none when empty), newest first, at most `limit` of them (0: all). With statistics (Analyze)
// SQLite walks results_by_time when the filter keeps many rows and a filter's index, then the
// top of a sort, when it keeps few.
Result<Where> NewestSelect(const ResultFilter& filter, const std::string& columns,
                           const std::pair<std::string, std::string>& after, int64_t limit) {
  auto built = BuildWhere(filter);
  if (!built.ok()) return built.error();
  if (!after.second.empty()) {
    built->Add("(started_at, result_id) < (?, ?)", {after.first, after.second});
  }
  built->sql = "SELECT " + columns + " FROM results" + built->sql +
               " ORDER BY started_at DESC, result_id DESC" +
               (limit > 0 ? " LIMIT " + std::to_string(limit) : "");
  return built;
}

bool FilterIsEmpty(const ResultFilter& f) {
  return f.benchmarks.empty() && f.models.empty() && f.quants.empty() && f.status.empty() &&
         f.devices.empty() && f.runtimes.empty() && f.labels.empty() && f.settings.empty() &&
         f.since.empty();
}

std::string ToHex(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::optional<std::string> FromHex(const std::string& hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int v = 0;
    const auto [end, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, v, 16);
    if (ec != std::errc() || end != hex.data() + i + 2) return std::nullopt;
    out += static_cast<char>(v);
  }
  return out;
}

// The cursor: hex of "<started_at>|<result_id>|<rows listed before the next page>" (the count
// lets ResultFilter::limit cap the listing as a whole).
struct Cursor {
  std::string started_at, result_id;
  int64_t listed = 0;
};

std::string MakeCursor(const ResultRow& last, int64_t listed) {
  return ToHex(last.started_at + "|" + last.result_id + "|" + std::to_string(listed));
}

std::optional<Cursor> ParseCursor(const std::string& cursor) {
  auto text = FromHex(cursor);
  if (!text) return std::nullopt;
  const size_t bar2 = text->rfind('|');
  if (bar2 == std::string::npos || bar2 == 0) return std::nullopt;
  const size_t bar1 = text->rfind('|', bar2 - 1);
  if (bar1 == std::string::npos || bar1 == 0) return std::nullopt;
  Cursor c{text->substr(0, bar1), text->substr(bar1 + 1, bar2 - bar1 - 1), 0};
  const std::string listed = text->substr(bar2 + 1);
  const auto [end, ec] = std::from_chars(listed.data(), listed.data() + listed.size(), c.listed);
  if (ec != std::errc() || end != listed.data() + listed.size() || c.listed < 0 ||
      !store::IsLowercaseUuid(c.result_id)) {
    return std::nullopt;
  }
  return c;
}

json ParseJson(const std::string& text, json fallback) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? fallback : parsed;
}

std::vector<std::string> StringList(const std::string& text) {
  std::vector<std::string> out;
  const json parsed = ParseJson(text, json::array());
  if (!parsed.is_array()) return out;
  for (const json& v : parsed) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// CountMatching's counts, shared by the connections of one process to one database file: a count
// over many rows is taken once, not once per request thread. Thread-safe.
struct SharedCounts {
  explicit SharedCounts(const std::string&) {}
  struct Count {
    int64_t max_rowid = 0;  // the rows counted: rowid <= max_rowid
    int64_t count = 0;
  };
  std::optional<Count> Find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = counts.find(key);
    if (it == counts.end()) return std::nullopt;
    return it->second;
  }
  void Keep(const std::string& key, Count c) {
    std::lock_guard<std::mutex> lock(mu);
    if (counts.size() >= 256) counts.clear();
    Count& kept = counts[key];
    if (c.max_rowid >= kept.max_rowid) kept = c;
  }
  std::mutex mu;
  std::map<std::string, Count> counts;  // by WHERE text and parameters
};

class SqliteFleetStore final : public FleetStore {
 public:
  explicit SqliteFleetStore(std::unique_ptr<Db> db)
      : db_(std::move(db)),
        writer_(fleet_store::GroupCommitFor(db_->path())),
        counts_(fleet_store::PerFile<SharedCounts>(db_->path())) {
    writer_->Attach(*db_);
  }

  std::string backend() const override { return "sqlite"; }
  std::string where() const override { return db_->path(); }

  Status Ping() override {
    auto one = db_->QueryInt("SELECT 1");
    if (!one.ok()) return Err(one.error());
    return Status::Ok();
  }

  // --- clients ---------------------------------------------------------------------------

  Result<RegisterOutcome> Register(FleetClient client, const std::string& preauth,
                                   int64_t now) override {
    const std::string doing = "registering client " + client.client_id;
    fleet_store::GroupCommit::Exclusive writing(*writer_);
    WriteTransaction txn(*db_);
    if (Status s = txn.Begin(doing); !s.ok()) return Err(s.error());
    auto existing = db_->Prepare("SELECT 1 FROM clients WHERE public_key = ?1 OR client_id = ?2");
    if (!existing.ok()) return Err(existing.error());
    existing->Bind(1, client.public_key_hex);
    existing->Bind(2, client.client_id);
    auto found = existing->Step(doing);
    if (!found.ok()) return Err(found.error());
    if (*found) return RegisterOutcome::kAlreadyRegistered;

    client.status = ClientStatus::kPending;
    if (!preauth.empty()) {
      const auto token = fleet_store::ParsePreauthToken(preauth);
      if (!token) return RegisterOutcome::kBadPreauthKey;
      auto key = db_->Prepare(
          "SELECT secret_sha256, labels, expires_at, spent_at IS NOT NULL FROM preauth_keys "
          "WHERE key_id = ?");
      if (!key.ok()) return Err(key.error());
      key->Bind(1, token->key_id);
      auto has_key = key->Step(doing);
      if (!has_key.ok()) return Err(has_key.error());
      if (!*has_key) return RegisterOutcome::kBadPreauthKey;
      const int64_t expires_at = key->Int(2);
      if (key->Int(3) != 0 || (expires_at != 0 && expires_at <= now) ||
          !fleet_store::PreauthSecretMatches(token->secret_hex, key->Text(0))) {
        return RegisterOutcome::kBadPreauthKey;
      }
      for (const std::string& label : StringList(key->Text(1))) {
        if (std::find(client.labels.begin(), client.labels.end(), label) == client.labels.end()) {
          client.labels.push_back(label);
        }
      }
      auto spend = db_->Prepare(
          "UPDATE preauth_keys SET spent_at = ?1, spent_by = ?2 WHERE key_id = ?3 AND "
          "spent_at IS NULL");
      if (!spend.ok()) return Err(spend.error());
      spend->Bind(1, now);
      spend->Bind(2, client.client_id);
      spend->Bind(3, token->key_id);
      if (Status s = spend->Run(doing); !s.ok()) return Err(s.error());
      if (sqlite3_changes(db_->raw()) != 1) return RegisterOutcome::kBadPreauthKey;
      client.status = ClientStatus::kApproved;
    }
    auto insert = db_->Prepare(
        "INSERT INTO clients (client_id, public_key, status, label, labels, profile, "
        "capabilities, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    if (!insert.ok()) return Err(insert.error());
    insert->Bind(1, client.client_id);
    insert->Bind(2, client.public_key_hex);
    insert->Bind(3, std::string(ClientStatusName(client.status)));
    insert->Bind(4, client.label);
    insert->Bind(5, Dump(json(client.labels)));
    insert->Bind(6, Dump(client.profile.is_object() ? client.profile : json::object()));
    if (client.capabilities.is_null()) {
      insert->BindNull(7);
    } else {
      insert->Bind(7, Dump(client.capabilities));
    }
    insert->Bind(8, now);
    if (Status s = insert->Run(doing); !s.ok()) return Err(s.error());
    if (Status s = txn.Commit(doing); !s.ok()) return Err(s.error());
    return RegisterOutcome::kRegistered;
  }

  Result<std::optional<FleetClient>> GetClient(const std::string& client_id) override {
    auto clients = ReadClients(" WHERE client_id = ?", client_id);
    if (!clients.ok()) return clients.error();
    if (clients->empty()) return std::optional<FleetClient>();
    return std::optional<FleetClient>(std::move(clients->front()));
  }

  Result<std::vector<FleetClient>> ListClients() override {
    return ReadClients(" ORDER BY created_at, client_id", "");
  }

  Status SetClientStatus(const std::string& client_id, ClientStatus status) override {
    return UpdateClient("UPDATE clients SET status = ?1 WHERE client_id = ?2", client_id,
                        ClientStatusName(status), "setting the status of client " + client_id);
  }

  Status SetCapabilities(const std::string& client_id, const json& capabilities) override {
    return UpdateClient("UPDATE clients SET capabilities = ?1 WHERE client_id = ?2", client_id,
                        Dump(capabilities), "setting the capabilities of client " + client_id);
  }

  Status AddPreauthKey(const PreauthKey& key) override {
    const std::string doing = "adding pre-authorization key " + key.key_id;
    fleet_store::GroupCommit::Exclusive writing(*writer_);
    WriteTransaction txn(*db_);
    if (Status s = txn.Begin(doing); !s.ok()) return Err(s.error());
    auto insert = db_->Prepare(
        "INSERT OR IGNORE INTO preauth_keys (key_id, secret_sha256, labels, expires_at) "
        "VALUES (?, ?, ?, ?)");
    if (!insert.ok()) return Err(insert.error());
    insert->Bind(1, key.key_id);
    insert->Bind(2, key.secret_sha256);
    insert->Bind(3, Dump(json(key.labels)));
    insert->Bind(4, key.expires_at);
    if (Status s = insert->Run(doing); !s.ok()) return Err(s.error());
    if (sqlite3_changes(db_->raw()) != 1) {
      return Err(MakeError("pre-authorization key " + key.key_id + " exists; create a new one"));
    }
    if (Status s = txn.Commit(doing); !s.ok()) return Err(s.error());
    return Status::Ok();
  }

  Result<bool> UseNonce(const std::string& client_id, const std::string& nonce,
                        int64_t keep_until) override {
    bool fresh = false;
    Status s = writer_->Run(*db_, "recording a nonce", [&](Db& db) -> Status {
      auto inserted = InsertNonce(db, client_id, nonce, keep_until);
      if (!inserted.ok()) return inserted.error();
      fresh = *inserted;
      return Status::Ok();
    });
    if (!s.ok()) return Err(s.error());
    return fresh;
  }

  // Whether `client_id` is registered and approved, read inside the caller's transaction.
  static Result<bool> IsApproved(Db& db, const std::string& client_id) {
    auto select = db.Prepare("SELECT 1 FROM clients WHERE client_id = ? AND status = ?");
    if (!select.ok()) return select.error();
    select->Bind(1, client_id);
    select->Bind(2, std::string(ClientStatusName(ClientStatus::kApproved)));
    auto row = select->Step("reading client " + client_id);
    if (!row.ok()) return row.error();
    return *row;
  }

  // UseNonce's insert inside the caller's write transaction: false when it was used before.
  static Result<bool> InsertNonce(Db& db, const std::string& client_id, const std::string& nonce,
                                  int64_t keep_until) {
    auto insert =
        db.Prepare("INSERT OR IGNORE INTO nonces (client_id, nonce, keep_until) VALUES (?, ?, ?)");
    if (!insert.ok()) return insert.error();
    insert->Bind(1, client_id);
    insert->Bind(2, nonce);
    insert->Bind(3, keep_until);
    if (Status s = insert->Run("recording a nonce"); !s.ok()) return s.error();
    return sqlite3_changes(db.raw()) == 1;
  }

  Status PruneNonces(int64_t now) override {
    return Write("pruning nonces", [&]() -> Status {
      auto del = db_->Prepare("DELETE FROM nonces WHERE keep_until < ?");
      if (!del.ok()) return del.error();
      del->Bind(1, now);
      return del->Run("pruning nonces");
    });
  }

  // --- results ---------------------------------------------------------------------------

  Result<PutOutcome> PutResult(const json& record, const std::string& client_id,
                               int64_t now) override {
    return Put(record, std::nullopt, client_id, nullptr, 0, now);
  }

  Result<PutOutcome> PutResultWithNonce(const json& record, std::string_view text,
                                        const std::string& client_id, const std::string& nonce,
                                        int64_t keep_until, int64_t now) override {
    return Put(record, text, client_id, &nonce, keep_until, now);
  }

  std::shared_ptr<void> ExpectWrite() override { return writer_->Expect(); }

  // PutResult, spending `nonce` first in the same transaction when there is one; `text` (the
  // text `record` was parsed from) is stored as the record when given.
  Result<PutOutcome> Put(const json& record, std::optional<std::string_view> text,
                         const std::string& client_id, const std::string* nonce,
                         int64_t keep_until, int64_t now) {
    const std::string doing = "storing result " + record::StringAt(record, "/result_id");
    auto prepared = PreparePut(record, text, db_->path());
    if (!prepared.ok()) return Err(prepared.error());
    PutOutcome outcome = PutOutcome::kSame;
    bool put_failed = false;  // its error says "fleet store" already
    Status s = writer_->Run(*db_, doing, [&](Db& db) -> Status {
      if (nonce != nullptr) {
        auto approved = IsApproved(db, client_id);
        if (!approved.ok()) return approved.error();
        if (!*approved) {
          outcome = PutOutcome::kClientNotApproved;
          return Status::Ok();
        }
        auto fresh = InsertNonce(db, client_id, *nonce, keep_until);
        if (!fresh.ok()) return fresh.error();
        if (!*fresh) {
          outcome = PutOutcome::kReplayed;
          return Status::Ok();
        }
      }
      auto put = PutInTransaction(db, *prepared, client_id, now);
      if (!put.ok()) {
        put_failed = true;
        return put.error();
      }
      outcome = *put;
      return Status::Ok();
    });
    if (!s.ok()) return put_failed ? s.error() : Err(s.error());
    return outcome;
  }

  Result<ResultPage> ListResults(const ResultFilter& filter, int page_size,
                                 const std::string& cursor, ListOptions options) override {
    auto built = BuildWhere(filter);
    if (!built.ok()) return built.error();
    Where where = std::move(*built);
    ResultPage page;
    // The total first, before the cursor narrows the rows.
    if (FilterIsEmpty(filter)) {
      auto count = CountResults();
      if (!count.ok()) return count.error();
      page.total = *count;
    } else {
      auto count = CountMatching(where);
      if (!count.ok()) return count.error();
      page.total = *count;
    }
    if (filter.limit > 0) page.total = std::min<int64_t>(page.total, filter.limit);
    int64_t listed = 0;  // rows on earlier pages
    std::pair<std::string, std::string> after;
    if (!cursor.empty()) {
      auto parsed = ParseCursor(cursor);
      if (!parsed) return Err(MakeError(db_->path() + ": bad cursor; start from the first page"));
      after = {parsed->started_at, parsed->result_id};
      listed = parsed->listed;
    }
    int64_t size = std::max(1, page_size);
    if (filter.limit > 0) size = std::min<int64_t>(size, filter.limit - listed);
    if (size <= 0) return page;
    auto select = NewestSelect(filter, kRowColumns, after, size + 1);
    if (!select.ok()) return select.error();
    auto stmt = db_->Prepare(select->sql);
    if (!stmt.ok()) return Err(stmt.error());
    for (size_t i = 0; i < select->params.size(); ++i) stmt->Bind(int(i) + 1, select->params[i]);
    for (;;) {
      auto has_row = stmt->Step("listing results");
      if (!has_row.ok()) return Err(has_row.error());
      if (!*has_row) break;
      page.rows.push_back(ReadRow(*stmt));
    }
    if (options.short_ids) {
      if (Status s = SetShortIds(page.rows); !s.ok()) return Err(s.error());
    }
    if (static_cast<int64_t>(page.rows.size()) > size) {
      page.rows.pop_back();
      listed += size;
      if (filter.limit <= 0 || listed < filter.limit) {
        page.next = MakeCursor(page.rows.back().row, listed);
      }
    }
    return page;
  }

  Result<std::vector<std::string>> RecentBenchmarkIds(const ResultFilter& filter,
                                                      int newest) override {
    auto select = NewestSelect(filter, "benchmark_id", {}, std::max(1, newest));
    if (!select.ok()) return select.error();
    auto stmt = db_->Prepare("SELECT DISTINCT benchmark_id FROM (" + select->sql +
                             ") ORDER BY benchmark_id");
    if (!stmt.ok()) return Err(stmt.error());
    for (size_t i = 0; i < select->params.size(); ++i) stmt->Bind(int(i) + 1, select->params[i]);
    std::vector<std::string> ids;
    for (;;) {
      auto has_row = stmt->Step("listing benchmark ids");
      if (!has_row.ok()) return Err(has_row.error());
      if (!*has_row) return ids;
      ids.push_back(stmt->Text(0));
    }
  }

  // Each row's short id from its neighbours in id order (two probes of the primary key).
  Status SetShortIds(std::vector<FleetResultRow>& rows) {
    auto stmt = db_->Prepare(
        "SELECT (SELECT max(result_id) FROM results WHERE result_id < ?1), "
        "(SELECT min(result_id) FROM results WHERE result_id > ?1)");
    if (!stmt.ok()) return stmt.error();
    for (FleetResultRow& row : rows) {
      stmt->Reset();
      stmt->Bind(1, row.row.result_id);
      auto has = stmt->Step("listing results");
      if (!has.ok()) return has.error();
      row.row.short_id = fleet_store::FleetShortId(row.row.result_id, stmt->Text(0), stmt->Text(1));
    }
    return {};
  }

  Result<std::optional<json>> GetResult(const std::string& result_id) override {
    auto stmt = db_->Prepare("SELECT record FROM results WHERE result_id = ?");
    if (!stmt.ok()) return Err(stmt.error());
    stmt->Bind(1, result_id);
    auto row = stmt->Step("reading result " + result_id);
    if (!row.ok()) return Err(row.error());
    if (!*row) return std::optional<json>();
    json record = json::parse(stmt->Text(0), nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) {
      return Err(MakeError("stored record " + result_id + " is not valid JSON"));
    }
    return std::optional<json>(std::move(record));
  }

  Result<std::vector<std::string>> ResultIdsStartingWith(const std::string& prefix,
                                                         int limit) override {
    // A range on the primary key: every id starting with the prefix sorts in [prefix, prefix\x7f).
    auto stmt = db_->Prepare(
        "SELECT result_id FROM results WHERE result_id >= ? AND result_id < ? "
        "ORDER BY result_id LIMIT ?");
    if (!stmt.ok()) return Err(stmt.error());
    stmt->Bind(1, prefix);
    stmt->Bind(2, prefix + "\x7f");
    stmt->Bind(3, static_cast<int64_t>(limit));
    std::vector<std::string> ids;
    for (;;) {
      auto row = stmt->Step("looking up result ids starting with " + prefix);
      if (!row.ok()) return Err(row.error());
      if (!*row) return ids;
      ids.push_back(stmt->Text(0));
    }
  }

  Result<std::vector<std::string>> RecordTexts(
      const std::vector<std::string>& result_ids) override {
    std::vector<std::string> texts(result_ids.size());
    if (result_ids.empty()) return texts;
    std::string marks;
    for (size_t i = 0; i < result_ids.size(); ++i) marks += i ? ", ?" : "?";
    auto stmt =
        db_->Prepare("SELECT result_id, record FROM results WHERE result_id IN (" + marks + ")");
    if (!stmt.ok()) return Err(stmt.error());
    std::map<std::string, std::vector<size_t>> where;
    for (size_t i = 0; i < result_ids.size(); ++i) {
      stmt->Bind(static_cast<int>(i) + 1, result_ids[i]);
      where[result_ids[i]].push_back(i);
    }
    for (;;) {
      auto has_row = stmt->Step("reading results");
      if (!has_row.ok()) return Err(has_row.error());
      if (!*has_row) return texts;
      for (size_t i : where[stmt->Text(0)]) texts[i] = stmt->Text(1);
    }
  }

  Result<std::vector<json>> Records(const ResultFilter& filter, RecordParts parts) override {
    const std::string record =
        parts == RecordParts::kSummary
            ? "json_object('result_id', result_id, 'status', status, 'benchmark', "
              "json_object('id', benchmark_id, 'type', benchmark_type), 'model', "
              "json_object('file_name', model_file, 'sha256', model_sha256, 'quant', quant), "
              "'runtime', json_object('name', runtime, 'settings', json(settings)), 'device', "
              "json_object('id', device_id, 'label', label), 'metrics', "
              "json_extract(record, '$.metrics'))"
            : std::string("record");
    auto built = NewestSelect(filter, "result_id, " + record, {}, filter.limit);
    if (!built.ok()) return built.error();
    const Where& where = *built;
    auto stmt = db_->Prepare(where.sql);
    if (!stmt.ok()) return Err(stmt.error());
    for (size_t i = 0; i < where.params.size(); ++i) stmt->Bind(int(i) + 1, where.params[i]);
    std::vector<json> records;
    for (;;) {
      auto has_row = stmt->Step("reading results");
      if (!has_row.ok()) return Err(has_row.error());
      if (!*has_row) return records;
      json record = json::parse(stmt->Text(1), nullptr, /*allow_exceptions=*/false);
      if (record.is_discarded()) {
        return Err(MakeError("stored record " + stmt->Text(0) + " is not valid JSON"));
      }
      records.push_back(std::move(record));
    }
  }

  Result<int64_t> CountResults() override {
    auto count = db_->QueryText("SELECT value FROM meta WHERE key = 'result_count'");
    if (!count.ok()) return Err(count.error());
    return count->has_value() ? std::strtoll((*count)->c_str(), nullptr, 10) : int64_t{0};
  }

  // --- plans and jobs --------------------------------------------------------------------

  Result<std::string> CreatePlan(const std::string& name, const std::vector<json>& specs,
                                 int64_t expires_at, int64_t now) override {
    const std::string plan_id = fleet_store::NewPlanId();
    const std::string doing = "creating plan " + name;
    Status s = Write(doing, [&]() -> Status {
      auto plan = db_->Prepare(
          "INSERT INTO plans (plan_id, name, created_at, expires_at) VALUES (?, ?, ?, ?)");
      if (!plan.ok()) return plan.error();
      plan->Bind(1, plan_id);
      plan->Bind(2, name);
      plan->Bind(3, now);
      plan->Bind(4, expires_at);
      if (Status s = plan->Run(doing); !s.ok()) return s;
      auto job = db_->Prepare(
          "INSERT INTO jobs (job_id, plan_id, idx, spec, state, expires_at, created_at) "
          "VALUES (?, ?, ?, ?, 'queued', ?, ?)");
      if (!job.ok()) return job.error();
      for (size_t i = 0; i < specs.size(); ++i) {
        job->Reset();
        job->Bind(1, fleet_store::NewJobId());
        job->Bind(2, plan_id);
        job->Bind(3, static_cast<int64_t>(i));
        job->Bind(4, Dump(specs[i]));
        job->Bind(5, expires_at);
        job->Bind(6, now);
        if (Status s = job->Run(doing); !s.ok()) return s;
      }
      return Status::Ok();
    });
    if (!s.ok()) return s.error();
    return plan_id;
  }

  Result<std::optional<Job>> Claim(const std::string& client_id, const json& capabilities,
                                   int64_t now, int lease_s) override {
    const std::string doing = "claiming a job for " + client_id;
    std::optional<std::string> claimed;
    Status s = Write(doing, [&]() -> Status {
      if (auto requeued = Requeue(now); !requeued.ok()) return requeued.error();
      auto expire = db_->Prepare(
          "UPDATE jobs SET state = 'expired' WHERE state = 'queued' AND expires_at > 0 AND "
          "expires_at < ?");
      if (!expire.ok()) return expire.error();
      expire->Bind(1, now);
      if (Status s = expire->Run(doing); !s.ok()) return s;
      auto caps = db_->Prepare("UPDATE clients SET capabilities = ? WHERE client_id = ?");
      if (!caps.ok()) return caps.error();
      caps->Bind(1, Dump(capabilities));
      caps->Bind(2, client_id);
      if (Status s = caps->Run(doing); !s.ok()) return s;

      auto queued = db_->Prepare(
          "SELECT job_id, json_extract(spec, '$.requires') FROM jobs WHERE state = 'queued' AND "
          "NOT EXISTS (SELECT 1 FROM job_failures f WHERE f.job_id = jobs.job_id AND "
          "f.client_id = ?) ORDER BY created_at, idx, rowid");
      if (!queued.ok()) return queued.error();
      queued->Bind(1, client_id);
      for (;;) {
        auto row = queued->Step(doing);
        if (!row.ok()) return row.error();
        if (!*row) return Status::Ok();
        const json requirements = ParseJson(queued->Text(1), json());
        if (JobMatches(requirements, capabilities)) {
          claimed = queued->Text(0);
          break;
        }
      }
      auto lease = db_->Prepare(
          "UPDATE jobs SET state = 'leased', client_id = ?, lease_expires_at = ?, "
          "attempts = attempts + 1 WHERE job_id = ?");
      if (!lease.ok()) return lease.error();
      lease->Bind(1, client_id);
      lease->Bind(2, now + lease_s);
      lease->Bind(3, *claimed);
      return lease->Run(doing);
    });
    if (!s.ok()) return s.error();
    if (!claimed) return std::optional<Job>();
    auto job = ReadJob(*claimed);
    if (!job.ok()) return job.error();
    return std::optional<Job>(std::move(*job));
  }

  Result<bool> Heartbeat(const std::string& job_id, const std::string& client_id, int64_t now,
                         int lease_s) override {
    bool held = false;
    const std::string doing = "extending the lease of job " + job_id;
    Status s = Write(doing, [&]() -> Status {
      // A lease that ran out but was not yet given to anyone else is still this client's.
      auto extend = db_->Prepare(
          "UPDATE jobs SET lease_expires_at = ? WHERE job_id = ? AND state = 'leased' AND "
          "client_id = ?");
      if (!extend.ok()) return extend.error();
      extend->Bind(1, now + lease_s);
      extend->Bind(2, job_id);
      extend->Bind(3, client_id);
      if (Status s = extend->Run(doing); !s.ok()) return s;
      held = sqlite3_changes(db_->raw()) == 1;
      return Status::Ok();
    });
    if (!s.ok()) return s.error();
    return held;
  }

  Result<CompleteOutcome> Complete(const std::string& job_id, const std::string& client_id,
                                   const json& record, int64_t now) override {
    const std::string doing = "completing job " + job_id;
    auto prepared = PreparePut(record, std::nullopt, db_->path());
    if (!prepared.ok()) return Err(prepared.error());
    fleet_store::GroupCommit::Exclusive writing(*writer_);
    WriteTransaction txn(*db_);
    if (Status s = txn.Begin(doing); !s.ok()) return Err(s.error());
    CompleteOutcome out;
    auto put = PutInTransaction(*db_, *prepared, client_id, now);
    if (!put.ok()) return put.error();
    out.put = *put;
    const std::string result_id = record::StringAt(record, "/result_id");
    auto job = db_->Prepare("SELECT state, client_id, result_id FROM jobs WHERE job_id = ?");
    if (!job.ok()) return Err(job.error());
    job->Bind(1, job_id);
    auto found = job->Step(doing);
    if (!found.ok()) return Err(found.error());
    const std::string state = *found ? job->Text(0) : "";
    const std::string holder = *found ? job->Text(1) : "";
    const std::string done_with = *found ? job->Text(2) : "";
    if (state == "done" && done_with == result_id) {
      out.lease_held = true;
    } else if (state == "leased" && holder == client_id) {
      out.lease_held = true;
      if (out.put != PutOutcome::kConflict) {
        auto done = db_->Prepare(
            "UPDATE jobs SET state = 'done', result_id = ?, lease_expires_at = 0 WHERE job_id = ?");
        if (!done.ok()) return Err(done.error());
        done->Bind(1, result_id);
        done->Bind(2, job_id);
        if (Status s = done->Run(doing); !s.ok()) return Err(s.error());
      }
    } else {
      out.lease_held = false;
    }
    if (Status s = txn.Commit(doing); !s.ok()) return Err(s.error());
    return out;
  }

  Result<std::pair<JobState, bool>> Fail(const std::string& job_id, const std::string& client_id,
                                         const std::string& reason, bool retriable,
                                         int64_t now) override {
    const std::string doing = "recording a failure of job " + job_id;
    std::pair<JobState, bool> out{JobState::kQueued, false};
    Status s = Write(doing, [&]() -> Status {
      auto job = db_->Prepare("SELECT state, client_id, spec FROM jobs WHERE job_id = ?");
      if (!job.ok()) return job.error();
      job->Bind(1, job_id);
      auto found = job->Step(doing);
      if (!found.ok()) return found.error();
      if (!*found) return Status::Ok();  // no such job: not leased to this client
      out.first = fleet_store::ParseJobState(job->Text(0)).value_or(JobState::kQueued);
      if (out.first != JobState::kLeased || job->Text(1) != client_id) return Status::Ok();
      out.second = true;
      const json requirements = ParseJson(job->Text(2), json::object()).value("requires", json());

      auto insert = db_->Prepare(
          "INSERT INTO job_failures (job_id, client_id, reason, at, retriable) "
          "VALUES (?, ?, ?, ?, ?)");
      if (!insert.ok()) return insert.error();
      insert->Bind(1, job_id);
      insert->Bind(2, client_id);
      insert->Bind(3, reason);
      insert->Bind(4, now);
      insert->Bind(5, static_cast<int64_t>(retriable ? 1 : 0));
      if (Status s = insert->Run(doing); !s.ok()) return s;

      bool failed = !retriable;
      if (retriable) {
        auto left = AnyEligibleLeft(job_id, requirements);
        if (!left.ok()) return left.error();
        failed = !*left;
      }
      out.first = failed ? JobState::kFailed : JobState::kQueued;
      auto update = db_->Prepare(
          "UPDATE jobs SET state = ?, client_id = '', lease_expires_at = 0 WHERE job_id = ?");
      if (!update.ok()) return update.error();
      update->Bind(1, std::string(JobStateName(out.first)));
      update->Bind(2, job_id);
      return update->Run(doing);
    });
    if (!s.ok()) return s.error();
    return out;
  }

  Result<int> RequeueExpired(int64_t now) override {
    int count = 0;
    Status s = Write("returning expired leases to the queue", [&]() -> Status {
      auto requeued = Requeue(now);
      if (!requeued.ok()) return requeued.error();
      count = *requeued;
      return Status::Ok();
    });
    if (!s.ok()) return s.error();
    return count;
  }

  Result<std::optional<PlanStatus>> GetPlan(const std::string& plan_id) override {
    auto plans = ReadPlans(" WHERE plan_id = ?", plan_id);
    if (!plans.ok()) return plans.error();
    if (plans->empty()) return std::optional<PlanStatus>();
    PlanStatus plan = std::move(plans->front());
    auto jobs = ReadJobs(" WHERE plan_id = ? ORDER BY idx", plan_id);
    if (!jobs.ok()) return jobs.error();
    plan.jobs = std::move(*jobs);
    auto failures = db_->Prepare(
        "SELECT f.job_id, f.client_id, f.reason, f.at FROM job_failures f JOIN jobs j ON "
        "j.job_id = f.job_id WHERE j.plan_id = ? ORDER BY f.at, f.rowid");
    if (!failures.ok()) return Err(failures.error());
    failures->Bind(1, plan_id);
    std::map<std::string, Job*> by_id;
    for (Job& job : plan.jobs) by_id[job.job_id] = &job;
    for (;;) {
      auto row = failures->Step("reading plan " + plan_id);
      if (!row.ok()) return Err(row.error());
      if (!*row) break;
      auto it = by_id.find(failures->Text(0));
      if (it == by_id.end()) continue;
      it->second->failures.push_back({failures->Text(1), failures->Text(2), failures->Int(3)});
    }
    return std::optional<PlanStatus>(std::move(plan));
  }

  Result<std::vector<PlanStatus>> ListPlans() override {
    return ReadPlans(" ORDER BY created_at DESC, plan_id", "");
  }

 private:
  Error Err(const Error& error) const {
    return MakeError("fleet store " + error.message, error.stage);
  }

  // Runs `body` in one write transaction, committing when it succeeds.
  template <typename Body>
  Status Write(const std::string& doing, Body body) {
    fleet_store::GroupCommit::Exclusive writing(*writer_);
    WriteTransaction txn(*db_);
    if (Status s = txn.Begin(doing); !s.ok()) return Err(s.error());
    if (Status s = body(); !s.ok()) return Err(s.error());
    if (Status s = txn.Commit(doing); !s.ok()) return Err(s.error());
    return Status::Ok();
  }

  Status UpdateClient(const std::string& sql, const std::string& client_id,
                      const std::string& value, const std::string& doing) {
    return Write(doing, [&]() -> Status {
      auto update = db_->Prepare(sql);
      if (!update.ok()) return update.error();
      update->Bind(1, value);
      update->Bind(2, client_id);
      if (Status s = update->Run(doing); !s.ok()) return s;
      if (sqlite3_changes(db_->raw()) != 1) {
        return MakeError(db_->path() + ": no client " + client_id +
                         " (pipette serve clients list shows them)");
      }
      return Status::Ok();
    });
  }

  Result<std::vector<FleetClient>> ReadClients(const std::string& tail, const std::string& param) {
    auto stmt = db_->Prepare(
        "SELECT client_id, public_key, status, label, labels, profile, capabilities, created_at "
        "FROM clients" +
        tail);
    if (!stmt.ok()) return Err(stmt.error());
    if (!param.empty()) stmt->Bind(1, param);
    std::vector<FleetClient> out;
    for (;;) {
      auto row = stmt->Step("reading clients");
      if (!row.ok()) return Err(row.error());
      if (!*row) return out;
      FleetClient c;
      c.client_id = stmt->Text(0);
      c.public_key_hex = stmt->Text(1);
      c.status = fleet_store::ParseClientStatus(stmt->Text(2)).value_or(ClientStatus::kPending);
      c.label = stmt->Text(3);
      c.labels = StringList(stmt->Text(4));
      client_json_.Fill(c, stmt->Text(5), stmt->Text(6));
      c.created_at = stmt->Int(7);
      out.push_back(std::move(c));
    }
  }

  // What PutInTransaction writes, worked out before the writer lock is taken: validating and
  // serializing a record is most of a submission's time and needs no database.
  struct PreparedPut {
    std::string text;             // what is stored and compared
    const json* input = nullptr;   // the caller's record; outlives this
    std::optional<json> reparsed;  // the record as stored, when `text` differs from the input
    const json& record() const { return reparsed ? *reparsed : *input; }
    store::IndexedColumns columns;
    std::string quant_label;
    std::optional<double> ci_low, ci_high;
    int64_t headline_n = 0;
    bool ci_reached = true;
    std::string settings;
  };

  static Result<PreparedPut> PreparePut(const json& input, std::optional<std::string_view> text,
                                        const std::string& path) {
    if (Status s = store::ValidateRecord(input); !s.ok()) {
      return MakeError(path + ": invalid result record: " + s.error().message);
    }
    PreparedPut p;
    p.input = &input;
    try {
      // A parsed text is valid JSON and UTF-8 already: serializing it again would cost a tenth
      // of a submission's CPU. Only compact text is kept as it is (RecordTexts' promise).
      p.text = text && fleet_store::IsCompactJson(*text)
                   ? std::string(*text)
                   : input.dump(-1, ' ', false, json::error_handler_t::strict);
    } catch (const json::type_error&) {
      // Invalid UTF-8 (a record made in process; a parsed body has none) becomes U+FFFD, as in
      // any JSON text, and the columns come from what is stored.
      p.text = Dump(input);
      p.reparsed = json::parse(p.text, nullptr, /*allow_exceptions=*/false);
    }
    const json& record = p.record();
    p.columns = store::ExtractColumns(record);
    const store::IndexedColumns& c = p.columns;
    p.quant_label = fleet_store::RecordQuantLabel(record);
    const std::string metric = "/metrics/" + c.headline_metric;
    const auto number = [&](const json* v) -> std::optional<double> {
      if (c.headline_metric.empty() || v == nullptr || !v->is_number()) return std::nullopt;
      return v->get<double>();
    };
    p.ci_low = number(record::Find(record, metric + "/ci95_low"));
    p.ci_high = number(record::Find(record, metric + "/ci95_high"));
    p.headline_n = static_cast<int64_t>(number(record::Find(record, metric + "/n")).value_or(0));
    // Nothing says the result is noisy unless the harness recorded so.
    const json* ci_reached = record::Find(record, "/harness/ci_reached");
    p.ci_reached = !(ci_reached != nullptr && ci_reached->is_boolean() && !*ci_reached);
    const json* settings = record::Find(record, "/runtime/settings");
    p.settings = Dump(settings != nullptr && settings->is_object() ? *settings : json::object());
    return p;
  }

  // PutResult's work inside the caller's write transaction. Only kStored changed anything.
  Result<PutOutcome> PutInTransaction(Db& db, const PreparedPut& p, const std::string& client_id,
                                      int64_t now) {
    const store::IndexedColumns& c = p.columns;
    const std::string& id = c.result_id;
    const std::string doing = "storing result " + id;
    auto existing = db.Prepare("SELECT record FROM results WHERE result_id = ?");
    if (!existing.ok()) return Err(existing.error());
    existing->Bind(1, id);
    auto found = existing->Step(doing);
    if (!found.ok()) return Err(found.error());
    if (*found) {
      const std::string stored = existing->Text(0);
      if (stored == p.text || ParseJson(stored, json()) == p.record()) return PutOutcome::kSame;
      return PutOutcome::kConflict;
    }
    // ProfileMismatch reads the profile's id only.
    json profile = json::object();
    auto client = db.Prepare(
        "SELECT CASE json_type(profile, '$.id') WHEN 'text' THEN json_extract(profile, '$.id') "
        "ELSE '' END FROM clients WHERE client_id = ? AND json_valid(profile)");
    if (!client.ok()) return Err(client.error());
    client->Bind(1, client_id);
    auto has_client = client->Step(doing);
    if (!has_client.ok()) return Err(has_client.error());
    if (*has_client) profile["id"] = client->Text(0);

    auto insert = db.Prepare(
        "INSERT INTO results (result_id, client_id, received_at, config_id, status, "
        "benchmark_id, benchmark_type, model_file, model_sha256, quant, quant_label, runtime, "
        "device_id, label, started_at, threads, headline_metric, headline_unit, headline, ci_low, "
        "ci_high, headline_n, ci_reached, profile_mismatch, settings, record) VALUES (?1, ?2, ?3, "
        "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, "
        "?22, ?23, ?24, ?25, ?26)");
    if (!insert.ok()) return Err(insert.error());
    insert->Bind(1, c.result_id);
    insert->Bind(2, client_id);
    insert->Bind(3, now);
    const std::string* texts[] = {&c.config_id,      &c.status,     &c.benchmark_id,
                                  &c.benchmark_type, &c.model_file, &c.model_sha256,
                                  &c.quant};
    for (int i = 0; i < 7; ++i) insert->Bind(4 + i, *texts[i]);
    insert->Bind(11, p.quant_label);
    insert->Bind(12, c.runtime);
    insert->Bind(13, c.device_id);
    insert->Bind(14, c.label);
    insert->Bind(15, c.started_at);
    insert->Bind(16, c.threads);
    insert->Bind(17, c.headline_metric);
    insert->Bind(18, c.headline_unit);
    insert->Bind(19, c.headline);
    insert->Bind(20, p.ci_low);
    insert->Bind(21, p.ci_high);
    insert->Bind(22, p.headline_n);
    insert->Bind(23, static_cast<int64_t>(p.ci_reached ? 1 : 0));
    insert->Bind(24,
                 static_cast<int64_t>(fleet_store::ProfileMismatch(p.record(), profile) ? 1 : 0));
    insert->Bind(25, p.settings);
    insert->Bind(26, p.text);
    if (Status s = insert->Run(doing); !s.ok()) return Err(s.error());
    auto model = db.Prepare(
        "INSERT OR IGNORE INTO result_models (model_sha256, model_file) VALUES (?, ?)");
    if (!model.ok()) return Err(model.error());
    model->Bind(1, c.model_sha256);
    model->Bind(2, c.model_file);
    if (Status s = model->Run(doing); !s.ok()) return Err(s.error());
    auto count = db.Prepare(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'result_count'");
    if (!count.ok()) return Err(count.error());
    if (Status s = count->Run(doing); !s.ok()) return Err(s.error());
    return PutOutcome::kStored;
  }

  // The number of results `where` selects. Results are never deleted and their rowids only grow,
  // so a count taken at max(rowid) M stays exact: later, only rows past M are counted (a short
  // rowid range) and added. Dashboards repeat their filters; this keeps their totals cheap.
  Result<int64_t> CountMatching(const Where& where) {
    auto max_rowid = db_->QueryInt("SELECT coalesce(max(rowid), 0) FROM results");
    if (!max_rowid.ok()) return Err(max_rowid.error());
    const int64_t now_max = max_rowid->value_or(0);
    std::string key = where.sql;
    for (const std::string& p : where.params) key += '\0' + p;
    const std::optional<SharedCounts::Count> cached = counts_->Find(key);
    int64_t from = 0, base = 0;
    if (cached && cached->max_rowid <= now_max) {
      from = cached->max_rowid;
      base = cached->count;
      if (from == now_max) return base;
    }
    // NOT INDEXED: the new rows are read by rowid, whatever index the filter could use.
    std::string sql = "SELECT count(*) FROM results";
    if (from > 0) {
      sql += " NOT INDEXED WHERE rowid > ? AND rowid <= ?";
      if (!where.sql.empty()) sql += " AND" + where.sql.substr(std::string(" WHERE").size());
    } else {
      // +rowid: the filter's index serves the count (its entries hold the rowid), not a walk of
      // the whole table in rowid order.
      sql += where.sql + (where.sql.empty() ? " WHERE" : " AND") + " +rowid <= ?";
    }
    auto count = db_->Prepare(sql);
    if (!count.ok()) return Err(count.error());
    int bound = 1;  // parameters in the order of the text
    if (from > 0) {
      count->Bind(bound++, from);
      count->Bind(bound++, now_max);
    }
    for (const std::string& p : where.params) count->Bind(bound++, p);
    if (from == 0) count->Bind(bound++, now_max);
    auto row = count->Step("counting results");
    if (!row.ok()) return Err(row.error());
    const int64_t total = base + (*row ? count->Int(0) : 0);
    counts_->Keep(key, {now_max, total});
    return total;
  }

  // Returns expired leases to the queue, inside the caller's transaction.
  Result<int> Requeue(int64_t now) {
    auto requeue = db_->Prepare(
        "UPDATE jobs SET state = 'queued', client_id = '', lease_expires_at = 0 WHERE "
        "state = 'leased' AND lease_expires_at < ?");
    if (!requeue.ok()) return requeue.error();
    requeue->Bind(1, now);
    if (Status s = requeue->Run("returning expired leases to the queue"); !s.ok()) {
      return s.error();
    }
    return sqlite3_changes(db_->raw());
  }

  // Whether an approved client whose capabilities match `requirements` has not failed the job yet.
  Result<bool> AnyEligibleLeft(const std::string& job_id, const json& requirements) {
    auto clients = db_->Prepare(
        "SELECT c.capabilities FROM clients c WHERE c.status = 'approved' AND "
        "c.capabilities IS NOT NULL AND NOT EXISTS (SELECT 1 FROM job_failures f WHERE "
        "f.job_id = ? AND f.client_id = c.client_id)");
    if (!clients.ok()) return clients.error();
    clients->Bind(1, job_id);
    for (;;) {
      auto row = clients->Step("finding the devices of job " + job_id);
      if (!row.ok()) return row.error();
      if (!*row) return false;
      if (JobMatches(requirements, ParseJson(clients->Text(0), json()))) return true;
    }
  }

  Result<std::vector<PlanStatus>> ReadPlans(const std::string& tail, const std::string& param) {
    auto stmt = db_->Prepare("SELECT plan_id, name, created_at FROM plans" + tail);
    if (!stmt.ok()) return Err(stmt.error());
    if (!param.empty()) stmt->Bind(1, param);
    std::vector<PlanStatus> out;
    for (;;) {
      auto row = stmt->Step("reading plans");
      if (!row.ok()) return Err(row.error());
      if (!*row) return out;
      PlanStatus p;
      p.plan_id = stmt->Text(0);
      p.name = stmt->Text(1);
      p.created_at = stmt->Int(2);
      out.push_back(std::move(p));
    }
  }

  Result<std::vector<Job>> ReadJobs(const std::string& tail, const std::string& param) {
    auto stmt = db_->Prepare(
        "SELECT job_id, plan_id, idx, spec, state, client_id, lease_expires_at, attempts, "
        "result_id, expires_at FROM jobs" +
        tail);
    if (!stmt.ok()) return Err(stmt.error());
    stmt->Bind(1, param);
    std::vector<Job> out;
    for (;;) {
      auto row = stmt->Step("reading jobs");
      if (!row.ok()) return Err(row.error());
      if (!*row) return out;
      Job j;
      j.job_id = stmt->Text(0);
      j.plan_id = stmt->Text(1);
      j.index = static_cast<int>(stmt->Int(2));
      j.spec = ParseJson(stmt->Text(3), json::object());
      j.state = fleet_store::ParseJobState(stmt->Text(4)).value_or(JobState::kQueued);
      j.client_id = stmt->Text(5);
      j.lease_expires_at = stmt->Int(6);
      j.attempts = static_cast<int>(stmt->Int(7));
      j.result_id = stmt->Text(8);
      j.expires_at = stmt->Int(9);
      out.push_back(std::move(j));
    }
  }

  // One job with its failures.
  Result<Job> ReadJob(const std::string& job_id) {
    auto jobs = ReadJobs(" WHERE job_id = ?", job_id);
    if (!jobs.ok()) return jobs.error();
    if (jobs->empty()) return Err(MakeError(db_->path() + ": job " + job_id + " vanished"));
    Job job = std::move(jobs->front());
    auto failures = db_->Prepare(
        "SELECT client_id, reason, at FROM job_failures WHERE job_id = ? ORDER BY at, rowid");
    if (!failures.ok()) return Err(failures.error());
    failures->Bind(1, job_id);
    for (;;) {
      auto row = failures->Step("reading job " + job_id);
      if (!row.ok()) return Err(row.error());
      if (!*row) return job;
      job.failures.push_back({failures->Text(0), failures->Text(1), failures->Int(2)});
    }
  }

  std::unique_ptr<Db> db_;
  fleet_store::ClientJsonCache client_json_;
  // One writer at a time per database file within this process, and concurrent submissions in
  // one transaction. The server holds one store per request thread on the same file; left to
  // SQLite, a writer that finds the lock taken sleeps in its busy handler (1 ms, then 2, 5, 10 ...
  // 100 ms) however soon the lock frees. Other processes still meet SQLite's busy timeout.
  std::shared_ptr<fleet_store::GroupCommit> writer_;
  std::shared_ptr<SharedCounts> counts_;  // PerFile(path)
};

// Creates the schema in an empty file, or checks the version of an existing one.
Status EnsureSchema(Db& db) {
  WriteTransaction txn(db);
  if (Status s = txn.Begin("creating the schema"); !s.ok()) return s;
  auto has_meta =
      db.QueryInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
  if (!has_meta.ok()) return has_meta.error();
  if (has_meta->value_or(0) == 0) {
    if (Status s = db.Exec(kSchema, "creating the schema"); !s.ok()) return s;
    return txn.Commit("creating the schema");
  }
  auto version = db.QueryText("SELECT value FROM meta WHERE key = 'schema_version'");
  if (!version.ok()) return version.error();
  const int v = version->has_value() ? std::atoi((*version)->c_str()) : 0;
  if (v > kSchemaVersion) {
    return MakeError(db.path() + ": fleet schema version " + std::to_string(v) +
                     " is newer than this pipette understands (" + std::to_string(kSchemaVersion) +
                     "); upgrade pipette");
  }
  if (v < 1) {
    return MakeError(db.path() +
                     ": not a pipette fleet database (no schema version); give "
                     "another fleet database");
  }
  if (v == 1) {
    // Version 2: the newest-first index carries benchmark_id, so the dashboard's listings of a
    // family of benchmarks (benchmark_id IN (...), newest first) filter in the index and read
    // only the rows they list from the table. Rebuilding it reads the table once (35 s for
    // 1,000,000 results here).
    if (Status s = db.Exec("DROP INDEX results_by_time; CREATE INDEX results_by_time ON results "
                           "(started_at DESC, result_id DESC, benchmark_id); UPDATE meta SET "
                           "value = '2' WHERE key = 'schema_version'",
                           "upgrading the fleet schema to version 2");
        !s.ok()) {
      return s;
    }
    return txn.Commit("upgrading the fleet schema to version 2");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<FleetStore>> OpenSqliteFleetStore(const std::string& path,
                                                         int64_t max_size_bytes) {
  const auto fail = [&](const Error& e) { return MakeError("fleet store " + e.message); };
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) {
      return MakeError("fleet store " + path + ": cannot create the folder " + parent.string() +
                       " (" + ec.message() + "); give a fleet database in a writable folder");
    }
  }
  if (fs::is_directory(path, ec)) {
    return MakeError("fleet store " + path + ": is a folder; give a file");
  }
  auto db = Db::Open(path, kBusyTimeoutMs);
  if (!db.ok()) return fail(db.error());
  // WAL: readers never wait for the writer; NORMAL: a commit survives a crash of the process
  // (not of the machine), at a fraction of FULL's fsyncs. temp_store: a group commit's savepoints
  // journal in memory. cache_size 64 MiB (SQLite's default is 2 MiB): a dashboard page reads a
  // few thousand pages of the newest results, which then stay in the connection's cache instead
  // of being copied in from the file again on every request.
  for (const char* pragma : {"PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL",
                             "PRAGMA foreign_keys = OFF", "PRAGMA temp_store = MEMORY",
                             "PRAGMA cache_size = -65536"}) {
    auto mode = (*db)->QueryText(pragma);
    if (!mode.ok()) return fail(mode.error());
  }
  if (Status s = EnsureSchema(**db); !s.ok()) return fail(s.error());
  if (max_size_bytes > 0) {
    // A quota: pages beyond it fail with SQLITE_FULL, the error of a full disk. A file already
    // larger keeps its pages (SQLite never lowers the limit below the current size).
    auto page_size = (*db)->QueryInt("PRAGMA page_size");
    if (!page_size.ok()) return fail(page_size.error());
    const int64_t pages = std::max<int64_t>(1, max_size_bytes / page_size->value_or(4096));
    auto set = (*db)->QueryInt("PRAGMA max_page_count = " + std::to_string(pages));
    if (!set.ok()) return fail(set.error());
  }
  return std::unique_ptr<FleetStore>(new SqliteFleetStore(std::move(*db)));
}

}  // namespace pipette
