// `pipette register` and `pipette submit` (see cmd_fleet.h): the device side of the fleet.
#include "cli/number_range.h"
#include "cli/cmd_fleet.h"

#include <fmt/format.h>

#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "cli/fleet_connection.h"
#include "cli/store_reading.h"
#include "platform/device.h"
#include "platform/device_access.h"
#include "platform/device_names.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct RegisterArgs {
  std::string server, preauth, label, identity;
  std::string device = "local";  // whose fingerprint is the registration profile
  std::string driver;            // the driver build to read it with (as the worker's --driver)
  std::vector<std::string> labels;
};

struct SubmitArgs {
  std::string server, identity;
  ResultFilter filter;
};

std::string IdentityPath(const std::string& given) {
  return given.empty() ? DefaultIdentityPath() : given;
}

int Register(const RegisterArgs& a, CliContext& ctx) {
  if (Status s = FleetHttpClient(a.server, Identity{}, FleetOptions(ctx)).Check(); !s.ok()) {
    return ReportError(ctx, s.error());
  }
  const std::string path = IdentityPath(a.identity);
  auto identity = LoadOrCreateIdentity(path);
  if (!identity.ok()) return ReportError(ctx, identity.error());
  FleetHttpClient client = FleetClientFor(a.server, *identity, ctx);
  json profile;
  auto address = ParseDeviceAddress(a.device);
  if (!address) return ReportError(ctx, address.error());
  if (address->kind == TransportKind::kLocal) {
    profile = DeviceJson(ReadDeviceInfo(), a.label);
  } else {
    auto device = DeviceAccess::Open(*address, {}, a.driver);
    if (!device) return ReportError(ctx, device.error(), kExitFailure);
    auto block = (*device)->Fingerprint(a.label);
    if (!block) return ReportError(ctx, block.error(), kExitFailure);
    profile = std::move(*block);
  }
  // The name people call the device by, here as on the server (one name per device).
  if (!a.label.empty()) {
    if (auto named = NameDevice(profile.value("id", ""), a.label); !named) {
      return ReportError(ctx, named.error().Wrap("--label"));
    }
    profile["name"] = a.label;
  }
  const FleetResult r = client.Register(a.label, a.labels, profile, a.preauth);
  if (!r.ok()) return ReportError(ctx, MakeError(r.error().message), ExitStatusFor(r.error()));
  const auto text = [&](const char* key) {
    const json& b = r->body;
    return b.is_object() && b.contains(key) && b[key].is_string() ? b[key].get<std::string>()
                                                                   : std::string();
  };
  if (text("client_id") != identity->client_id) {
    return ReportError(ctx,
                       MakeError("the server at " + client.server_url() +
                                 " answered the registration without this device's client id; "
                                 "is it pipette serve?"),
                       kExitFailure);
  }
  const std::string id = identity->client_id;
  const std::string status = text("status");
  if (ctx.json) {
    std::cout << json{{"client_id", id},
                      {"status", status},
                      {"server", client.server_url()},
                      {"identity", path},
                      {"already_registered", r->status == 200}}
                     .dump(2)
              << std::endl;
    return kExitOk;
  }
  std::cout << (r->status == 200 ? "already registered: " : "registered: ") << id << " with "
            << client.server_url() << " (identity " << path << ")\n";
  if (status == "approved") {
    std::cout << "status: approved\n";
  } else if (status == "pending") {
    std::cout << "status: pending; ask the operator: pipette serve clients approve " << id << "\n";
  } else {
    std::cout << "status: " << (status.empty() ? "unknown" : status) << "\n";
  }
  return kExitOk;
}

// The summary lines of a flush; returns whether everything was delivered.
bool PrintReport(const FlushReport& r, const Outbox& outbox, const FleetHttpClient& client,
                 std::ostream& out) {
  out << fmt::format("submitted {}, already there {}, rejected {}, pending {} ({})\n", r.sent,
                     r.already, r.rejected, r.pending, client.server_url());
  for (const std::string& line : r.rejections) {
    out << "  rejected " << line << " (kept in " << outbox.dir() << "/rejected)\n";
  }
  for (const std::string& line : r.job_notes) out << "  note: " << line << "\n";
  if (r.pending > 0) {
    out << "  pending: " << (r.retry_reason.empty() ? "not due yet" : r.retry_reason)
        << "; they wait in " << outbox.dir()
        << " and are sent by the next pipette submit or worker run\n";
  }
  return r.rejected == 0 && r.pending == 0;
}

int Submit(const SubmitArgs& a, CliContext& ctx) {
  if (Status s = FleetHttpClient(a.server, Identity{}, FleetOptions(ctx)).Check(); !s.ok()) {
    return ReportError(ctx, s.error());
  }
  const std::string path = IdentityPath(a.identity);
  auto identity = LoadIdentity(path);
  if (!identity.ok()) {
    return ReportError(ctx, MakeError("no identity at " + path + "; run pipette register --server " +
                                      a.server + " first"));
  }
  FleetHttpClient client = FleetClientFor(a.server, *identity, ctx);
  auto outbox = Outbox::Open(DefaultOutboxDir(client.server_url()));
  if (!outbox.ok()) return ReportError(ctx, outbox.error(), kExitFailure);
  auto store = OpenStoreToRead(ctx);
  if (!store) return ctx.exit_code;
  auto records = store->Records(a.filter);
  if (!records.ok()) return ReportError(ctx, records.error(), kExitFailure);
  for (const json& record : *records) {
    if (Status s = outbox->Add(record); !s.ok()) {
      return ReportError(ctx, s.error().Wrap("queueing results for " + client.server_url()),
                         kExitFailure);
    }
  }
  // The user asked for it now: records backing off from an earlier failure are tried too.
  auto report = outbox->Flush(client, std::time(nullptr), /*ignore_backoff=*/true);
  if (!report.ok()) return ReportError(ctx, report.error(), kExitFailure);
  bool delivered = report->rejected == 0 && report->pending == 0;
  if (ctx.json) {
    std::cout << json{{"server", client.server_url()},
                      {"matched", records->size()},
                      {"submitted", report->sent},
                      {"already_there", report->already},
                      {"rejected", report->rejections},
                      {"pending", report->pending},
                      {"pending_reason", report->retry_reason},
                      {"notes", report->job_notes},
                      {"outbox", outbox->dir()},
                      {"acknowledged", report->acknowledged}}
                     .dump(2)
              << std::endl;
  } else {
    delivered = PrintReport(*report, *outbox, client, std::cout);
  }
  ctx.exit_code = delivered ? kExitOk : kExitFailure;
  return ctx.exit_code;
}

}  // namespace

void AddFleetCommands(CLI::App& app, CliContext& ctx) {
  auto reg = std::make_shared<RegisterArgs>();
  CLI::App* r = app.add_subcommand(
      "register", "Register this device with a pipette serve (creates its key pair when missing)");
  r->add_option("--server", reg->server, "the server, http://HOST:PORT or https://HOST:PORT")->required();
  r->add_option("--preauth", reg->preauth,
                "a pre-authorization key (pipette serve keys create): approved at once; "
                "without one the device waits for an operator's approval");
  r->add_option("--label", reg->label,
                "the device's name, e.g. pixel-8: shown for it on the server and by this host's "
                "commands (as `pipette device --name` gives it)");
  r->add_option("--device", reg->device,
                "the device this identity stands for (its fingerprint is read there): local, "
                "ssh://... or adb://..., as the worker's --device")
      ->capture_default_str();
  r->add_option("--driver", reg->driver,
                "with --device: the driver build to read it with (as the worker's --driver)");
  r->add_option("--labels", reg->labels, "capability labels jobs may require, e.g. x86,ci")
      ->delimiter(',');
  r->add_option("--identity", reg->identity,
                "the key pair file (default: $PIPETTE_IDENTITY or " + DefaultIdentityPath() + ")");
  r->callback([reg, &ctx] { Register(*reg, ctx); });

  auto sub = std::make_shared<SubmitArgs>();
  CLI::App* s = app.add_subcommand(
      "submit", "Send stored results to a pipette serve (through the outbox: nothing is lost)");
  s->add_option("--server", sub->server, "the server, http://HOST:PORT or https://HOST:PORT")->required();
  s->add_option("--identity", sub->identity,
                "the key pair file (default: $PIPETTE_IDENTITY or " + DefaultIdentityPath() + ")");
  s->add_option("--status", sub->filter.status, "ok or failed")
      ->check(CLI::IsMember({"ok", "failed"}));
  AddConfigurationFilters(s, sub->filter);
  s->add_option("--limit", sub->filter.limit, "at most N results, the newest (0: all)")
      ->check(NumberIn(0, 1 << 30));
  s->callback([sub, s, &ctx] {
    if (CheckSince(*s, sub->filter, ctx)) Submit(*sub, ctx);
  });
}

std::unique_ptr<ResultSubmitter> ResultSubmitter::Create(const std::string& url, CliContext& ctx) {
  if (Status s = FleetHttpClient(url, Identity{}, FleetOptions(ctx)).Check(); !s.ok()) {
    ReportError(ctx, s.error().Wrap("--submit"));
    return nullptr;
  }
  const std::string path = DefaultIdentityPath();
  auto identity = LoadIdentity(path);
  if (!identity.ok()) {
    ReportError(ctx, MakeError("--submit: no identity at " + path +
                               "; run pipette register --server " + url + " first"));
    return nullptr;
  }
  FleetHttpClient client = FleetClientFor(url, *identity, ctx);
  auto outbox = Outbox::Open(DefaultOutboxDir(client.server_url()));
  if (!outbox.ok()) {
    ReportError(ctx, outbox.error().Wrap("--submit"));
    return nullptr;
  }
  return std::unique_ptr<ResultSubmitter>(
      new ResultSubmitter(std::move(client), std::move(*outbox)));
}

void ResultSubmitter::Submit(const json& record) {
  const std::string id = record.value("result_id", "");
  if (Status s = outbox_.Add(record); !s.ok()) {
    std::cerr << "pipette: warning: result " << id << " not submitted to " << client_.server_url()
              << ": " << s.error().message << "; it is in the local store (pipette submit --server "
              << client_.server_url() << " sends it later)\n";
    return;
  }
  auto report = outbox_.Flush(client_, std::time(nullptr));
  if (!report.ok()) {
    std::cerr << "pipette: warning: " << report.error().message << "\n";
    return;
  }
  const FlushReport& r = *report;
  const bool acked = std::find(r.acknowledged.begin(), r.acknowledged.end(), id) != r.acknowledged.end();
  if (acked) {
    std::cerr << "pipette: submitted result " << id << " to " << client_.server_url()
              << (r.acknowledged.size() > 1
                      ? fmt::format(" (and {} waiting before it)", r.acknowledged.size() - 1)
                      : "")
              << "\n";
  }
  for (const std::string& line : r.rejections) {
    std::cerr << "pipette: warning: " << client_.server_url() << " rejected " << line
              << " (kept in " << outbox_.dir() << "/rejected)\n";
  }
  if (r.pending > 0) {
    std::cerr << "pipette: warning: " << r.pending << " result" << (r.pending > 1 ? "s" : "")
              << " not submitted yet"
              << (r.retry_reason.empty() ? std::string() : " (" + r.retry_reason + ")")
              << "; waiting in " << outbox_.dir() << " for the next pipette submit --server "
              << client_.server_url() << " or worker run\n";
  }
}

}  // namespace pipette::cli
