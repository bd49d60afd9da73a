// The fleet dashboard (DESIGN.md 8; issue 10 item 6): server-rendered HTML pages over a fleet
// store, served by `pipette serve` at `/`. Pages (paths relative to the server root):
//   /                      leaderboard per benchmark (filters: device, model, quant, runtime,
//                          benchmark as query parameters; sortable; links keep the filters)
//   /scaling               context-scaling curves (headline metric against prompt tokens)
//   /quality               quality against speed with the Pareto front (KL divergence, accuracy)
//   /results/<id>          one result: metrics with CIs, raw samples, thermal series, provenance
//   /devices, /devices/<id>  devices with their fingerprints
//   /compare?a=<id>&b=<id> two results side by side
//   /fleet, /plans/<id>    clients, plans and their progress
//   /static/<file>         the pages' CSS and scripts, compiled into the binary
// Rendering reads the store and nothing else; it knows nothing of HTTP.
#pragma once

#include <map>
#include <string>

#include "pipette/fleet_store.h"

namespace pipette {

struct DashboardResponse {
  enum class Kind {
    kPage,        // body is the page (content_type says what it is)
    kNotFound,    // no such page or result; body is one line saying what is missing
    kBadRequest,  // a bad query parameter; body is one line naming it and what to do
    kStoreError,  // the store failed; body is the store's one-line error (for the server's log)
  };
  Kind kind = Kind::kPage;
  std::string body;
  std::string content_type = "text/html; charset=utf-8";
};

// Renders the page at `path` ("/", "/results/<id>", ...) with `query` (decoded query
// parameters; a key may repeat). Not thread-safe with respect to `store` (one store per thread).
DashboardResponse RenderDashboard(FleetStore& store, const std::string& path,
                                  const std::multimap<std::string, std::string>& query);

}  // namespace pipette
