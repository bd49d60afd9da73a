// FleetStore on PostgreSQL (libpqxx 6.4). Every public function runs in Do(), the boundary where
// libpqxx's exceptions become one-line Errors and a lost connection is dropped, to be made again
// by the next call. Behaviour and tables are the SQLite backend's (sqlite_fleet_store.cc).
#include "fleet_store/pg/pg_fleet_store.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <pqxx/pqxx>
#include <random>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "fleet_store/common.h"
#include "fleet_store/pg/pg_put_batch.h"
#include "fleet_store/pg/pg_result_query.h"
#include "fleet_store/pg/pg_schema.h"
#include "pipette/record.h"
#include "store/record.h"

namespace pipette {
namespace {

using nlohmann::json;

// --- small helpers -----------------------------------------------------------------------------

json ParseOr(const std::string& text, json fallback) {
  json v = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return v.is_discarded() ? fallback : v;
}

std::string FirstLine(std::string text) {
  const size_t nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
  if (text.rfind("ERROR:  ", 0) == 0) text.erase(0, 8);
  return text;
}

// Shortest round-trip text of a double, for a float8 parameter.
std::optional<std::string> DoubleText(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return std::nullopt;
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), *v);
  return std::string(buf, ec == std::errc() ? end : buf);
}

// std::from_chars, exact as PostgreSQL's shortest float8 text is: pqxx 6 reads doubles through an
// istream, a tenth of the CPU of a dashboard page of 1,000 rows.
std::optional<double> OptDouble(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  const char* text = f.c_str();
  const char* end = text + f.size();
  double v = 0;
  const auto [stop, ec] = std::from_chars(text, end, v);
  if (ec == std::errc() && stop == end) return v;
  return f.as<double>();  // "Infinity", "NaN" and what else from_chars does not take
}

ClientStatus ClientStatusOf(const std::string& name) {
  return fleet_store::ParseClientStatus(name).value_or(ClientStatus::kPending);
}

JobState JobStateOf(const std::string& name) {
  return fleet_store::ParseJobState(name).value_or(JobState::kQueued);
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::vector<std::string> StringList(const json& v) {
  std::vector<std::string> out;
  if (!v.is_array()) return out;
  for (const json& e : v)
    if (e.is_string()) out.push_back(e.get<std::string>());
  return out;
}

// The URL as shown in messages: without the password (user:PASSWORD@, ?password=...).
struct SafeUrl {
  std::string shown, password;
};
SafeUrl StripPassword(const std::string& url) {
  SafeUrl out{url, ""};
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return out;
  const size_t start = scheme + 3;
  const size_t end = std::min(url.find_first_of("/?", start), url.size());
  const size_t at = url.rfind('@', end);
  if (at != std::string::npos && at >= start) {
    const size_t colon = url.find(':', start);
    if (colon != std::string::npos && colon < at) {
      out.password = url.substr(colon + 1, at - colon - 1);
      out.shown = url.substr(0, colon) + url.substr(at);
    }
  }
  // A password given as a query parameter.
  const size_t q = out.shown.find('?');
  if (q != std::string::npos) {
    std::string query = out.shown.substr(q + 1), kept;
    size_t pos = 0;
    while (pos <= query.size()) {
      size_t amp = query.find('&', pos);
      if (amp == std::string::npos) amp = query.size();
      const std::string param = query.substr(pos, amp - pos);
      if (param.rfind("password=", 0) == 0) {
        if (out.password.empty()) out.password = param.substr(9);
      } else if (!param.empty()) {
        kept += (kept.empty() ? "" : "&") + param;
      }
      pos = amp + 1;
    }
    out.shown = out.shown.substr(0, q) + (kept.empty() ? "" : "?" + kept);
  }
  return out;
}

// libpq waits for an unreachable host as long as the kernel does; a server that does not answer
// in seconds is reported as such.
std::string WithConnectTimeout(const std::string& url) {
  if (url.find("connect_timeout=") != std::string::npos) return url;
  return url + (url.find('?') == std::string::npos ? "?" : "&") + "connect_timeout=5";
}

// The columns read into a Job, in this order (see ReadJob).
constexpr const char* kJobColumns =
    "job_id, plan_id, idx, spec, state, client_id, lease_expires_at, attempts, result_id, "
    "expires_at";

Job ReadJob(const pqxx::row& r) {
  Job j;
  j.job_id = r[0].as<std::string>();
  j.plan_id = r[1].as<std::string>();
  j.index = r[2].as<int>();
  j.spec = ParseOr(r[3].as<std::string>(), json::object());
  j.state = JobStateOf(r[4].as<std::string>());
  j.client_id = r[5].as<std::string>();
  j.lease_expires_at = r[6].as<int64_t>();
  j.attempts = r[7].as<int>();
  j.result_id = r[8].as<std::string>();
  j.expires_at = r[9].as<int64_t>();
  return j;
}

std::vector<JobFailure> ReadFailures(pqxx::work& tx, const std::string& job_id) {
  std::vector<JobFailure> out;
  for (const auto& r : tx.exec_params(
           "SELECT client_id, reason, at FROM job_failures WHERE job_id = $1 ORDER BY at, ctid",
           job_id)) {
    out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<int64_t>()});
  }
  return out;
}

// A JobSpec's "requires" (null when absent), as the SQLite store hands it to JobMatches.
json RequiresOf(const json& spec) {
  if (spec.is_object() && spec.contains("requires")) return spec["requires"];
  return json();
}

// A read-only transaction that sees one snapshot throughout (a listing's total and its page, a
// plan and its jobs agree).
using Snapshot = pqxx::transaction<pqxx::repeatable_read, pqxx::read_only>;

// --- the store -----------------------------------------------------------------------------------

// ListResults' filtered totals, shared by every connection of this process: (database URL, WHERE
// clause) -> (result_count when counted, the count). A count over many rows is taken once, not
// once per request thread. Thread-safe.
class SharedCounts {
 public:
  std::optional<int64_t> Find(const std::string& key, int64_t stored) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = counts_.find(key);
    if (it == counts_.end() || it->second.first != stored) return std::nullopt;
    return it->second.second;
  }
  void Keep(const std::string& key, int64_t stored, int64_t count) {
    std::lock_guard<std::mutex> lock(mu_);
    if (counts_.size() >= 256) counts_.clear();
    counts_[key] = {stored, count};
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::pair<int64_t, int64_t>> counts_;
};

SharedCounts& Counts() {
  static SharedCounts counts;
  return counts;
}

class PgFleetStore final : public FleetStore {
 public:
  explicit PgFleetStore(const std::string& url)
      : connect_url_(WithConnectTimeout(url)), safe_(StripPassword(url)) {}

  std::string backend() const override { return "postgresql"; }
  std::string where() const override { return safe_.shown; }

  Status Open() {
    return Do("creating the schema", [&](pqxx::connection& c) -> Status {
      const int version = pg::EnsureSchema(c);
      if (version > pg::kSchemaVersion) {
        return MakeError(Prefix() + "the database has schema version " + std::to_string(version) +
                         ", newer than this build (" + std::to_string(pg::kSchemaVersion) +
                         "); upgrade pipette");
      }
      if (version != pg::kSchemaVersion) {
        return MakeError(Prefix() + "unknown schema version " + std::to_string(version) +
                         "; give a database made by pipette");
      }
      return Status::Ok();
    });
  }

  Status Ping() override {
    return Do("ping", [&](pqxx::connection& c) -> Status {
      pqxx::nontransaction tx(c);
      tx.exec("SELECT 1");
      return Status::Ok();
    });
  }

  // --- clients ---------------------------------------------------------------------------------

  Result<RegisterOutcome> Register(FleetClient client, const std::string& preauth,
                                   int64_t now) override {
    return Do(
        "registering client " + client.client_id,
        [&](pqxx::connection& c) -> Result<RegisterOutcome> {
          pqxx::work tx(c);
          if (!tx.exec_params("SELECT 1 FROM clients WHERE public_key = $1 OR client_id = $2",
                              client.public_key_hex, client.client_id)
                   .empty()) {
            return RegisterOutcome::kAlreadyRegistered;
          }
          client.status = ClientStatus::kPending;
          if (!preauth.empty()) {
            auto labels = SpendPreauthKey(tx, preauth, client.client_id, now);
            if (!labels) return RegisterOutcome::kBadPreauthKey;  // rolls back
            for (const std::string& l : *labels) {
              if (std::find(client.labels.begin(), client.labels.end(), l) == client.labels.end()) {
                client.labels.push_back(l);
              }
            }
            client.status = ClientStatus::kApproved;
          }
          // Another registration of the same key may have won since the check above.
          const pqxx::result inserted = tx.exec_params(
              "INSERT INTO clients (client_id, public_key, status, label, labels, profile, "
              "capabilities, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
              "ON CONFLICT DO NOTHING RETURNING client_id",
              client.client_id, client.public_key_hex, std::string(ClientStatusName(client.status)),
              client.label, Dump(json(client.labels)),
              Dump(client.profile.is_object() ? client.profile : json::object()),
              client.capabilities.is_null() ? std::optional<std::string>()
                                            : Dump(client.capabilities),
              now);
          if (inserted.empty()) return RegisterOutcome::kAlreadyRegistered;
          tx.commit();
          return RegisterOutcome::kRegistered;
        });
  }

  Result<std::optional<FleetClient>> GetClient(const std::string& client_id) override {
    return Do("reading client " + client_id,
              [&](pqxx::connection& c) -> Result<std::optional<FleetClient>> {
                pqxx::nontransaction tx(c);
                const pqxx::result r = tx.exec_prepared("client", client_id);
                if (r.empty()) return std::optional<FleetClient>();
                return std::optional<FleetClient>(ReadClient(r[0]));
              });
  }

  Result<std::vector<FleetClient>> ListClients() override {
    return Do("listing clients", [&](pqxx::connection& c) -> Result<std::vector<FleetClient>> {
      pqxx::nontransaction tx(c);
      std::vector<FleetClient> out;
      for (const auto& r : tx.exec(std::string("SELECT ") + kClientColumns +
                                   " FROM clients ORDER BY created_at, client_id")) {
        out.push_back(ReadClient(r));
      }
      return out;
    });
  }

  Status SetClientStatus(const std::string& client_id, ClientStatus status) override {
    return Do("setting the status of client " + client_id, [&](pqxx::connection& c) -> Status {
      pqxx::work tx(c);
      if (tx.exec_params("UPDATE clients SET status = $2 WHERE client_id = $1 RETURNING 1",
                         client_id, std::string(ClientStatusName(status)))
              .empty()) {
        return NoClient(client_id);
      }
      tx.commit();
      return Status::Ok();
    });
  }

  Status SetCapabilities(const std::string& client_id, const json& capabilities) override {
    return Do("storing the capabilities of client " + client_id,
              [&](pqxx::connection& c) -> Status {
                pqxx::work tx(c);
                if (tx.exec_params(
                          "UPDATE clients SET capabilities = $2 WHERE client_id = $1 RETURNING 1",
                          client_id, Dump(capabilities))
                        .empty()) {
                  return NoClient(client_id);
                }
                tx.commit();
                return Status::Ok();
              });
  }

  Status AddPreauthKey(const PreauthKey& key) override {
    return Do("adding pre-authorization key " + key.key_id, [&](pqxx::connection& c) -> Status {
      pqxx::work tx(c);
      if (tx.exec_params("INSERT INTO preauth_keys (key_id, secret_sha256, labels, expires_at) "
                         "VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1",
                         key.key_id, key.secret_sha256, Dump(json(key.labels)), key.expires_at)
              .empty()) {
        return MakeError(Prefix() + "pre-authorization key " + key.key_id +
                         " exists; create a new one");
      }
      tx.commit();
      return Status::Ok();
    });
  }

  Result<bool> UseNonce(const std::string& client_id, const std::string& nonce,
                        int64_t keep_until) override {
    return Do("recording a nonce", [&](pqxx::connection& c) -> Result<bool> {
      // A transaction, not autocommit: a connection lost before COMMIT leaves nothing behind, so
      // Do() may run it again without calling a fresh nonce used.
      pqxx::work tx(c);
      const bool fresh = !tx.exec_params(
                                "INSERT INTO nonces (client_id, nonce, keep_until) VALUES ($1, $2, "
                                "$3) ON CONFLICT DO NOTHING RETURNING 1",
                                client_id, nonce, keep_until)
                              .empty();
      tx.commit();
      return fresh;
    });
  }

  Status PruneNonces(int64_t now) override {
    return Do("pruning nonces", [&](pqxx::connection& c) -> Status {
      pqxx::work tx(c);
      tx.exec_params("DELETE FROM nonces WHERE keep_until < $1", now);
      tx.commit();
      return Status::Ok();
    });
  }

  // --- results ---------------------------------------------------------------------------------

  Result<PutOutcome> PutResult(const json& record, const std::string& client_id,
                               int64_t now) override {
    return Do("storing a result", [&](pqxx::connection& c) -> Result<PutOutcome> {
      pqxx::work tx(c);
      auto put = PutIn(tx, record, client_id, now);
      if (put.ok() && *put == PutOutcome::kStored) tx.commit();
      return put;
    });
  }

  std::shared_ptr<void> ExpectWrite() override { return batcher_->Expect(); }

  // Batched with the submissions of the other connections of this process (pg_put_batch.h).
  Result<PutOutcome> PutResultWithNonce(const json& record, std::string_view text,
                                        const std::string& client_id, const std::string& nonce,
                                        int64_t keep_until, int64_t now) override {
    auto row = RowOf(record, client_id, now, text);
    if (!row.ok()) return row.error();
    row->nonce = nonce;
    row->keep_until = keep_until;
    auto batched = batcher_->Run(*row, [&](const std::vector<const pg::BatchedRow*>& rows) {
      return Do("storing a result", [&](pqxx::connection& c) { return StoreBatch(c, rows); });
    });
    if (!batched.ok()) return batched.error();
    switch (*batched) {
      case pg::BatchedOutcome::kStored:
        return PutOutcome::kStored;
      case pg::BatchedOutcome::kReplayed:
        return PutOutcome::kReplayed;
      case pg::BatchedOutcome::kNotApproved:
        return PutOutcome::kClientNotApproved;
      case pg::BatchedOutcome::kNotInserted:
        return Do("reading result " + row->result_id(),
                  [&](pqxx::connection& c) -> Result<PutOutcome> {
                    pqxx::nontransaction tx(c);
                    return CompareStored(tx, *row);
                  });
      case pg::BatchedOutcome::kAlone:
        break;
    }
    return Do("storing a result", [&](pqxx::connection& c) -> Result<PutOutcome> {
      pqxx::work tx(c);
      const SpentNonce spend{nonce, keep_until};
      auto put = PutRowIn(tx, *row, &spend);
      // The nonce is spent whatever the record's outcome; a replay or a client not approved
      // changed nothing.
      if (put.ok() && *put != PutOutcome::kReplayed && *put != PutOutcome::kClientNotApproved) {
        tx.commit();
      }
      return put;
    });
  }

  Result<ResultPage> ListResults(const ResultFilter& filter, int page_size,
                                 const std::string& cursor, ListOptions options) override {
    std::optional<pg::Cursor> after;
    if (!cursor.empty()) {
      auto decoded = pg::DecodeCursor(cursor);
      if (!decoded.ok()) return MakeError(Prefix() + decoded.error().message);
      after = *decoded;
    }
    page_size = std::max(1, page_size);
    return Do("listing results", [&](pqxx::connection& c) -> Result<ResultPage> {
      auto where = pg::WhereClause(c, filter);
      if (!where.ok()) return where.error();
      const auto and_ = [](const std::string& w) {
        return std::string(w.empty() ? " WHERE " : " AND ");
      };
      // One snapshot: the total and the page agree.
      Snapshot tx(c);
      ResultPage page;
      // The total before the cursor narrows the rows; unfiltered, the kept count costs nothing.
      // Filtered, it is counted once per number of stored results: results are never deleted,
      // so while the count (kept in each insert's transaction) stays, so does every count.
      const int64_t stored = Cached(tx, pg::kCountResultsSql)[0][0].as<int64_t>();
      if (where->empty()) {
        page.total = stored;
      } else {
        const std::string key = connect_url_ + '\0' + *where;
        const std::optional<int64_t> cached = Counts().Find(key, stored);
        if (cached) {
          page.total = *cached;
        } else {
          page.total = tx.exec("SELECT count(*) FROM results" + *where)[0][0].as<int64_t>();
          Counts().Keep(key, stored, page.total);
        }
      }
      if (filter.limit > 0) page.total = std::min<int64_t>(page.total, filter.limit);
      std::string page_where = *where;
      if (after) {
        page_where += and_(page_where) + "(started_at, result_id) < (" +
                      pg::Quote(c, after->started_at) + ", " + pg::Quote(c, after->result_id) + ")";
      }
      const std::string sql = std::string("SELECT ") + kRowColumns + " FROM results" +
                              page_where + " ORDER BY started_at DESC, result_id DESC LIMIT " +
                              std::to_string(page_size + 1);
      // A first page repeats (a dashboard's, with its filters); a page after a cursor seldom.
      for (const auto& r : after ? tx.exec(sql) : Cached(tx, sql)) {
        page.rows.push_back(ReadResultRow(r));
      }
      if (options.short_ids) SetShortIds(c, tx, page.rows);
      if (static_cast<int>(page.rows.size()) > page_size) {
        page.rows.pop_back();
        const ResultRow& last = page.rows.back().row;
        page.next = pg::EncodeCursor({last.started_at, last.result_id});
      }
      // filter.limit caps the listing as a whole: cut what lies beyond it.
      if (filter.limit > 0 && !page.rows.empty()) {
        const ResultRow& last = page.rows.back().row;
        const int64_t position = tx.exec("SELECT count(*) FROM results" + *where + and_(*where) +
                                         "(started_at, result_id) >= (" + pg::Quote(c, last.started_at) +
                                         ", " + pg::Quote(c, last.result_id) + ")")[0][0]
                                     .as<int64_t>();
        if (position >= filter.limit) {
          const size_t over = static_cast<size_t>(position - filter.limit);
          page.rows.resize(page.rows.size() - std::min(over, page.rows.size()));
          page.next.clear();
        }
      }
      return page;
    });
  }

  // Runs `sql`, prepared once per connection when its text repeats: a dashboard page's queries
  // (the same filters, again and again) were planned anew each time, 1 to 2 ms of PostgreSQL's
  // CPU each for the results table's ten indexes, as long as running them. The plan is kept
  // (plan_cache_mode, set in PrepareStatements). Texts beyond kMaxCached run unprepared.
  static constexpr size_t kMaxCached = 64;
  template <typename Tx>
  pqxx::result Cached(Tx& tx, const std::string& sql) {
    auto it = cached_.find(sql);
    if (it == cached_.end()) {
      if (cached_.size() >= kMaxCached) return tx.exec(sql);
      const std::string name = "cached_" + std::to_string(cached_.size());
      conn_->prepare(name, sql);
      it = cached_.emplace(sql, name).first;
    }
    return tx.exec_prepared(it->second);
  }

  // Each row's short id from its neighbours in id order: one query, two primary-key probes a row.
  template <typename Tx>
  static void SetShortIds(pqxx::connection& c, Tx& tx, std::vector<FleetResultRow>& rows) {
    if (rows.empty()) return;
    std::string values;
    for (size_t i = 0; i < rows.size(); ++i) {
      values += (i ? ", (" : "(") + std::to_string(i) + ", " + pg::Quote(c, rows[i].row.result_id) + ")";
    }
    const pqxx::result r = tx.exec(
        "SELECT n, (SELECT max(result_id) FROM results WHERE result_id < v.id), "
        "(SELECT min(result_id) FROM results WHERE result_id > v.id) "
        "FROM (VALUES " + values + ") AS v(n, id)");
    for (const auto& row : r) {
      ResultRow& out = rows[row[0].as<size_t>()].row;
      out.short_id = fleet_store::FleetShortId(out.result_id, row[1].is_null() ? "" : row[1].c_str(),
                                               row[2].is_null() ? "" : row[2].c_str());
    }
  }

  Result<std::optional<json>> GetResult(const std::string& result_id) override {
    return Do("reading result " + result_id,
              [&](pqxx::connection& c) -> Result<std::optional<json>> {
                pqxx::nontransaction tx(c);
                const pqxx::result r =
                    tx.exec_params("SELECT record FROM results WHERE result_id = $1", result_id);
                if (r.empty()) return std::optional<json>();
                return std::optional<json>(ParseRecord(result_id, r[0][0].as<std::string>()));
              });
  }

  Result<std::vector<std::string>> RecordTexts(
      const std::vector<std::string>& result_ids) override {
    return Do("reading results", [&](pqxx::connection& c) -> Result<std::vector<std::string>> {
      std::vector<std::string> texts(result_ids.size());
      if (result_ids.empty()) return texts;
      std::string list;
      std::map<std::string, std::vector<size_t>> where;
      for (size_t i = 0; i < result_ids.size(); ++i) {
        list.append(i ? ", " : "").append(pg::Quote(c, result_ids[i]));
        where[result_ids[i]].push_back(i);
      }
      pqxx::nontransaction tx(c);
      for (const auto& r :
           tx.exec("SELECT result_id, record FROM results WHERE result_id IN (" + list + ")")) {
        for (size_t i : where[r[0].c_str()]) texts[i] = r[1].as<std::string>();
      }
      return texts;
    });
  }

  Result<std::vector<std::string>> ResultIdsStartingWith(const std::string& prefix,
                                                         int limit) override {
    return Do("looking up result ids starting with " + prefix,
              [&](pqxx::connection& c) -> Result<std::vector<std::string>> {
                pqxx::nontransaction tx(c);
                // result_id is COLLATE "C": the range is served by the primary key.
                const pqxx::result r = tx.exec_params(
                    "SELECT result_id FROM results WHERE result_id >= $1 AND result_id < $2 "
                    "ORDER BY result_id LIMIT $3",
                    prefix, prefix + "\x7f", limit);
                std::vector<std::string> ids;
                for (const auto& row : r) ids.push_back(row[0].as<std::string>());
                return ids;
              });
  }

  Result<std::vector<std::string>> RecentBenchmarkIds(const ResultFilter& filter,
                                                      int newest) override {
    return Do("listing benchmark ids", [&](pqxx::connection& c) -> Result<std::vector<std::string>> {
      auto where = pg::WhereClause(c, filter);
      if (!where.ok()) return where.error();
      pqxx::nontransaction tx(c);
      // Byte order, as SQLite's: the ids are sorted here, not by the database's collation.
      const std::string sql = "SELECT DISTINCT benchmark_id FROM (SELECT benchmark_id FROM results" +
                              *where + " ORDER BY started_at DESC, result_id DESC LIMIT " +
                              std::to_string(std::max(1, newest)) + ") newest";
      std::vector<std::string> ids;
      for (const auto& r : Cached(tx, sql)) ids.push_back(r[0].as<std::string>());
      std::sort(ids.begin(), ids.end());
      return ids;
    });
  }

  Result<std::vector<json>> Records(const ResultFilter& filter, RecordParts parts) override {
    return Do("reading results", [&](pqxx::connection& c) -> Result<std::vector<json>> {
      auto where = pg::WhereClause(c, filter);
      if (!where.ok()) return where.error();
      pqxx::nontransaction tx(c);
      // json, not jsonb: the record's text is scanned for its metrics, not converted whole.
      const std::string record =
          parts == RecordParts::kSummary
              ? "json_build_object('result_id', result_id, 'status', status, 'benchmark', "
                "json_build_object('id', benchmark_id, 'type', benchmark_type), 'model', "
                "json_build_object('file_name', model_file, 'sha256', model_sha256, 'quant', "
                "quant), 'runtime', json_build_object('name', runtime, 'settings', settings), "
                "'device', json_build_object('id', device_id, 'label', label), 'metrics', "
                // Rows stored before schema version 2 have no metrics column of their own.
                "COALESCE(metrics::json, record::json -> 'metrics'))::text"
              : std::string("record");
      std::string sql = "SELECT result_id, " + record + " FROM results" + *where +
                        " ORDER BY started_at DESC, result_id DESC";
      if (filter.limit > 0) sql += " LIMIT " + std::to_string(filter.limit);
      std::vector<json> out;
      for (const auto& r : Cached(tx, sql)) {
        out.push_back(ParseRecord(r[0].as<std::string>(), r[1].as<std::string>()));
      }
      return out;
    });
  }

  Result<int64_t> CountResults() override {
    return Do("counting results", [&](pqxx::connection& c) -> Result<int64_t> {
      pqxx::nontransaction tx(c);
      return Cached(tx, pg::kCountResultsSql)[0][0].as<int64_t>();
    });
  }

  // --- plans and jobs ----------------------------------------------------------------------------

  Result<std::string> CreatePlan(const std::string& name, const std::vector<json>& specs,
                                 int64_t expires_at, int64_t now) override {
    return Do("creating plan " + name, [&](pqxx::connection& c) -> Result<std::string> {
      pqxx::work tx(c);
      const std::string plan_id = fleet_store::NewPlanId();
      tx.exec_params(
          "INSERT INTO plans (plan_id, name, created_at, expires_at) "
          "VALUES ($1, $2, $3, $4)",
          plan_id, name, now, expires_at);
      // One statement for all jobs: a round trip per job would dominate big plans.
      std::string values;
      for (size_t i = 0; i < specs.size(); ++i) {
        values += std::string(values.empty() ? "" : ", ") + "(" + pg::Quote(c, fleet_store::NewJobId()) +
                  ", " + pg::Quote(c, plan_id) + ", " + std::to_string(i) + ", " +
                  pg::Quote(c, Dump(specs[i])) + ", 'queued', " + std::to_string(expires_at) + ", " +
                  std::to_string(now) + ")";
      }
      if (!values.empty()) {
        tx.exec(
            "INSERT INTO jobs (job_id, plan_id, idx, spec, state, expires_at, created_at) "
            "VALUES " +
            values);
      }
      tx.commit();
      return plan_id;
    });
  }

  Result<std::optional<Job>> Claim(const std::string& client_id, const json& capabilities,
                                   int64_t now, int lease_s) override {
    return Do("claiming a job", [&](pqxx::connection& c) -> Result<std::optional<Job>> {
      pqxx::work tx(c);
      RequeueIn(tx, now);
      tx.exec_params(
          "UPDATE jobs SET state = 'expired' WHERE state = 'queued' AND expires_at > 0 "
          "AND expires_at < $1",
          now);
      tx.exec_params("UPDATE clients SET capabilities = $2 WHERE client_id = $1", client_id,
                     Dump(capabilities));
      // Candidates are read without locks, oldest first, in batches; the first that matches is
      // then locked with SKIP LOCKED, so concurrent claimers each take a different job instead of
      // waiting for one another (a row another claimer holds, or leased since, is skipped).
      constexpr int kBatch = 200;
      int64_t after_created = std::numeric_limits<int64_t>::min();
      int after_idx = -1;
      std::string after_job;
      for (;;) {
        const pqxx::result batch = tx.exec_params(
            "SELECT job_id, spec, created_at, idx FROM jobs j WHERE state = 'queued' "
            "AND (created_at, idx, job_id) > ($2, $3, $4) "
            "AND NOT EXISTS (SELECT 1 FROM job_failures f WHERE f.job_id = j.job_id "
            "AND f.client_id = $1) ORDER BY created_at, idx, job_id LIMIT " +
                std::to_string(kBatch),
            client_id, after_created, after_idx, after_job);
        for (const auto& r : batch) {
          after_job = r[0].as<std::string>();
          after_created = r[2].as<int64_t>();
          after_idx = r[3].as<int>();
          const json spec = ParseOr(r[1].as<std::string>(), json::object());
          if (!JobMatches(RequiresOf(spec), capabilities)) continue;
          if (tx.exec_params("SELECT 1 FROM jobs WHERE job_id = $1 AND state = 'queued' "
                             "FOR UPDATE SKIP LOCKED",
                             after_job)
                  .empty()) {
            continue;
          }
          const pqxx::result leased = tx.exec_params(
              std::string("UPDATE jobs SET state = 'leased', client_id = $2, "
                          "lease_expires_at = $3, attempts = attempts + 1 WHERE job_id = $1 "
                          "RETURNING ") +
                  kJobColumns,
              after_job, client_id, now + lease_s);
          Job job = ReadJob(leased[0]);
          job.failures = ReadFailures(tx, job.job_id);
          tx.commit();
          return std::optional<Job>(std::move(job));
        }
        if (batch.size() < static_cast<size_t>(kBatch)) break;
      }
      tx.commit();  // the requeued and expired jobs
      return std::optional<Job>();
    });
  }

  Result<bool> Heartbeat(const std::string& job_id, const std::string& client_id, int64_t now,
                         int lease_s) override {
    return Do("extending the lease of " + job_id, [&](pqxx::connection& c) -> Result<bool> {
      pqxx::work tx(c);
      const bool held =
          !tx.exec_params(
                 "UPDATE jobs SET lease_expires_at = $3 WHERE job_id = $1 AND client_id = $2 "
                 "AND state = 'leased' RETURNING 1",
                 job_id, client_id, now + lease_s)
               .empty();
      tx.commit();
      return held;
    });
  }

  Result<CompleteOutcome> Complete(const std::string& job_id, const std::string& client_id,
                                   const json& record, int64_t now) override {
    return Do("completing " + job_id, [&](pqxx::connection& c) -> Result<CompleteOutcome> {
      pqxx::work tx(c);
      auto put = PutIn(tx, record, client_id, now);
      if (!put.ok()) return put.error();
      CompleteOutcome out;
      out.put = *put;
      const std::string result_id = record.value("result_id", "");
      const pqxx::result job = tx.exec_params(
          "SELECT state, client_id, result_id FROM jobs WHERE job_id = $1 FOR UPDATE", job_id);
      if (job.empty()) {
        out.lease_held = false;
      } else {
        const std::string state = job[0][0].as<std::string>();
        const std::string holder = job[0][1].as<std::string>();
        if (state == "done" && job[0][2].as<std::string>() == result_id) {
          out.lease_held = true;
        } else if (state == "leased" && holder == client_id) {
          if (*put != PutOutcome::kConflict) {
            tx.exec_params(
                "UPDATE jobs SET state = 'done', result_id = $2, lease_expires_at = 0 "
                "WHERE job_id = $1",
                job_id, result_id);
          }
          out.lease_held = true;
        } else {
          out.lease_held = false;
        }
      }
      tx.commit();
      return out;
    });
  }

  Result<std::pair<JobState, bool>> Fail(const std::string& job_id, const std::string& client_id,
                                         const std::string& reason, bool retriable,
                                         int64_t now) override {
    return Do(
        "recording the failure of " + job_id,
        [&](pqxx::connection& c) -> Result<std::pair<JobState, bool>> {
          pqxx::work tx(c);
          const pqxx::result job = tx.exec_params(
              "SELECT state, client_id, spec FROM jobs WHERE job_id = $1 FOR UPDATE", job_id);
          // No such job: not leased to this client.
          if (job.empty()) return std::make_pair(JobState::kQueued, false);
          const std::string state = job[0][0].as<std::string>();
          if (state != "leased" || job[0][1].as<std::string>() != client_id) {
            return std::make_pair(JobStateOf(state), false);
          }
          tx.exec_params(
              "INSERT INTO job_failures (job_id, client_id, reason, at, retriable) "
              "VALUES ($1, $2, $3, $4, $5)",
              job_id, client_id, reason, now, retriable ? 1 : 0);
          bool give_up = !retriable;
          if (!give_up) {
            const json needs = RequiresOf(ParseOr(job[0][2].as<std::string>(), json::object()));
            std::set<std::string> failed_by;
            for (const auto& r : tx.exec_params(
                     "SELECT DISTINCT client_id FROM job_failures WHERE job_id = $1", job_id)) {
              failed_by.insert(r[0].as<std::string>());
            }
            give_up = true;
            for (const auto& r :
                 tx.exec("SELECT client_id, capabilities FROM clients WHERE status = 'approved' "
                         "AND capabilities IS NOT NULL")) {
              const json caps = ParseOr(r[1].as<std::string>(), json());
              if (!failed_by.count(r[0].as<std::string>()) && JobMatches(needs, caps)) {
                give_up = false;
                break;
              }
            }
          }
          const JobState next = give_up ? JobState::kFailed : JobState::kQueued;
          tx.exec_params(
              "UPDATE jobs SET state = $2, client_id = '', lease_expires_at = 0 "
              "WHERE job_id = $1",
              job_id, std::string(JobStateName(next)));
          tx.commit();
          return std::make_pair(next, true);
        });
  }

  Result<int> RequeueExpired(int64_t now) override {
    return Do("returning expired leases", [&](pqxx::connection& c) -> Result<int> {
      pqxx::work tx(c);
      const int n = RequeueIn(tx, now);
      tx.commit();
      return n;
    });
  }

  Result<std::optional<PlanStatus>> GetPlan(const std::string& plan_id) override {
    return Do(
        "reading plan " + plan_id, [&](pqxx::connection& c) -> Result<std::optional<PlanStatus>> {
          Snapshot tx(c);
          const pqxx::result p = tx.exec_params(
              "SELECT plan_id, name, created_at FROM plans WHERE plan_id = $1", plan_id);
          if (p.empty()) return std::optional<PlanStatus>();
          PlanStatus plan{
              p[0][0].as<std::string>(), p[0][1].as<std::string>(), p[0][2].as<int64_t>(), {}};
          std::map<std::string, size_t> by_id;
          for (const auto& r : tx.exec_params(std::string("SELECT ") + kJobColumns +
                                                  " FROM jobs WHERE plan_id = $1 ORDER BY idx",
                                              plan_id)) {
            plan.jobs.push_back(ReadJob(r));
            by_id[plan.jobs.back().job_id] = plan.jobs.size() - 1;
          }
          for (const auto& r :
               tx.exec_params("SELECT f.job_id, f.client_id, f.reason, f.at FROM job_failures f "
                              "JOIN jobs j ON j.job_id = f.job_id WHERE j.plan_id = $1 "
                              "ORDER BY f.at, f.ctid",
                              plan_id)) {
            auto it = by_id.find(r[0].as<std::string>());
            if (it == by_id.end()) continue;
            plan.jobs[it->second].failures.push_back(
                {r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<int64_t>()});
          }
          return std::optional<PlanStatus>(std::move(plan));
        });
  }

  Result<std::vector<PlanStatus>> ListPlans() override {
    return Do("listing plans", [&](pqxx::connection& c) -> Result<std::vector<PlanStatus>> {
      pqxx::nontransaction tx(c);
      std::vector<PlanStatus> out;
      for (const auto& r : tx.exec(
               "SELECT plan_id, name, created_at FROM plans ORDER BY created_at DESC, plan_id")) {
        out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<int64_t>(), {}});
      }
      return out;
    });
  }

 private:
  // The columns a listing reads, in ReadResultRow's order.
  static constexpr const char* kRowColumns =
      "result_id, config_id, status, benchmark_id, benchmark_type, model_file, model_sha256, "
      "quant, runtime, device_id, label, started_at, threads, headline, headline_metric, "
      "headline_unit, ci_low, ci_high, headline_n, ci_reached, quant_label, client_id, "
      "received_at, profile_mismatch";

  static constexpr const char* kClientColumns =
      "client_id, public_key, status, label, labels, profile, capabilities, created_at";

  std::string Prefix() const { return "fleet store " + safe_.shown + ": "; }

  Error NoClient(const std::string& client_id) const {
    return MakeError(Prefix() + "no client " + client_id +
                     " (pipette serve clients list shows them)");
  }

  // The message of an exception, one line, without the password.
  std::string Reason(const std::exception& e) const {
    std::string text = FirstLine(e.what());
    if (!safe_.password.empty()) {
      for (size_t pos; (pos = text.find(safe_.password)) != std::string::npos;) {
        text.replace(pos, safe_.password.size(), "***");
      }
    }
    return text.empty() ? "no reason given" : text;
  }

  // A connection that failed or broke. The server refusing it (no such database, authentication)
  // is told apart from a server that does not answer (down, starting, shutting down, gone).
  Error Unreachable(const std::exception& e) const {
    std::string reason = Reason(e);
    const size_t fatal = reason.find("FATAL:");
    if (fatal != std::string::npos && reason.find("the database system is") == std::string::npos &&
        reason.find("terminating connection") == std::string::npos) {
      reason.erase(0, fatal + 6);
      reason.erase(0, reason.find_first_not_of(' '));
      return MakeError(Prefix() + "the server refused the connection: " + reason);
    }
    return MakeError(Prefix() + "database is not answering: " + reason);
  }

  // The database server's disk is full (SQLSTATE 53100).
  Error DiskFull(const std::string& doing, const std::exception& e) const {
    std::string message = Prefix();
    message += "disk full on the database server while ";
    message += doing;
    message += " (" + Reason(e) + "); free space there, then retry";
    return MakeError(std::move(message));
  }

  // Runs `f` on the connection (made first if there is none), turning every exception into an
  // Error. A lost connection is dropped: the next call connects again. A transaction that lost a
  // deadlock or serialization race is run again, a few times.
  template <typename F>
  auto Do(const std::string& doing, F f) -> decltype(f(std::declval<pqxx::connection&>())) {
    using R = decltype(f(std::declval<pqxx::connection&>()));
    bool retried_connection = false;
    for (int attempt = 0;; ++attempt) {
      bool reused = conn_ != nullptr;
      try {
        if (!conn_) {
          conn_ = std::make_unique<pqxx::connection>(connect_url_);
          cached_.clear();
          PrepareStatements(*conn_);
        }
        return f(*conn_);
      } catch (const pqxx::broken_connection& e) {
        conn_.reset();
        // A kept connection found dead (the server restarted since the last call): nothing was
        // committed (a break during COMMIT is in_doubt_error, below; every write here is in a
        // transaction), so the call runs again once on a new connection.
        if (reused && !retried_connection) {
          retried_connection = true;
          continue;
        }
        return R(Unreachable(e));
      } catch (const pqxx::in_doubt_error& e) {
        conn_.reset();
        return R(MakeError(Prefix() + doing + ": the connection was lost while committing; " +
                           "the change may or may not be stored"));
      } catch (const pqxx::transaction_rollback& e) {
        if (attempt < 3) continue;
        return R(MakeError(Prefix() + doing + ": " + Reason(e)));
      } catch (const std::exception& e) {
        // SQLSTATE 53100 (disk_full): the database server's disk. Worded as SQLite's full disk
        // (fleet_store::kDiskFull), so the server answers both alike; the transaction was rolled
        // back.
        if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e);
            sql != nullptr && sql->sqlstate() == "53100") {
          return R(DiskFull(doing, e));
        }
        if (conn_ && !conn_->is_open()) {
          conn_.reset();
          if (reused && !retried_connection) {
            retried_connection = true;
            continue;
          }
          return R(Unreachable(e));
        }
        return R(MakeError(Prefix() + doing + ": " + Reason(e)));
      }
    }
  }

  FleetClient ReadClient(const pqxx::row& r) {
    FleetClient cl;
    cl.client_id = r[0].as<std::string>();
    cl.public_key_hex = r[1].as<std::string>();
    cl.status = ClientStatusOf(r[2].as<std::string>());
    cl.label = r[3].as<std::string>();
    cl.labels = StringList(ParseOr(r[4].as<std::string>(), json::array()));
    client_json_.Fill(cl, r[5].as<std::string>(), r[6].is_null() ? "" : r[6].as<std::string>());
    cl.created_at = r[7].as<int64_t>();
    return cl;
  }

  // Spends the key named by `token` ("preauth_<key_id>.<secret hex>") when it is valid at `now`:
  // its labels, or nullopt (malformed, unknown, wrong secret, expired, spent: nothing changed).
  // The key's row is locked first, and the UPDATE spends it only while unspent: two
  // registrations with one key cannot both succeed.
  std::optional<std::vector<std::string>> SpendPreauthKey(pqxx::work& tx, const std::string& token,
                                                          const std::string& client_id,
                                                          int64_t now) {
    const auto parsed = fleet_store::ParsePreauthToken(token);
    if (!parsed) return std::nullopt;
    const pqxx::result key = tx.exec_params(
        "SELECT secret_sha256, expires_at, spent_at IS NOT NULL FROM preauth_keys "
        "WHERE key_id = $1 FOR UPDATE",
        parsed->key_id);
    if (key.empty()) return std::nullopt;
    const int64_t expires_at = key[0][1].as<int64_t>();
    if (key[0][2].as<bool>() || (expires_at != 0 && expires_at <= now) ||
        !fleet_store::PreauthSecretMatches(parsed->secret_hex, key[0][0].as<std::string>())) {
      return std::nullopt;
    }
    const pqxx::result spent = tx.exec_params(
        "UPDATE preauth_keys SET spent_at = $2, spent_by = $3 WHERE key_id = $1 "
        "AND spent_at IS NULL RETURNING labels",
        parsed->key_id, now, client_id);
    if (spent.empty()) return std::nullopt;
    return StringList(ParseOr(spent[0][0].as<std::string>(), json::array()));
  }

  json ParseRecord(const std::string& id, const std::string& text) const {
    json v = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (v.is_discarded()) {
      throw std::runtime_error("stored record " + id + " is not valid JSON");
    }
    return v;
  }

  struct SpentNonce {
    const std::string& nonce;
    int64_t keep_until;
  };

  // A submission's row: the parameters $1..$26 of put_result. `given`: the compact text `input`
  // was parsed from, stored as it is when given. Errors: `input` fails store::ValidateRecord.
  Result<pg::BatchedRow> RowOf(const json& input, const std::string& client_id, int64_t now,
                               std::optional<std::string_view> given) const {
    if (Status s = store::ValidateRecord(input); !s.ok()) {
      return MakeError(Prefix() + "invalid result record: " + s.error().message);
    }
    // What is stored and compared: invalid UTF-8 becomes U+FFFD, as in any JSON text (a parsed
    // text has none).
    std::string text;
    json reparsed;
    const json* parsed = &input;
    if (given && fleet_store::IsCompactJson(*given)) {
      text = std::string(*given);
    } else {
      text = Dump(input);
      reparsed = json::parse(text);
      parsed = &reparsed;
    }
    const json& record = *parsed;
    const store::IndexedColumns col = store::ExtractColumns(record);
    const std::string metric = "/metrics/" + col.headline_metric;
    const auto number = [&](const std::string& pointer) -> std::optional<double> {
      const json* v = record::Find(record, pointer);
      if (col.headline_metric.empty() || v == nullptr || !v->is_number()) return std::nullopt;
      return v->get<double>();
    };
    const json* ci_reached = record::Find(record, "/harness/ci_reached");
    const json* settings = record::Find(record, "/runtime/settings");
    const json* metrics = record::Find(record, "/metrics");
    pg::BatchedRow row;
    row.columns = {
        col.result_id, client_id, std::to_string(now), col.config_id, col.status,
        col.benchmark_id, col.benchmark_type, col.model_file, col.model_sha256, col.quant,
        fleet_store::RecordQuantLabel(record), col.runtime, col.device_id, col.label,
        col.started_at, std::to_string(col.threads), col.headline_metric, col.headline_unit,
        DoubleText(col.headline), DoubleText(number(metric + "/ci95_low")),
        DoubleText(number(metric + "/ci95_high")),
        std::to_string(static_cast<int64_t>(number(metric + "/n").value_or(0))),
        // Nothing says the result is noisy unless the harness recorded so.
        std::string(ci_reached != nullptr && ci_reached->is_boolean() && !*ci_reached ? "0" : "1"),
        Dump(settings != nullptr && settings->is_object() ? *settings : json::object()),
        std::move(text), Dump(metrics != nullptr ? *metrics : json())};
    return row;
  }

  // PutResult inside `tx` (not committed here), in one statement: the nonce (when given, kReplayed
  // if it was used), the row, the profile check and the count. Only kStored changed the results.
  Result<PutOutcome> PutIn(pqxx::work& tx, const json& input, const std::string& client_id,
                           int64_t now, std::optional<std::string_view> given = std::nullopt,
                           const SpentNonce* spend = nullptr) {
    auto row = RowOf(input, client_id, now, given);
    if (!row.ok()) return row.error();
    return PutRowIn(tx, *row, spend);
  }

  Result<PutOutcome> PutRowIn(pqxx::work& tx, const pg::BatchedRow& row,
                              const SpentNonce* spend) {
    const auto columns = pqxx::prepare::make_dynamic_params(row.columns);
    const pqxx::result r =
        spend ? tx.exec_prepared("put_result_with_nonce", columns, spend->nonce, spend->keep_until)
              : tx.exec_prepared("put_result", columns);
    if (!r[0][2].as<bool>()) return PutOutcome::kClientNotApproved;
    if (!r[0][0].as<bool>()) return PutOutcome::kReplayed;
    if (r[0][1].as<bool>()) return PutOutcome::kStored;
    // ON CONFLICT: the result_id is stored (maybe by a concurrent put since this one began).
    return CompareStored(tx, row);
  }

  // Stores `rows` in one transaction with put_batch_N. A data error (of one row: a settings value
  // jsonb refuses, say) rolls the batch back and sends every row to be stored alone.
  static Result<std::vector<pg::BatchedOutcome>> StoreBatch(
      pqxx::connection& c, const std::vector<const pg::BatchedRow*>& rows) {
    std::vector<std::optional<std::string>> params;
    params.reserve(rows.size() * (std::size(kPutColumns) + 2));
    for (const pg::BatchedRow* row : rows) {
      params.insert(params.end(), row->columns.begin(), row->columns.end());
      params.emplace_back(row->nonce);
      params.emplace_back(std::to_string(row->keep_until));
    }
    // One statement, so its own transaction: committed when it answers, with one round trip
    // where BEGIN and COMMIT took three.
    pqxx::nontransaction tx(c);
    pqxx::result r;
    try {
      r = tx.exec_prepared("put_batch_" + std::to_string(rows.size()),
                           pqxx::prepare::make_dynamic_params(params));
    } catch (const pqxx::data_exception&) {
      return std::vector<pg::BatchedOutcome>(rows.size(), pg::BatchedOutcome::kAlone);
    } catch (const pqxx::integrity_constraint_violation&) {
      return std::vector<pg::BatchedOutcome>(rows.size(), pg::BatchedOutcome::kAlone);
    } catch (const pqxx::broken_connection&) {
      // The statement may have committed before the answer was lost: running it again would
      // find its nonces spent and call stored rows replays.
      throw pqxx::in_doubt_error("the connection was lost while storing a batch");
    }
    std::vector<pg::BatchedOutcome> out;
    for (const auto& row : r) {
      out.push_back(!row[2].as<bool>()   ? pg::BatchedOutcome::kNotApproved
                    : !row[0].as<bool>() ? pg::BatchedOutcome::kReplayed
                    : row[1].as<bool>()  ? pg::BatchedOutcome::kStored
                                         : pg::BatchedOutcome::kNotInserted);
    }
    return out;
  }

  static PutOutcome CompareStored(pqxx::transaction_base& tx, const pg::BatchedRow& row) {
    const pqxx::result stored = tx.exec_prepared("stored_record", row.result_id());
    return SameOrConflict(stored.empty() ? "" : stored[0][0].as<std::string>(),
                          row.record_text());
  }

  // The statements of a submission, prepared once per connection: PostgreSQL parsed and planned
  // the 26-parameter INSERT again for every record, in six round trips where there is one now.
  static void PrepareStatements(pqxx::connection& c) {
    // Every statement prepared here plans the same whatever its parameters (keys, rows to
    // insert); PostgreSQL's default plans put_batch_N anew for each call, 20% of its CPU a
    // submission. The setting exists from PostgreSQL 12 on.
    pqxx::nontransaction(c).exec(
        "SELECT set_config('plan_cache_mode', 'force_generic_plan', false) WHERE "
        "current_setting('server_version_num')::int >= 120000");
    c.prepare("stored_record", "SELECT record FROM results WHERE result_id = $1");
    c.prepare("client", std::string("SELECT ") + kClientColumns +
                            " FROM clients WHERE client_id = $1");
    // The count's shard of this connection (pg_schema.cc: one row for all was a queue).
    const std::string count =
        "counted AS (UPDATE result_counts SET n = n + (SELECT count(*) FROM stored) WHERE shard "
        "= pg_backend_pid() % " +
        std::to_string(pg::kCountShards) + " AND EXISTS (SELECT 1 FROM stored) RETURNING 1) ";
    // $1..$26: the columns.
    std::string values;
    for (size_t i = 0; i < std::size(kPutColumns); ++i) {
      values += (i ? ", $" : "$") + std::to_string(i + 1) + "::" + kPutColumns[i].type;
    }
    c.prepare("put_result", "WITH stored AS (" + InsertFrom("(VALUES (" + values + "))") +
                                " ON CONFLICT (result_id) DO NOTHING RETURNING 1), " + count +
                                "SELECT true, EXISTS (SELECT 1 FROM stored), true");
    // (nonce spent, row stored, client approved); the nonce is spent only for an approved client.
    c.prepare("put_result_with_nonce",
              "WITH approved AS (SELECT 1 FROM clients WHERE client_id = $2::text AND status = "
              "'approved'), spent AS (INSERT INTO nonces (client_id, nonce, keep_until) SELECT "
              "$2::text, $27::text, $28::bigint WHERE EXISTS (SELECT 1 FROM approved) ON CONFLICT "
              "DO NOTHING RETURNING 1), stored AS (" +
                  InsertFrom("(VALUES (" + values + "))") +
                  " AND EXISTS (SELECT 1 FROM spent) ON CONFLICT (result_id) DO NOTHING "
                  "RETURNING 1), " +
                  count +
                  "SELECT EXISTS (SELECT 1 FROM spent), EXISTS (SELECT 1 FROM stored), EXISTS "
                  "(SELECT 1 FROM approved)");
    // put_batch_N: N rows of put_result_with_nonce's 28 parameters; a row per input row, in
    // order: (nonce spent, row stored, client approved). pqxx prepares each on its first use only.
    for (size_t n = 1; n <= pg::PutBatcher::kMaxBatch; ++n) {
      c.prepare("put_batch_" + std::to_string(n), BatchSql(n, count));
    }
  }

  struct PutColumn {
    const char* name;
    const char* type;
  };
  // put_result's parameters, in order: the results columns but profile_mismatch (BatchedRow's
  // accessors know the places of result_id, client_id and record).
  static constexpr PutColumn kPutColumns[] = {
      {"result_id", "text"},        {"client_id", "text"},      {"received_at", "bigint"},
      {"config_id", "text"},        {"status", "text"},         {"benchmark_id", "text"},
      {"benchmark_type", "text"},   {"model_file", "text"},     {"model_sha256", "text"},
      {"quant", "text"},            {"quant_label", "text"},    {"runtime", "text"},
      {"device_id", "text"},        {"label", "text"},          {"started_at", "text"},
      {"threads", "bigint"},        {"headline_metric", "text"}, {"headline_unit", "text"},
      {"headline", "float8"},       {"ci_low", "float8"},       {"ci_high", "float8"},
      {"headline_n", "bigint"},     {"ci_reached", "integer"},  {"settings", "jsonb"},
      {"record", "text"},           {"metrics", "text"}};

  // INSERT INTO results ... SELECT ... FROM `rows` AS input (kPutColumns' names) WHERE true: the
  // caller may add AND conditions and ON CONFLICT. profile_mismatch compares the record's device
  // id with the id of its client's registered profile (fleet_store::ProfileMismatch).
  static std::string InsertFrom(const std::string& rows) {
    std::string names, selected;
    for (const PutColumn& col : kPutColumns) {
      names += std::string(names.empty() ? "" : ", ") + col.name;
      selected += std::string(selected.empty() ? "" : ", ") + "input." + col.name;
    }
    return "INSERT INTO results (" + names + ", profile_mismatch) SELECT " + selected +
           ", COALESCE((SELECT CASE WHEN input.device_id <> '' AND p.id <> '' AND p.id <> "
           "input.device_id THEN 1 ELSE 0 END FROM (SELECT CASE WHEN jsonb_typeof(profile::jsonb "
           "-> 'id') = 'string' THEN profile::jsonb ->> 'id' ELSE '' END AS id FROM clients WHERE "
           "clients.client_id = input.client_id) AS p), 0) FROM " +
           rows + " AS input (" + names + ") WHERE true";
  }

  static std::string BatchSql(size_t n, const std::string& count) {
    constexpr size_t kWidth = std::size(kPutColumns) + 2;  // the columns, nonce, keep_until
    std::string rows;
    for (size_t r = 0; r < n; ++r) {
      rows += r ? ", (" : "(";
      rows += std::to_string(r);
      for (size_t i = 0; i < kWidth; ++i) {
        const char* type = i < std::size(kPutColumns) ? kPutColumns[i].type
                           : i == kWidth - 2          ? "text"
                                                      : "bigint";
        rows += ", $" + std::to_string(r * kWidth + i + 1) + "::" + type;
      }
      rows += ")";
    }
    std::string names = "i", selected;
    for (const PutColumn& col : kPutColumns) {
      names += std::string(", ") + col.name;
      selected += std::string(selected.empty() ? "given." : ", given.") + col.name;
    }
    // Ids compare as bytes (COLLATE "C"), as the tables' columns do. A row's nonce is spent, and
    // the row stored, only when its client is approved.
    return "WITH given (" + names + ", nonce, keep_until) AS (VALUES " + rows +
           "), approved AS (SELECT client_id FROM clients WHERE status = 'approved' AND "
           "client_id IN (SELECT client_id FROM given)), spent AS (INSERT INTO nonces "
           "(client_id, nonce, keep_until) SELECT client_id, nonce, keep_until FROM given WHERE "
           "client_id IN (SELECT client_id FROM approved) ORDER BY i ON CONFLICT DO NOTHING "
           "RETURNING client_id, nonce), stored AS (" +
           InsertFrom("(SELECT " + selected +
                      " FROM given JOIN spent ON spent.client_id = given.client_id AND "
                      "spent.nonce = given.nonce ORDER BY given.i)") +
           " ON CONFLICT (result_id) DO NOTHING RETURNING result_id), " + count +
           "SELECT EXISTS (SELECT 1 FROM spent WHERE spent.client_id = given.client_id AND "
           "spent.nonce = given.nonce), EXISTS (SELECT 1 FROM stored WHERE stored.result_id = "
           "given.result_id COLLATE \"C\"), EXISTS (SELECT 1 FROM approved WHERE "
           "approved.client_id = given.client_id) FROM given ORDER BY i";
  }

  static PutOutcome SameOrConflict(const std::string& stored, const std::string& text) {
    if (stored == text || ParseOr(stored, json()) == ParseOr(text, json::object())) {
      return PutOutcome::kSame;
    }
    return PutOutcome::kConflict;
  }

  static int RequeueIn(pqxx::work& tx, int64_t now) {
    return static_cast<int>(
        tx.exec_params("UPDATE jobs SET state = 'queued', client_id = '', lease_expires_at = 0 "
                       "WHERE state = 'leased' AND lease_expires_at < $1",
                       now)
            .affected_rows());
  }

  // A row of kRowColumns.
  static FleetResultRow ReadResultRow(const pqxx::row& r) {
    FleetResultRow out;
    ResultRow& row = out.row;
    std::string* texts[] = {&row.result_id,    &row.config_id,      &row.status,
                            &row.benchmark_id, &row.benchmark_type, &row.model_file,
                            &row.model_sha256, &row.quant,          &row.runtime,
                            &row.device_id,    &row.label,          &row.started_at};
    for (int i = 0; i < 12; ++i) *texts[i] = r[i].as<std::string>();
    row.threads = static_cast<int>(r[12].as<int64_t>());
    row.headline = OptDouble(r[13]);
    row.headline_metric = r[14].as<std::string>();
    row.headline_unit = r[15].as<std::string>();
    row.headline_ci95_low = OptDouble(r[16]);
    row.headline_ci95_high = OptDouble(r[17]);
    row.headline_n = static_cast<int>(r[18].as<int64_t>());
    row.ci_reached = r[19].as<int>() != 0;
    row.quant_label = r[20].as<std::string>();
    out.client_id = r[21].as<std::string>();
    out.received_at = r[22].as<int64_t>();
    out.profile_mismatch = r[23].as<int>() != 0;
    return out;
  }

  const std::string connect_url_;
  const SafeUrl safe_;
  const std::shared_ptr<pg::PutBatcher> batcher_ = pg::PutBatcherFor(connect_url_);
  fleet_store::ClientJsonCache client_json_;
  std::unordered_map<std::string, std::string> cached_;  // Cached: query text -> statement name
  std::unique_ptr<pqxx::connection> conn_;
};

}  // namespace

Result<std::unique_ptr<FleetStore>> OpenPgFleetStore(const std::string& url) {
  auto store = std::make_unique<PgFleetStore>(url);
  if (Status s = store->Open(); !s.ok()) return s.error();
  return std::unique_ptr<FleetStore>(std::move(store));
}

}  // namespace pipette
