// ResultStore: records in and out of the SQLite file (schema in schema.cc).
#include "pipette/store.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <system_error>

#include "pipette/gguf.h"
#include "pipette/record.h"
#include "store/record.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using store::Db;
using store::Stmt;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::string Lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A WHERE clause and its parameters, built from a filter.
struct Where {
  std::string sql;
  std::vector<std::string> params;

  void Add(const std::string& condition, const std::vector<std::string>& condition_params) {
    sql += sql.empty() ? " WHERE " : " AND ";
    sql += condition;
    params.insert(params.end(), condition_params.begin(), condition_params.end());
  }

  // "(c OR c OR ...)" over `values`: `condition` binds its value `uses` times.
  void AddAny(const std::string& condition, const std::vector<std::string>& values, int uses = 1) {
    if (values.empty()) return;
    std::string any;
    std::vector<std::string> p;
    for (const std::string& v : values) {
      any += (any.empty() ? "(" : " OR ") + condition;
      for (int i = 0; i < uses; ++i) p.push_back(v);
    }
    Add(any + ")", p);
  }
};

bool IsNumber(const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(v);
}

// One runtime.settings entry against its filter value (see ParseSettingFilter): the same text, or
// for a number the same value, or for true/false the same boolean. The key is checked to be a
// plain name, so it can be part of the JSON path.
std::pair<std::string, std::vector<std::string>> SettingCondition(const SettingFilter& f) {
  const std::string path = "'$.runtime.settings." + f.key + "'";
  const std::string value = "json_extract(record, " + path + ")";
  const std::string type = "json_type(record, " + path + ")";
  if (f.value == "true" || f.value == "false") return {type + " = ?", {f.value}};
  if (IsNumber(f.value)) {
    return {"((" + type + " = 'text' AND " + value + " = ?) OR (" + type +
                " IN ('integer', 'real') AND " + value + " = CAST(? AS REAL)))",
            {f.value, f.value}};
  }
  return {"(" + type + " = 'text' AND " + value + " = ? COLLATE NOCASE)", {f.value}};
}

// `since` is ParseSince(f.since) when f.since is not empty.
Result<Where> BuildWhere(const ResultFilter& f, const std::string& since) {
  Where w;
  w.AddAny("benchmark_id = ?", f.benchmarks);
  w.AddAny("(substr(model_sha256, 1, length(?)) = lower(?) OR instr(model_file, ?) > 0)",
           f.models, 3);
  w.AddAny("quant = ? COLLATE NOCASE", f.quants);
  if (!f.status.empty()) w.Add("status = ?", {f.status});
  w.AddAny("substr(device_id, 1, length(?)) = lower(?)", f.devices, 2);
  w.AddAny("runtime = ?", f.runtimes);
  w.AddAny("label = ?", f.labels);
  // Alternatives of one key are ORed, keys ANDed.
  std::map<std::string, std::vector<SettingFilter>> by_key;
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
  if (!f.since.empty()) w.Add("started_at >= ?", {since});
  w.sql += " ORDER BY started_at DESC, result_id DESC";
  if (f.limit > 0) w.sql += " LIMIT " + std::to_string(f.limit);
  return w;
}

size_t CommonPrefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

std::string DefaultStorePath() {
  if (std::string p = Env("PIPETTE_STORE"); !p.empty()) return p;
  if (std::string xdg = Env("XDG_DATA_HOME"); !xdg.empty()) return xdg + "/pipette/results.db";
  if (std::string home = Env("HOME"); !home.empty()) {
    return home + "/.local/share/pipette/results.db";
  }
  return "pipette-results.db";
}

struct ResultStore::Impl {
  std::unique_ptr<Db> db;

  // Rows or records for a filter: runs `select` + BuildWhere(filter), calling `row` per result.
  template <typename RowFn>
  Status Query(const std::string& select, const ResultFilter& filter, RowFn row) {
    std::string since;
    if (!filter.since.empty()) {
      auto parsed = ParseSince(filter.since);
      if (!parsed.ok()) return parsed.error().Wrap("since");
      since = std::move(*parsed);
    }
    auto built = BuildWhere(filter, since);
    if (!built.ok()) return built.error();
    const Where& where = *built;
    auto stmt = db->Prepare(select + where.sql);
    if (!stmt.ok()) return stmt.error();
    for (size_t i = 0; i < where.params.size(); ++i) stmt->Bind(int(i) + 1, where.params[i]);
    for (;;) {
      auto has_row = stmt->Step("reading results");
      if (!has_row.ok()) return has_row.error();
      if (!*has_row) return Status::Ok();
      if (Status s = row(*stmt); !s.ok()) return s;
    }
  }

  Result<json> ParseRecord(const std::string& id, const std::string& text) {
    json record = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) {
      return MakeError(db->path() + ": stored record " + id + " is not valid JSON", "store");
    }
    if (record.contains("eval")) {
      auto completions = ReadCompletions(id);
      if (!completions.ok()) return completions.error();
      if (!completions->empty()) record["completions"] = std::move(*completions);
    }
    return record;
  }

  // An eval result's attempts, in their order: each row's `attempt` JSON with its completion text.
  Result<json> ReadCompletions(const std::string& id) {
    auto stmt = db->Prepare(
        "SELECT attempt, completion FROM completions WHERE result_id = ? ORDER BY ord");
    if (!stmt.ok()) return stmt.error();
    stmt->Bind(1, id);
    json out = json::array();
    for (;;) {
      auto row = stmt->Step("reading the completions of " + id);
      if (!row.ok()) return row.error();
      if (!*row) return out;
      json attempt = json::parse(stmt->Text(0), nullptr, false);
      if (!attempt.is_object()) {
        return MakeError(db->path() + ": a stored completion of " + id + " is not valid JSON",
                         "store");
      }
      attempt["completion"] = stmt->Text(1);
      out.push_back(std::move(attempt));
    }
  }

  Status InsertCompletions(const std::string& id, const json& completions) {
    auto insert = db->Prepare(
        "INSERT INTO completions (result_id, ord, sample_key, sample_id, stop, correct, "
        "extracted, method, completion, attempt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (!insert.ok()) return insert.error();
    int64_t ord = 0;
    for (const json& c : completions) {
      json attempt = c;
      attempt.erase("completion");
      insert->Reset();
      insert->Bind(1, id);
      insert->Bind(2, ord++);
      insert->Bind(3, c.value("key", ""));
      insert->Bind(4, c.value("id", ""));
      insert->Bind(5, c.value("stop", ""));
      insert->Bind(6, static_cast<int64_t>(c.value("correct", false) ? 1 : 0));
      insert->Bind(7, c.value("extracted", ""));
      insert->Bind(8, c.value("method", ""));
      insert->Bind(9, c.value("completion", ""));
      insert->Bind(10, attempt.dump());
      if (Status s = insert->Run("storing the completions of " + id); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // Inserts `record` (with its text) unless its result_id is stored: nothing to do when the
  // stored record is the same, an error (ending in `on_conflict`) when it differs. Inside the
  // caller's transaction.
  Status StoreOnce(const std::string& path, const json& record, const std::string& text,
                   const std::string& doing, const std::string& on_conflict) {
    const std::string id = record["result_id"];
    auto existing = db->Prepare("SELECT record FROM results WHERE result_id = ?");
    if (!existing.ok()) return existing.error();
    existing->Bind(1, id);
    auto found = existing->Step(doing);
    if (!found.ok()) return found.error();
    if (!*found) return InsertRecord(record, text);
    auto stored = ParseRecord(id, existing->Text(0));
    if (!stored.ok()) return stored.error();
    if (*stored == record) return Status::Ok();  // the same result again: nothing to do
    return MakeError(path + ": result " + id + " is already stored with different content; " +
                         on_conflict,
                     "store");
  }

  Status InsertRecord(const json& full, const std::string& full_text) {
    // Completions go to their own table; the record's JSON keeps the rest.
    json rest;
    std::string rest_text;
    const bool split = full.contains("completions") && full["completions"].is_array() &&
                       !full["completions"].empty() && full.contains("eval");
    if (split) {
      rest = full;
      rest.erase("completions");
      rest_text = rest.dump();
    }
    const json& record = rest_text.empty() ? full : rest;
    const std::string& text = rest_text.empty() ? full_text : rest_text;
    const store::IndexedColumns c = store::ExtractColumns(record);
    auto insert = db->Prepare(
        "INSERT INTO results (result_id, config_id, status, benchmark_id, benchmark_type, "
        "model_file, model_sha256, quant, runtime, runtime_version, runtime_commit, threads, "
        "device_id, label, started_at, finished_at, headline_metric, headline_unit, headline, "
        "record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
        "?17, ?18, ?19, ?20)");
    if (!insert.ok()) return insert.error();
    const std::string* texts[] = {&c.result_id,       &c.config_id,      &c.status,
                                  &c.benchmark_id,    &c.benchmark_type, &c.model_file,
                                  &c.model_sha256,    &c.quant,          &c.runtime,
                                  &c.runtime_version, &c.runtime_commit};
    for (int i = 0; i < 11; ++i) insert->Bind(i + 1, *texts[i]);
    insert->Bind(12, c.threads);
    insert->Bind(13, c.device_id);
    insert->Bind(14, c.label);
    insert->Bind(15, c.started_at);
    insert->Bind(16, c.finished_at);
    insert->Bind(17, c.headline_metric);
    insert->Bind(18, c.headline_unit);
    insert->Bind(19, c.headline);
    insert->Bind(20, text);
    const std::string doing = "storing result " + c.result_id;
    if (Status s = insert->Run(doing); !s.ok()) return s;

    auto sample =
        db->Prepare("INSERT INTO samples (result_id, rep, metric, value) VALUES (?, ?, ?, ?)");
    if (!sample.ok()) return sample.error();
    for (const store::SampleValue& v : store::ExtractSamples(record)) {
      sample->Reset();
      sample->Bind(1, c.result_id);
      sample->Bind(2, v.rep);
      sample->Bind(3, v.metric);
      sample->Bind(4, v.value);
      if (Status s = sample->Run(doing); !s.ok()) return s;
    }
    if (split) return InsertCompletions(c.result_id, full["completions"]);
    return Status::Ok();
  }

  // The shortest prefix of each of `ids` (at least 8 characters) unique among all stored ids.
  Result<std::vector<std::string>> ShortIds(const std::vector<std::string>& ids) {
    std::vector<std::string> all;
    auto stmt = db->Prepare("SELECT result_id FROM results ORDER BY result_id");
    if (!stmt.ok()) return stmt.error();
    for (;;) {
      auto has_row = stmt->Step("reading result ids");
      if (!has_row.ok()) return has_row.error();
      if (!*has_row) break;
      all.push_back(stmt->Text(0));
    }
    std::vector<std::string> out;
    for (const std::string& id : ids) {
      auto it = std::lower_bound(all.begin(), all.end(), id);
      size_t shared = 0;
      if (it != all.begin()) shared = std::max(shared, CommonPrefix(id, *std::prev(it)));
      if (it != all.end() && *it == id) ++it;
      if (it != all.end()) shared = std::max(shared, CommonPrefix(id, *it));
      out.push_back(id.substr(0, std::max<size_t>(8, shared + 1)));
    }
    return out;
  }
};

ResultStore::ResultStore(std::string path, std::unique_ptr<Impl> impl)
    : path_(std::move(path)), impl_(std::move(impl)) {}
ResultStore::~ResultStore() = default;

Result<std::unique_ptr<ResultStore>> ResultStore::Open(const std::string& path,
                                                       const StoreOptions& options) {
  if (path.empty()) return MakeError("the store path is empty; give the path of a store file", "store");
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!options.create_if_missing && !fs::exists(path, ec)) {
    return MakeError("no results store at " + path +
                         " (`pipette run` and `pipette suite run` create one); check the store path",
                     "store");
  }
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) {
      return MakeError(path + ": cannot create the directory " + parent.string() + " (" +
                           ec.message() + "); give a store path that is writable",
                       "store");
    }
  }
  if (fs::is_directory(path, ec)) {
    return MakeError(path + ": is a directory; give a store path that names a file", "store");
  }
  auto db = Db::Open(path, options.busy_timeout_ms, options.create_if_missing);
  if (!db.ok()) return db.error();
  if (Status s = store::EnsureSchema(**db); !s.ok()) return s.error();
  if (options.max_size_bytes > 0) {
    auto page_size = (*db)->QueryInt("PRAGMA page_size");
    if (!page_size.ok()) return page_size.error();
    const int64_t pages = std::max<int64_t>(1, options.max_size_bytes / page_size->value_or(4096));
    if (Status s = (*db)->Exec("PRAGMA max_page_count = " + std::to_string(pages), "configuring");
        !s.ok()) {
      return s.error();
    }
  }
  auto impl = std::make_unique<Impl>();
  impl->db = std::move(*db);
  return std::unique_ptr<ResultStore>(new ResultStore(path, std::move(impl)));
}

namespace {

// What is stored of `input`, and compared with what is already there: the record and its text
// (invalid UTF-8, say in a runtime's stderr tail, becomes U+FFFD and non-finite numbers null, as
// in any JSON text). Errors: a record the store refuses.
Result<std::pair<json, std::string>> StoredForm(const json& input) {
  if (Status s = store::ValidateRecord(input); !s.ok()) {
    const std::string id = record::StringAt(input, "/result_id");
    return MakeError(
        "invalid result record" + (id.empty() ? "" : " " + id) + ": " + s.error().message, "store");
  }
  std::string text = input.dump(-1, ' ', false, json::error_handler_t::replace);
  json record = json::parse(text);
  return std::make_pair(std::move(record), std::move(text));
}

}  // namespace

Status ResultStore::Put(const json& input) {
  auto form = StoredForm(input);
  if (!form.ok()) return form.error();
  const auto& [record, text] = *form;
  const std::string doing = "storing result " + record["result_id"].get<std::string>();
  store::WriteTransaction txn(*impl_->db);
  if (Status s = txn.Begin(doing); !s.ok()) return s;
  if (Status s = impl_->StoreOnce(path_, record, text, doing,
                           "a result is never changed, store it under a new result_id");
      !s.ok()) {
    return s;
  }
  return txn.Commit(doing);
}

Status ResultStore::PutAll(const std::vector<json>& inputs) {
  std::vector<std::pair<json, std::string>> records;  // every one checked before any is stored
  for (const json& input : inputs) {
    auto form = StoredForm(input);
    if (!form.ok()) return form.error();
    records.push_back(std::move(*form));
  }
  const std::string doing = "storing " + std::to_string(records.size()) + " results";
  store::WriteTransaction txn(*impl_->db);
  if (Status s = txn.Begin(doing); !s.ok()) return s;
  for (const auto& [record, text] : records) {
    if (Status s = impl_->StoreOnce(path_, record, text, doing, "nothing was stored"); !s.ok()) {
      return s;
    }
  }
  return txn.Commit(doing);
}

Result<std::optional<json>> ResultStore::Get(const std::string& id_or_prefix) {
  const std::string prefix = Lowercase(id_or_prefix);
  if (prefix.empty()) return MakeError("an empty result id; give a result id or its prefix");
  // result_id is ASCII, so [prefix, prefix + DEL) holds exactly the ids that start with it.
  auto stmt = impl_->db->Prepare(
      "SELECT result_id, record FROM results WHERE result_id >= ?1 AND result_id < ?2 "
      "ORDER BY result_id LIMIT 2");
  if (!stmt.ok()) return stmt.error();
  stmt->Bind(1, prefix);
  stmt->Bind(2, prefix + "\x7f");
  auto row = stmt->Step("looking up result " + prefix);
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<json>();
  const std::string id = stmt->Text(0);
  const std::string text = stmt->Text(1);
  auto second = stmt->Step("looking up result " + prefix);
  if (!second.ok()) return second.error();
  if (*second && id != prefix) {
    auto count =
        impl_->db->Prepare("SELECT count(*) FROM results WHERE result_id >= ?1 AND result_id < ?2");
    if (!count.ok()) return count.error();
    count->Bind(1, prefix);
    count->Bind(2, prefix + "\x7f");
    auto counted = count->Step("looking up result " + prefix);
    if (!counted.ok()) return counted.error();
    return MakeError("result id prefix '" + id_or_prefix + "' matches " +
                     std::to_string(count->Int(0)) + " results; give more characters");
  }
  auto record = impl_->ParseRecord(id, text);
  if (!record.ok()) return record.error();
  return std::optional<json>(std::move(*record));
}

Result<std::vector<ResultRow>> ResultStore::List(const ResultFilter& filter) {
  std::vector<ResultRow> rows;
  Status s = impl_->Query(
      "SELECT result_id, config_id, status, benchmark_id, benchmark_type, model_file, "
      "model_sha256, quant, runtime, device_id, label, started_at, threads, headline, "
      "headline_metric, headline_unit, "
      "CASE WHEN headline_metric <> '' THEN "
      "json_extract(record, '$.metrics.' || headline_metric || '.ci95_low') END, "
      "CASE WHEN headline_metric <> '' THEN "
      "json_extract(record, '$.metrics.' || headline_metric || '.ci95_high') END, "
      "coalesce(json_extract(record, '$.harness.ci_reached'), 1), "
      "json_extract(record, '$.model.tensor_types'), "
      "coalesce(json_extract(record, '$.model.quant_inferred'), 0), "
      "CASE WHEN headline_metric <> '' THEN "
      "coalesce(json_extract(record, '$.metrics.' || headline_metric || '.n'), 0) END "
      "FROM results",
      filter, [&rows](const Stmt& st) {
        ResultRow r;
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
        r.ci_reached = st.Int(18) != 0;
        const json types = json::parse(st.Text(19), nullptr, /*allow_exceptions=*/false);
        r.headline_n = static_cast<int>(st.Int(21));
        r.quant_label = QuantLabel(json{{"quant", r.quant},
                                        {"quant_inferred", st.Int(20) != 0},
                                        {"tensor_types", types.is_discarded() ? json() : types}});
        rows.push_back(std::move(r));
        return Status::Ok();
      });
  if (!s.ok()) return s.error();
  std::vector<std::string> ids;
  for (const ResultRow& r : rows) ids.push_back(r.result_id);
  auto short_ids = impl_->ShortIds(ids);
  if (!short_ids.ok()) return short_ids.error();
  for (size_t i = 0; i < rows.size(); ++i) rows[i].short_id = (*short_ids)[i];
  return rows;
}

Result<std::vector<json>> ResultStore::Records(const ResultFilter& filter) {
  std::vector<json> records;
  Status s =
      impl_->Query("SELECT result_id, record FROM results", filter, [&](const Stmt& st) -> Status {
        auto record = impl_->ParseRecord(st.Text(0), st.Text(1));
        if (!record.ok()) return record.error();
        records.push_back(std::move(*record));
        return Status::Ok();
      });
  if (!s.ok()) return s.error();
  return records;
}

Result<std::vector<std::string>> ResultStore::OkResultIds(const std::string& config_id) {
  auto stmt = impl_->db->Prepare(
      "SELECT result_id FROM results WHERE config_id = ? AND status = 'ok' "
      "ORDER BY started_at, result_id");
  if (!stmt.ok()) return stmt.error();
  stmt->Bind(1, config_id);
  std::vector<std::string> ids;
  for (;;) {
    auto row = stmt->Step("reading results of config " + config_id);
    if (!row.ok()) return row.error();
    if (!*row) return ids;
    ids.push_back(stmt->Text(0));
  }
}

namespace {
std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) abs = path;
  return abs.lexically_normal().string();
}
}  // namespace

Result<std::optional<std::string>> ResultStore::CachedFileHash(const std::string& path,
                                                               uint64_t size, int64_t mtime_ns) {
  auto stmt = impl_->db->Prepare(
      "SELECT sha256 FROM file_hashes WHERE path = ? AND size_bytes = ? AND mtime_ns = ?");
  if (!stmt.ok()) return stmt.error();
  stmt->Bind(1, AbsolutePath(path));
  stmt->Bind(2, static_cast<int64_t>(size));
  stmt->Bind(3, mtime_ns);
  auto row = stmt->Step("reading the file hash cache");
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(stmt->Text(0));
}

Status ResultStore::PutFileHash(const std::string& path, uint64_t size, int64_t mtime_ns,
                                const std::string& sha256) {
  store::WriteTransaction txn(*impl_->db);
  const char* doing = "writing the file hash cache";
  if (Status s = txn.Begin(doing); !s.ok()) return s;
  auto stmt = impl_->db->Prepare(
      "INSERT OR REPLACE INTO file_hashes (path, size_bytes, mtime_ns, sha256, hashed_at) "
      "VALUES (?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
  if (!stmt.ok()) return stmt.error();
  stmt->Bind(1, AbsolutePath(path));
  stmt->Bind(2, static_cast<int64_t>(size));
  stmt->Bind(3, mtime_ns);
  stmt->Bind(4, Lowercase(sha256));
  if (Status s = stmt->Run(doing); !s.ok()) return s;
  return txn.Commit(doing);
}

Status ResultStore::CheckIntegrity() {
  auto verdict = impl_->db->QueryText("PRAGMA integrity_check");
  if (!verdict.ok()) return verdict.error();
  if (verdict->value_or("") == "ok") return Status::Ok();
  return MakeError(path_ + ": integrity check failed: " + verdict->value_or("no answer") +
                       "; restore the store from a backup",
                   "store");
}

}  // namespace pipette
