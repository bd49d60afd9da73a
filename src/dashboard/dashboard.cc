// RenderDashboard: routes a path to its page (pages.h) and serves the stylesheet. Catches what a
// page might throw (nlohmann on a malformed stored record, bad_alloc) at this boundary.
#include "pipette/dashboard.h"

#include <exception>

#include "dashboard/html.h"
#include "dashboard/layout.h"
#include "dashboard/pages.h"

namespace pipette {
namespace {

using namespace dashboard;

// The id after `prefix` ("/results/" + id); "" when `path` is not prefix + one segment.
std::string Segment(const std::string& path, const std::string& prefix) {
  if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return "";
  std::string id = path.substr(prefix.size());
  return id.find('/') == std::string::npos ? id : "";
}

DashboardResponse Route(FleetStore& store, std::string path, const Query& query) {
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path.empty() || path == "/") return LeaderboardPage(store, query);
  if (path == "/static/dashboard.css") {
    DashboardResponse r;
    r.body = std::string(Css());
    r.content_type = "text/css; charset=utf-8";
    return r;
  }
  if (path == "/scaling") return ScalingPage(store, query);
  if (path == "/quality") return QualityPage(store, query);
  if (path == "/devices") return DevicesPage(store, query);
  if (path == "/compare") return ComparePage(store, query);
  if (path == "/fleet") return FleetPage(store);
  if (const std::string id = Segment(path, "/results/"); !id.empty())
    return OneResultPage(store, id);
  if (const std::string id = Segment(path, "/devices/"); !id.empty()) return DevicePage(store, id);
  if (const std::string id = Segment(path, "/plans/"); !id.empty()) return PlanPage(store, id);
  return NotFound("no page " + path +
                  " (pages: /, /scaling, /quality, /devices, /fleet, "
                  "/results/<id>, /compare?a=&b=)");
}

// Whether the page at `path` reads stored results only, and not the clock (PageCache).
bool ReadsResultsOnly(std::string path, const Query& query) {
  if (query.count("since")) return false;
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  return path.empty() || path == "/" || path == "/scaling" || path == "/quality" ||
         path == "/compare" || !Segment(path, "/results/").empty();
}

}  // namespace

DashboardResponse RenderDashboard(FleetStore& store, const std::string& path,
                                  const std::multimap<std::string, std::string>& query,
                                  PageCache* cache) {
  try {
    if (cache == nullptr || !ReadsResultsOnly(path, query)) return Route(store, path, query);
    Result<int64_t> version = store.CountResults();
    if (!version.ok()) return StoreError(version.error());
    // Each part with its length before it: no two requests share a key.
    std::string key;
    const auto add = [&key](const std::string& part) {
      key += std::to_string(part.size()) + ':' + part;
    };
    add(store.where());
    add(path);
    for (const auto& [k, v] : query) {
      add(k);
      add(v);
    }
    if (std::optional<DashboardResponse> kept = cache->Find(key, *version)) return *kept;
    DashboardResponse page = Route(store, path, query);
    if (page.kind == DashboardResponse::Kind::kPage) cache->Keep(key, *version, page);
    return page;
  } catch (const std::exception& e) {
    return StoreError(MakeError(std::string("dashboard ") + path + ": " + e.what()));
  }
}

}  // namespace pipette
