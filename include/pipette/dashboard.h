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
//
// Query parameters: the result filters of `GET /api/results` (benchmark, model, quant, runtime,
// device, label, status, since; a list as repeated keys or "a, b"), and on `/` sort (model,
// quant, runtime, threads, device, median, n, started), order (asc, desc), limit (rows per page,
// 1..1000, default 100) and cursor (the next page); `/quality` also takes quality=<benchmark> and
// speed=<decode benchmark>. Unknown parameters are ignored. Sorting applies within the page shown
// (the store lists newest first); every link keeps the filters.
//
// Cost: each page reads a bounded amount whatever the store holds: one page of ListResults (the
// leaderboard), at most 1000 rows and 60 records (the chart pages), 500 rows and one record per
// device (devices), 50 plans (fleet). Every stored string is HTML-escaped. Pages use no scripts;
// the stylesheet is /static/dashboard.css (a string in the binary); charts are inline SVG
// (src/report/chart.h) that scale with their viewBox.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "pipette/fleet_store.h"

namespace pipette {

struct DashboardResponse {
  enum class Kind {
    kPage,        // body is the page (content_type says what it is)
    kNotFound,    // no such page, result, device or plan; body is one line saying what is missing
    kBadRequest,  // a bad query parameter; body is one line naming it and what to do
                  // ("limit must be a whole number from 1 to 1000 (got '-1')")
    kStoreError,  // the store failed; body is the store's one-line error (for the server's log)
  };
  Kind kind = Kind::kPage;
  std::string body;
  std::string content_type = "text/html; charset=utf-8";
};

// Rendered pages kept for reuse. A page that reads results only (/, /scaling, /quality,
// /compare, /results/<id>; not with `since`, which moves with the clock) is rendered again only
// when the number of stored results has changed since: a stored result is never changed or
// deleted, so that number is the version of everything such a page reads. A page served from
// here is the page rendering it now would give (the count is read first, in its own round trip:
// 0.2 ms on PostgreSQL at 1,000,000 results, where /quality takes 20 ms of CPU to render).
// Pages about clients, plans and jobs (/devices, /fleet, /plans/<id>) are always rendered.
// Thread-safe: one per server, shared by its request threads.
class PageCache {
 public:
  // At most `max_bytes` of page bodies (the least recently used go first); 0 keeps nothing.
  explicit PageCache(size_t max_bytes);
  ~PageCache();
  PageCache(const PageCache&) = delete;
  PageCache& operator=(const PageCache&) = delete;

  // What RenderDashboard uses: the page kept for `key` at `version`, if any; keeping a page.
  std::optional<DashboardResponse> Find(const std::string& key, int64_t version);
  void Keep(const std::string& key, int64_t version, const DashboardResponse& page);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Renders the page at `path` ("/", "/results/<id>", ...) with `query` (decoded query
// parameters; a key may repeat), or takes it from `cache` (may be null) as PageCache says. Not
// thread-safe with respect to `store` (one store per thread). Never throws (an exception inside a
// page becomes kStoreError). kNotFound, kBadRequest and kStoreError bodies are plain text
// (content_type "text/plain; charset=utf-8").
DashboardResponse RenderDashboard(FleetStore& store, const std::string& path,
                                  const std::multimap<std::string, std::string>& query,
                                  PageCache* cache = nullptr);

}  // namespace pipette
