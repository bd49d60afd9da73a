#include "cli/fleet_connection.h"

#include <atomic>
#include <iostream>

namespace pipette::cli {

FleetClientOptions FleetOptions(const CliContext& ctx) {
  FleetClientOptions o;
  o.ca_file = ctx.ca_file;
  return o;
}

FleetHttpClient FleetClientFor(const std::string& url, Identity identity, const CliContext& ctx) {
  FleetHttpClient client(url, std::move(identity), FleetOptions(ctx));
  WarnIfInTheClear(client);
  return client;
}

void WarnIfInTheClear(const FleetHttpClient& client) {
  static std::atomic<bool> warned{false};
  if (!client.SendsInTheClear() || warned.exchange(true)) return;
  std::cerr << "pipette: warning: " << client.server_url()
            << " is not encrypted: signatures stop forged and replayed requests, but anyone on "
               "the network between can read the records and job specs, and alter what the "
               "server answers; serve it behind TLS (deploy/README.md) and use https://\n";
}

int ExitStatusFor(const FleetError& e) {
  return e.kind == FleetFailure::kRejected ? kExitBadInput : kExitFailure;
}

}  // namespace pipette::cli
