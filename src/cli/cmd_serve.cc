// `pipette serve` and its operator commands (keys, clients).
#include "cli/number_range.h"
#include "cli/cmd_serve.h"

#include <ctime>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/text_table.h"
#include "pipette/fleet_store.h"
#include "pipette/server.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct ServeArgs {
  std::string listen = "127.0.0.1:8750";
  ServerOptions options;
  std::string labels;
  int expires_days = 90;
  std::string client_id;
  std::string backup_path;  // serve backup -o
};

// "HOST:PORT", "[V6]:PORT", ":PORT" (127.0.0.1) or "PORT".
Status ParseListen(const std::string& text, ServerOptions* options) {
  const auto bad = [&] {
    return MakeError("listen address '" + text +
                     "' is not HOST:PORT (e.g. 127.0.0.1:8750, 0.0.0.0:8750, [::1]:8750)");
  };
  std::string host = options->host, port;
  if (!text.empty() && text[0] == '[') {
    const size_t close = text.find("]:");
    if (close == std::string::npos) return bad();
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
    if (colon > 0) host = text.substr(0, colon);
    port = text.substr(colon + 1);
  } else {
    port = text;
  }
  if (host.empty() || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    return bad();
  }
  options->host = host;
  options->port = std::stoi(port);
  return Status::Ok();
}

std::unique_ptr<FleetStore> OpenOrReport(const std::string& db, CliContext& ctx) {
  Result<std::unique_ptr<FleetStore>> store =
      OpenFleetStore(db.empty() ? DefaultFleetDbPath() : db);
  if (!store.ok()) {
    ReportError(ctx, store.error(), kExitFailure);
    return nullptr;
  }
  return std::move(store).value();
}

void RunServe(ServeArgs& a, CliContext& ctx) {
  if (Status s = ParseListen(a.listen, &a.options); !s.ok()) {
    ReportError(ctx, s.error(), kExitBadInput);
    return;
  }
  const std::string& db = a.options.db;
  if (a.options.db_max_size_bytes > 0 &&
      (db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0)) {
    ReportError(ctx,
                MakeError("--db-max-size is a quota on an SQLite fleet database; a PostgreSQL "
                          "server's quotas are its own (drop --db-max-size)"),
                kExitBadInput);
    return;
  }
  Status served = Serve(a.options);
  if (!served.ok()) {
    Error e = served.error();
    if (e.message.rfind("cannot listen on", 0) == 0) e.message += " (--listen)";
    ReportError(ctx, e, kExitFailure);
  }
}

void CreateKey(const ServeArgs& a, CliContext& ctx) {
  std::unique_ptr<FleetStore> store = OpenOrReport(a.options.db, ctx);
  if (!store) return;
  std::vector<std::string> labels;
  for (size_t start = 0; start < a.labels.size();) {
    size_t comma = a.labels.find(',', start);
    if (comma == std::string::npos) comma = a.labels.size();
    if (comma > start) labels.push_back(a.labels.substr(start, comma - start));
    start = comma + 1;
  }
  const int64_t expires_at =
      a.expires_days > 0 ? static_cast<int64_t>(std::time(nullptr)) + a.expires_days * 86400ll : 0;
  IssuedPreauthKey issued = IssuePreauthKey(labels, expires_at);
  if (Status s = store->AddPreauthKey(issued.key); !s.ok()) {
    ReportError(ctx, s.error(), kExitFailure);
    return;
  }
  if (ctx.json) {
    std::cout << json{{"token", issued.token},
                      {"key_id", issued.key.key_id},
                      {"labels", issued.key.labels},
                      {"expires_at", issued.key.expires_at}}
                     .dump()
              << "\n";
  } else {
    std::cout << issued.token << "\n";
  }
  std::cerr << "pipette serve: pre-authorization key " << issued.key.key_id << " (single use; "
            << (expires_at ? std::to_string(a.expires_days) + " days" : "no expiry")
            << "): shown this once, only its digest is stored in " << store->where() << "\n";
}

void ListClients(const ServeArgs& a, CliContext& ctx) {
  std::unique_ptr<FleetStore> store = OpenOrReport(a.options.db, ctx);
  if (!store) return;
  Result<std::vector<FleetClient>> clients = store->ListClients();
  if (!clients.ok()) {
    ReportError(ctx, clients.error(), kExitFailure);
    return;
  }
  if (ctx.json) {
    json out = json::array();
    for (const FleetClient& c : *clients) {
      out.push_back({{"client_id", c.client_id},
                     {"status", ClientStatusName(c.status)},
                     {"label", c.label},
                     {"labels", c.labels},
                     {"profile", c.profile},
                     {"capabilities", c.capabilities},
                     {"created_at", c.created_at}});
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  if (clients->empty()) {
    std::cout << "no clients registered in " << store->where() << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows = {{"CLIENT", "STATUS", "LABEL", "LABELS", "CREATED"}};
  for (const FleetClient& c : *clients) {
    std::string labels;
    for (const std::string& l : c.labels) labels += (labels.empty() ? "" : ",") + l;
    char created[32] = "-";
    const time_t t = static_cast<time_t>(c.created_at);
    std::tm tm{};
    if (gmtime_r(&t, &tm) != nullptr)
      std::strftime(created, sizeof created, "%Y-%m-%dT%H:%MZ", &tm);
    rows.push_back({c.client_id, ClientStatusName(c.status), c.label, labels, created});
  }
  PrintTable(rows, std::cout);
}

void SetStatus(const ServeArgs& a, CliContext& ctx, ClientStatus status) {
  std::unique_ptr<FleetStore> store = OpenOrReport(a.options.db, ctx);
  if (!store) return;
  Result<std::optional<FleetClient>> found = store->GetClient(a.client_id);
  if (!found.ok()) {
    ReportError(ctx, found.error(), kExitFailure);
    return;
  }
  if (!found->has_value()) {
    ReportError(ctx,
                MakeError("no client " + a.client_id + " in " + store->where() +
                          "; see pipette serve clients list"),
                kExitBadInput);
    return;
  }
  if (Status s = store->SetClientStatus(a.client_id, status); !s.ok()) {
    ReportError(ctx, s.error(), kExitFailure);
    return;
  }
  std::cout << "client " << a.client_id << " is " << ClientStatusName(status) << "\n";
}

void AddDbOption(CLI::App* cmd, ServeArgs& a) {
  // An empty value (an unset shell variable) would fall back to the default database: refused.
  cmd->add_option("--db", a.options.db,
                  "fleet database: an SQLite file or a postgresql:// URL (default " +
                      DefaultFleetDbPath() + ")")
      ->check([](const std::string& v) {
        return v.empty() ? std::string("give a file or a postgresql:// URL") : std::string();
      });
}

}  // namespace

void AddServeCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<ServeArgs>();
  ServeArgs& a = *args;
  CLI::App* serve = app.add_subcommand(
      "serve",
      "The fleet server: signed submissions, the job queue, the results API, the dashboard");
  serve->require_subcommand(0, 1);
  serve->add_option("--listen", a.listen,
                    "HOST:PORT to listen on (default 127.0.0.1:8750; port 0: any free port)");
  AddDbOption(serve, a);
  serve->add_option("--lease", a.options.lease_s, "job lease in seconds, extended by heartbeats")
      ->capture_default_str()
      ->check(NumberIn(5, 86400));
  serve
      ->add_option("--max-body", a.options.max_body_bytes,
                   "largest request body except result records, in bytes")
      ->capture_default_str()
      ->check(NumberIn(int64_t{1024}, int64_t{1} << 30));
  serve
      ->add_option("--max-record", a.options.max_record_bytes,
                   "largest result record, in bytes (default 64 MiB)")
      ->check(NumberIn(int64_t{1024}, int64_t{1} << 32));
  serve
      ->add_option("--rate-limit", a.options.rate_per_client,
                   "signed requests per second per client, bursts of twice that (0: no limit)")
      ->capture_default_str()
      ->check(NumberIn(0.0, 1e6));
  serve
      ->add_option("--address-rate-limit", a.options.rate_per_address,
                   "requests per second per client address that no registered client signs "
                   "(registering, the dashboard, reading results), bursts of twice that (0: no "
                   "limit)")
      ->capture_default_str()
      ->check(NumberIn(0.0, 1e6));
  serve
      ->add_option("--trusted-proxy", a.options.trusted_proxies,
                   "the address of a reverse proxy in front of the server (repeatable, e.g. "
                   "127.0.0.1 for deploy/nginx): its X-Forwarded-For names the client; from "
                   "anyone else that header is ignored")
      ->delimiter(',');
  serve
      ->add_option("--page-cache", a.options.page_cache_bytes,
                   "bytes of rendered dashboard pages kept for reuse until a result is added "
                   "(0: every page rendered anew)")
      ->capture_default_str()
      ->check(NumberIn(int64_t{0}, int64_t{1} << 40));
  serve->add_option("--threads", a.options.threads, "request threads")
      ->capture_default_str()
      ->check(NumberIn(1, 256));
  serve
      ->add_option("--db-max-size", a.options.db_max_size_bytes,
                   "a quota on the SQLite fleet database, in bytes: writes beyond it are refused "
                   "as on a full disk (507) and nothing is lost (0: none; not for PostgreSQL)")
      ->check(NumberIn(int64_t{0}, int64_t{1} << 50));

  CLI::App* keys = serve->add_subcommand("keys", "Pre-authorization keys for registering devices");
  keys->require_subcommand(1);
  CLI::App* create = keys->add_subcommand("create", "A single-use key; prints its token once");
  AddDbOption(create, a);
  create->add_option("--labels", a.labels, "labels given to the client that spends it (a,b)");
  create->add_option("--expires-days", a.expires_days, "days until it expires (0: never)")
      ->check(NumberIn(0, 3650));
  create->callback([args, &ctx] { CreateKey(*args, ctx); });

  CLI::App* clients = serve->add_subcommand("clients", "Registered devices: list, approve, revoke");
  clients->require_subcommand(1);
  CLI::App* list = clients->add_subcommand("list", "Registered clients and their status");
  AddDbOption(list, a);
  list->callback([args, &ctx] { ListClients(*args, ctx); });
  CLI::App* approve = clients->add_subcommand("approve", "Approve a pending client");
  AddDbOption(approve, a);
  approve->add_option("id", a.client_id, "client id (pc_...)")->required();
  approve->callback([args, &ctx] { SetStatus(*args, ctx, ClientStatus::kApproved); });
  CLI::App* revoke = clients->add_subcommand("revoke", "Refuse a client's requests from now on");
  AddDbOption(revoke, a);
  revoke->add_option("id", a.client_id, "client id (pc_...)")->required();
  revoke->callback([args, &ctx] { SetStatus(*args, ctx, ClientStatus::kRevoked); });

  CLI::App* backup = serve->add_subcommand(
      "backup", "A consistent copy of the SQLite fleet database, taken while it serves");
  AddDbOption(backup, a);
  backup->add_option("-o,--output", a.backup_path, "the backup file to write (a new file)")
      ->required();
  backup->callback([args, &ctx] {
    const std::string db = args->options.db.empty() ? DefaultFleetDbPath() : args->options.db;
    if (Status s = BackupFleetDb(db, args->backup_path); !s.ok()) {
      ReportError(ctx, s.error(), s.error().stage == "backup" ? kExitFailure : kExitBadInput);
      return;
    }
    std::cout << "backup of " << db << " written to " << args->backup_path << "\n";
  });

  serve->callback([args, &ctx, keys, clients, backup] {
    if (keys->parsed() || clients->parsed() || backup->parsed()) return;
    RunServe(*args, ctx);
  });
}

}  // namespace pipette::cli
