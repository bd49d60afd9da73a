// The HTTP adapter of `pipette serve` (cpp-httplib): routes, body limits, status codes, headers,
// JSON error bodies and the request log. The use cases are FleetService's (service.h).
#pragma once

#include <httplib.h>

#include "pipette/server.h"
#include "server/service.h"
#include "server/store_pool.h"

namespace pipette::server {

// Installs every route of docs/fleet-protocol.md and the dashboard on `svr`. `service` and `pool`
// must outlive the server's handling of requests.
void InstallRoutes(httplib::Server& svr, FleetService& service, StorePool& pool,
                   const ServerOptions& options, bool log_requests);

}  // namespace pipette::server
