// The client commands of the fleet (docs/fleet-protocol.md): register this device with a
// `pipette serve`, submit stored results to it, and what `run|suite run --submit` use.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_context.h"
#include "pipette/fleet_client.h"
#include "pipette/store.h"

namespace pipette::cli {

// Adds:
//   register --server URL [--preauth KEY] [--label NAME] [--labels a,b] [--identity FILE]
//       creates the identity when missing and registers it with this device's fingerprint;
//       prints the client id and whether it is approved or pending (exit 1: server unreachable
//       or failing; 2: refused, e.g. a spent pre-authorization key).
//   submit --server URL [--identity FILE] [results filters]
//       puts the matching stored results in the outbox and sends everything waiting there;
//       exit 0 only when nothing was refused and nothing is left waiting, else 1.
void AddFleetCommands(CLI::App& app, CliContext& ctx);

// `run|suite run --submit URL`: each stored record goes to the outbox, then the outbox is sent.
// Never fails the measurement: what could not be sent stays in the outbox, with one warning line
// on stderr.
class ResultSubmitter {
 public:
  // Checks the URL and loads the identity ($PIPETTE_IDENTITY or the default path). On an error
  // (a bad URL, no identity: "run pipette register --server URL first") it is reported (exit 2)
  // and nullptr returned: nothing has been measured yet.
  static std::unique_ptr<ResultSubmitter> Create(const std::string& url, CliContext& ctx);

  // Queues `record` and sends the outbox; prints one line to stderr ("submitted result ID to
  // URL", or a warning saying where it waits and why).
  void Submit(const nlohmann::json& record);

 private:
  ResultSubmitter(FleetHttpClient client, Outbox outbox)
      : client_(std::move(client)), outbox_(std::move(outbox)) {}
  FleetHttpClient client_;
  Outbox outbox_;
};

}  // namespace pipette::cli
