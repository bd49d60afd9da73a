#include "cli/result_source.h"

#include <algorithm>

#include "cli/fleet_connection.h"
#include "cli/store_reading.h"
#include "pipette/fleet_client.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

class StoreSource final : public ResultSource {
 public:
  explicit StoreSource(std::unique_ptr<ResultStore> store) : store_(std::move(store)) {}
  const std::string& where() const override { return store_->path(); }
  Result<std::vector<ResultRow>> List(const ResultFilter& filter) override {
    return store_->List(filter);
  }
  Result<std::vector<json>> Records(const ResultFilter& filter) override {
    return store_->Records(filter);
  }
  Result<std::optional<json>> Get(const std::string& id_or_prefix) override {
    return store_->Get(id_or_prefix);
  }

 private:
  std::unique_ptr<ResultStore> store_;
};

class ServerSource final : public ResultSource {
 public:
  explicit ServerSource(FleetHttpClient client) : client_(std::move(client)) {}
  const std::string& where() const override { return client_.server_url(); }

  Result<std::vector<ResultRow>> List(const ResultFilter& filter) override {
    std::vector<ResultRow> rows;
    auto added = Pages(filter, 1000, "results", [&](const json& j) -> Status {
      auto row = ResultRowFromJson(j);
      if (!row.ok()) return row.error();
      rows.push_back(std::move(*row));
      return {};
    });
    if (!added.ok()) return added.error();
    return rows;
  }

  Result<std::vector<json>> Records(const ResultFilter& filter) override {
    std::vector<json> records;
    auto added = Pages(filter, 200, "records", [&](const json& j) -> Status {
      if (!j.is_object()) return NotPipette("a record that is not a JSON object");
      records.push_back(j);
      return {};
    });
    if (!added.ok()) return added.error();
    return records;
  }

  Result<std::optional<json>> Get(const std::string& id_or_prefix) override {
    const FleetResult r = client_.GetResult(id_or_prefix);
    if (!r.ok()) {
      if (r.error().status == 404) return std::optional<json>();
      return MakeError(r.error().message);
    }
    if (!r->body.is_object()) return NotPipette("a result that is not a JSON object");
    return std::optional<json>(r->body);
  }

 private:
  Error NotPipette(const std::string& what) const {
    return MakeError("the server at " + client_.server_url() + " answered " + what +
                     "; is it pipette serve?");
  }

  // Every page of /api/<key> (results or records) matching `filter`, up to filter.limit, each
  // item given to `add`.
  template <typename Add>
  Result<size_t> Pages(const ResultFilter& filter, int page, const char* key, Add add) {
    size_t got = 0;
    std::string cursor;
    ResultFilter page_filter = filter;
    page_filter.limit = 0;
    do {
      const int want =
          filter.limit > 0 ? std::min<int>(page, filter.limit - static_cast<int>(got)) : page;
      const FleetResult r = std::string(key) == "records"
                                ? client_.ListRecords(page_filter, want, cursor)
                                : client_.ListResults(page_filter, want, cursor);
      if (!r.ok()) return MakeError(r.error().message);
      if (!r->body.is_object() || !r->body.contains(key) || !r->body[key].is_array()) {
        return NotPipette(std::string("/api/") + key + " without a " + key + " list");
      }
      for (const json& item : r->body[key]) {
        if (Status s = add(item); !s.ok()) return s.error();
        ++got;
      }
      const std::string next = r->body.contains("next") && r->body["next"].is_string()
                                   ? r->body["next"].get<std::string>()
                                   : "";
      // A cursor that does not move (or a page that adds nothing) would page for ever.
      if (!next.empty() && (next == cursor || r->body[key].empty())) {
        return NotPipette("the same page of /api/" + std::string(key) + " again");
      }
      cursor = next;
    } while (!cursor.empty() && (filter.limit == 0 || static_cast<int>(got) < filter.limit));
    return got;
  }

  FleetHttpClient client_;
};

}  // namespace

void AddServerOption(CLI::App* cmd, CliContext& ctx) {
  cmd->add_option("--server", ctx.server,
                  "read the results of this pipette serve, http[s]://HOST:PORT, instead of the "
                  "local store");
}

std::unique_ptr<ResultSource> OpenSourceToRead(CliContext& ctx) {
  if (ctx.server.empty()) {
    std::unique_ptr<ResultStore> store = OpenStoreToRead(ctx);
    if (!store) return nullptr;
    return std::make_unique<StoreSource>(std::move(store));
  }
  if (!ctx.store_path.empty()) {
    ReportError(ctx, MakeError("--store and --server both say where to read results; give one"));
    return nullptr;
  }
  FleetHttpClient client = FleetClientFor(ctx.server, Identity{}, ctx);
  if (Status s = client.Check(); !s.ok()) {
    ReportError(ctx, s.error().Wrap("--server"));
    return nullptr;
  }
  return std::make_unique<ServerSource>(std::move(client));
}

}  // namespace pipette::cli
