// `/devices` and `/devices/<id>`: the devices seen in the newest results and in the registered
// clients' profiles, and one device's fingerprint (the device block of its newest record, else
// of a client's registration profile) with its recent results.
#include <fmt/format.h>

#include <map>
#include <set>

#include "dashboard/device_names.h"
#include "dashboard/family.h"
#include "dashboard/html.h"
#include "dashboard/layout.h"
#include "dashboard/pages.h"
#include "pipette/record.h"

namespace pipette::dashboard {
namespace {

using nlohmann::json;

// Devices listed at most (each costs one record read for its fingerprint summary).
constexpr size_t kMaxDevices = 100;
// Results listed on a device's page.
constexpr int kDeviceResults = 50;

struct Device {
  std::string id;
  std::set<std::string> tags;  // run tags (device.label) among the rows read
  int results = 0;            // among the rows read
  std::string newest_result;  // result_id
  std::string last_seen;      // started_at of the newest
  std::vector<const FleetClient*> clients;
  json fingerprint;  // device block
};

std::string Summary(const json& d) {
  std::vector<std::string> parts;
  if (const auto cpu = record::StringAt(d, "/cpu/model"); !cpu.empty()) parts.push_back(cpu);
  if (const auto n = record::NumberAt(d, "/cpu/logical_cores")) {
    parts.push_back(fmt::format("{} cores", *n));
  }
  if (const auto m = record::NumberAt(d, "/memory_bytes"))
    parts.push_back(FormatValue(*m, "bytes"));
  if (const auto os = record::StringAt(d, "/os/pretty_name"); !os.empty()) parts.push_back(os);
  if (const auto arch = record::StringAt(d, "/os/arch"); !arch.empty()) parts.push_back(arch);
  if (const json* e = record::Find(d, "/emulated"); e && e->is_boolean() && e->get<bool>()) {
    parts.push_back("emulated (not the hardware's speed)");
  }
  const json* gpus = record::Find(d, "/gpus");
  if (gpus && gpus->is_array() && !gpus->empty())
    parts.push_back(fmt::format("{} GPU(s)", gpus->size()));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out.empty() ? "-" : out;
}

}  // namespace

DashboardResponse DevicesPage(FleetStore& store, const Query& query) {
  auto filters = ParseFilters(query);
  if (!filters.ok()) return BadRequest(filters.error().message);
  auto page =
      store.ListResults(filters->ToResultFilter(), kProbeRows, "", ListOptions{.short_ids = false});
  if (!page.ok()) return StoreError(page.error());
  auto clients = store.ListClients();
  if (!clients.ok()) return StoreError(clients.error());
  const DeviceNames names(*clients);

  std::map<std::string, Device> devices;
  std::vector<std::string> order;  // newest first
  for (const FleetResultRow& fr : page->rows) {
    const ResultRow& r = fr.row;
    if (r.device_id.empty()) continue;
    Device& d = devices[r.device_id];
    if (!r.label.empty()) d.tags.insert(r.label);
    if (d.id.empty()) {
      d.id = r.device_id;
      d.newest_result = r.result_id;
      d.last_seen = r.started_at;
      order.push_back(r.device_id);
    }
    ++d.results;
  }
  if (filters->empty()) {
    for (const FleetClient& c : *clients) {
      const std::string id = record::StringAt(c.profile, "/id");
      if (id.empty()) continue;
      Device& d = devices[id];
      if (d.id.empty()) {
        d.id = id;
        d.fingerprint = c.profile;
        order.push_back(id);
      }
      d.clients.push_back(&c);
    }
  }
  if (order.size() > kMaxDevices) order.resize(kMaxDevices);

  std::string body = FilterForm("/devices", *filters, {}, {"device", "label", "model", "runtime"});
  body += fmt::format("<p class=\"meta\">Devices of the newest {} of {} matching results{}.</p>\n",
                      page->rows.size(), page->total,
                      filters->empty() ? " and of the registered clients" : "");
  if (order.empty()) {
    body += "<p class=\"empty\">No devices yet.</p>\n";
    return PageResponse(Layout("Devices", "devices", body));
  }
  std::string t =
      "<thead><tr><th>Device</th><th>Id</th><th>Run tags</th><th>Fingerprint</th><th class=\"num\">"
      "Results</th><th>Last result (UTC)</th><th>Clients</th></tr></thead><tbody>\n";
  for (const std::string& id : order) {
    Device& d = devices[id];
    if (d.fingerprint.is_null() && !d.newest_result.empty()) {
      auto rec = store.GetResult(d.newest_result);
      if (!rec.ok()) return StoreError(rec.error());
      if (*rec) d.fingerprint = record::ValueAt(**rec, "/device");
    }
    std::string cl;
    for (const FleetClient* c : d.clients) {
      cl += (cl.empty() ? "" : ", ") + Esc(c->label.empty() ? Prefix(c->client_id, 11) : c->label);
    }
    std::string tags;
    for (const std::string& tag : d.tags) tags += (tags.empty() ? "" : ", ") + Esc(tag);
    t += "<tr class=\"device\" data-device=\"" + Esc(id) + "\"><td><a href=\"/devices/" +
         Esc(UrlEncode(id)) + "\">" + Esc(names.Of(id)) + "</a></td><td class=\"mono\">" +
         Esc(Prefix(id, 12)) + "</td><td>" + (tags.empty() ? "-" : tags) +
         "</td><td class=\"wrap\">" +
         Esc(Summary(d.fingerprint)) + "</td><td class=\"num\">" + std::to_string(d.results) +
         "</td><td>" + Esc(RecordTime(d.last_seen)) + "</td><td>" + (cl.empty() ? "-" : cl) +
         "</td></tr>\n";
  }
  body += ScrollTable(t + "</tbody>", "devices");
  return PageResponse(Layout("Devices", "devices", body));
}

DashboardResponse DevicePage(FleetStore& store, const std::string& device_id) {
  ResultFilter f;
  f.devices = {device_id};
  auto page = store.ListResults(f, kDeviceResults, "", ListOptions{.short_ids = false});
  if (!page.ok()) return StoreError(page.error());
  auto clients = store.ListClients();
  if (!clients.ok()) return StoreError(clients.error());
  const DeviceNames names(*clients);
  std::vector<const FleetClient*> mine;
  for (const FleetClient& c : *clients) {
    if (record::StringAt(c.profile, "/id") == device_id) mine.push_back(&c);
  }
  std::vector<const FleetResultRow*> rows;
  for (const FleetResultRow& r : page->rows) {
    if (r.row.device_id == device_id) rows.push_back(&r);
  }
  if (rows.empty() && mine.empty()) {
    return NotFound("no device " + device_id + " in this fleet database (no results, no client)");
  }
  json fingerprint;
  std::string source;
  if (!rows.empty()) {
    auto rec = store.GetResult(rows.front()->row.result_id);
    if (!rec.ok()) return StoreError(rec.error());
    if (*rec) {
      fingerprint = record::ValueAt(**rec, "/device");
      source = "the device block of its newest result, " + Prefix(rows.front()->row.result_id, kShortResultId);
    }
  }
  if (fingerprint.is_null() && !mine.empty()) {
    fingerprint = mine.front()->profile;
    source = "the registration profile of client " + mine.front()->client_id;
  }
  std::string body = "<p class=\"meta\"><span class=\"mono\">" + Esc(device_id) +
                     "</span>: " + Esc(Summary(fingerprint)) + "</p>\n";
  body += "<p><a href=\"" + Esc("/" + QueryString({{"device", device_id}})) +
          "\">leaderboard of this device</a></p>\n";
  body += "<h2>Fingerprint</h2>\n<p class=\"meta\">From " + Esc(source) + ".</p>\n" +
          JsonList(fingerprint);
  if (!mine.empty()) {
    body += "<h2>Clients on this device</h2>\n<ul>";
    for (const FleetClient* c : mine) {
      body += "<li><span class=\"mono\">" + Esc(c->client_id) + "</span> " + Esc(c->label) + " (" +
              ClientStatusName(c->status) + ")</li>";
    }
    body += "</ul>\n";
  }
  body += fmt::format("<h2>Recent results</h2>\n<p class=\"meta\">The newest {} of {}.</p>\n",
                      rows.size(), page->total);
  std::string t =
      "<thead><tr><th>Started (UTC)</th><th>Benchmark</th><th>Model</th><th>Quant</th>"
      "<th>Runtime</th><th class=\"num\">Median</th><th>Unit</th></tr></thead><tbody>\n";
  for (const FleetResultRow* fr : rows) {
    const ResultRow& r = fr->row;
    t += "<tr><td><a href=\"/results/" + Esc(UrlEncode(r.result_id)) + "\">" +
         Esc(RecordTime(r.started_at)) + "</a></td><td>" + Esc(r.benchmark_id) + "</td><td>" +
         Esc(r.model_file) + "</td><td>" + Esc(r.quant) + "</td><td>" + Esc(r.runtime) +
         "</td><td class=\"num\">" +
         (r.status != "ok" ? std::string("failed")
          : r.headline     ? Esc(FormatBare(*r.headline, r.headline_unit))
                           : "-") +
         "</td><td>" + Esc(r.headline_unit) + "</td></tr>\n";
  }
  body += ScrollTable(t + "</tbody>");
  return PageResponse(
      Layout("Device " + names.Of(device_id), "devices", body));
}

}  // namespace pipette::dashboard
