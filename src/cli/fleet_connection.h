// The fleet client every command that talks to a pipette serve uses: the CA file given with
// --ca-file, and one warning per run when requests would cross the network unencrypted.
#pragma once

#include <string>

#include "cli/cli_context.h"
#include "pipette/fleet_client.h"

namespace pipette::cli {

// The client options of this run (--ca-file).
FleetClientOptions FleetOptions(const CliContext& ctx);

// A client of `url` signing as `identity`, with FleetOptions(ctx). Prints the warning of
// WarnIfInTheClear once.
FleetHttpClient FleetClientFor(const std::string& url, Identity identity, const CliContext& ctx);

// Once per run, on stderr, when `client` SendsInTheClear: "pipette: warning: http://HOST:PORT is
// not encrypted ...".
void WarnIfInTheClear(const FleetHttpClient& client);

// The exit status of a failed fleet request: kExitBadInput when the server refused it as bad
// input, kExitFailure for anything else (unreachable, a server fault).
int ExitStatusFor(const FleetError& e);

}  // namespace pipette::cli
