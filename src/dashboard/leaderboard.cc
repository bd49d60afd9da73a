// `/`: the leaderboard per benchmark over one page of results (newest first), one row per
// configuration (its newest result on that benchmark), sortable within the page.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "dashboard/config.h"
#include "dashboard/html.h"
#include "dashboard/layout.h"
#include "dashboard/pages.h"

namespace pipette::dashboard {
namespace {

const std::vector<std::string> kSortColumns = {"model",  "quant",  "runtime", "threads",
                                               "device", "median", "n",       "started"};

struct Entry {
  const FleetResultRow* row = nullptr;
  Config config;
  int runs = 0;  // results of this configuration and benchmark on the page
};

bool HigherIsBetter(const std::string& unit) { return unit == "tokens/s"; }

// The order a column sorts in when first clicked.
std::string DefaultOrder(const std::string& sort, const std::string& unit) {
  if (sort == "median") return HigherIsBetter(unit) ? "desc" : "asc";
  if (sort == "started" || sort == "n") return "desc";
  return "asc";
}

// Sorts by the column; entries without a value go last whatever the order; ties keep the page
// order (newest first).
void SortEntries(std::vector<Entry>& entries, const std::string& sort, bool desc,
                 const DeviceNames& names) {
  const auto text = [&sort, &names](const Entry& e) -> std::string {
    const ResultRow& r = e.row->row;
    if (sort == "model") return r.model_file;
    if (sort == "quant") return r.quant;
    if (sort == "runtime") return r.runtime;
    if (sort == "device") return names.Of(r.device_id);
    return r.started_at;
  };
  const auto number = [&sort](const Entry& e) -> std::optional<double> {
    const ResultRow& r = e.row->row;
    if (sort == "median") return r.headline;
    if (sort == "n") return r.headline_n > 0 ? std::optional<double>(r.headline_n) : std::nullopt;
    if (sort == "threads") return r.threads > 0 ? std::optional<double>(r.threads) : std::nullopt;
    return std::nullopt;
  };
  const bool numeric = sort == "median" || sort == "n" || sort == "threads";
  std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    if (numeric) {
      const auto x = number(a), y = number(b);
      if (!x || !y) return x.has_value() && !y.has_value();
      return desc ? *x > *y : *x < *y;
    }
    const std::string x = text(a), y = text(b);
    if (x.empty() || y.empty()) return !x.empty() && y.empty();
    return desc ? x > y : x < y;
  });
}

std::string Href(const std::string& path, Params params) { return Esc(path + QueryString(params)); }

}  // namespace

DashboardResponse LeaderboardPage(FleetStore& store, const Query& query) {
  auto filters = ParseFilters(query);
  if (!filters.ok()) return BadRequest(filters.error().message);
  auto sort = ChoiceParam(query, "sort", kSortColumns, "median");
  if (!sort.ok()) return BadRequest(sort.error().message);
  auto order = ChoiceParam(query, "order", {"asc", "desc"}, "");
  if (!order.ok()) return BadRequest(order.error().message);
  auto limit = IntParam(query, "limit", kDefaultPageSize, 1, 1000);
  if (!limit.ok()) return BadRequest(limit.error().message);
  const std::string cursor = Param(query, "cursor");

  auto page =
      store.ListResults(filters->ToResultFilter(), *limit, cursor, ListOptions{.short_ids = false});
  if (!page.ok()) {
    if (!cursor.empty() && page.error().message.find("cursor") != std::string::npos) {
      return BadRequest("cursor: not a cursor of this page list; start from the first page");
    }
    return StoreError(page.error());
  }
  auto names = DeviceNames::Load(store);
  if (!names.ok()) return StoreError(names.error());

  // What every link on the page keeps.
  const Params filter_params = filters->ToParams();
  Params view = filter_params;
  if (!Param(query, "sort").empty()) view.emplace_back("sort", *sort);
  if (!order->empty()) view.emplace_back("order", *order);
  if (!Param(query, "limit").empty()) view.emplace_back("limit", std::to_string(*limit));
  Params here = view;
  if (!cursor.empty()) here.emplace_back("cursor", cursor);

  // benchmark -> configuration key -> entry (its newest row: rows arrive newest first).
  std::map<std::string, std::vector<Entry>> boards;
  std::map<std::string, std::map<std::string, size_t>> index;
  for (const FleetResultRow& row : page->rows) {
    Config config = ConfigOf(row.row, *names);
    const std::string key = config.Key();
    auto& board = boards[row.row.benchmark_id];
    auto& at = index[row.row.benchmark_id];
    if (const auto it = at.find(key); it != at.end()) {
      ++board[it->second].runs;
      continue;
    }
    at[key] = board.size();
    board.push_back(Entry{&row, std::move(config), 1});
  }

  std::string body;
  body += FilterForm("/", *filters,
                     [&] {
                       Params h;
                       for (const auto& [k, v] : view) {
                         if (k == "sort" || k == "order" || k == "limit") h.emplace_back(k, v);
                       }
                       return h;
                     }(),
                     {"benchmark", "model", "quant", "runtime", "device"});
  size_t configs = 0;
  for (const auto& [id, board] : boards) configs += board.size();
  body += fmt::format(
      "<p class=\"meta\">{} of {} matching results on this page ({} rows, {} "
      "benchmarks); sorting applies within the page. A row is a configuration's newest result "
      "on the page for its benchmark, and Runs counts all of them (<code>pipette results list"
      "</code>, <code>compare</code>, <code>select</code> and <code>report</code> pool them). "
      "<span class=\"noisy\">!</span> = the 95% CI stayed wider than its target (noisy).</p>\n",
      page->rows.size(), page->total, configs, boards.size());
  if (boards.empty()) {
    body += "<p class=\"empty\">No results match these filters.</p>\n";
  }

  for (auto& [benchmark, board] : boards) {
    const ResultRow& first = board.front().row->row;
    std::string unit, metric;
    for (const Entry& e : board) {
      if (!e.row->row.headline_unit.empty()) {
        unit = e.row->row.headline_unit;
        metric = e.row->row.headline_metric;
        break;
      }
    }
    const std::string ord = order->empty() ? DefaultOrder(*sort, unit) : *order;
    SortEntries(board, *sort, ord == "desc", *names);

    Params only_this = filter_params;
    std::erase_if(only_this, [](const auto& p) { return p.first == "benchmark"; });
    only_this.emplace_back("benchmark", benchmark);
    // Bytes are shown with their own unit (MiB, GiB): a heading of "bytes" would misread them.
    const std::string heading_unit = unit == "bytes" ? "" : unit;
    body += "<section class=\"board\" data-benchmark=\"" + Esc(benchmark) + "\">\n<h2>" +
            Esc(benchmark) + " <small class=\"meta\">" +
            Esc(metric.empty() ? first.benchmark_type
                               : metric + (heading_unit.empty() ? "" : " (" + heading_unit + ")")) +
            "</small></h2>\n";
    if (filters->benchmarks.empty()) {
      body += "<p class=\"meta\"><a href=\"" + Href("/", only_this) + "\">only " + Esc(benchmark) +
              "</a></p>\n";
    }

    std::string t = "<thead><tr><th>#</th>";
    const std::vector<std::pair<std::string, std::string>> columns = {
        {"model", "Model"},     {"median", "Median" + (heading_unit.empty() ? "" : " (" + heading_unit + ")")},
        {"", "95% CI"},         {"n", "n"},
        {"quant", "Quant"},     {"runtime", "Runtime"},
        {"threads", "Threads"}, {"device", "Device"},
        {"", "Runs"},           {"started", "Started (UTC)"}};
    for (const auto& [col, title] : columns) {
      const bool num = col == "median" || col == "n" || col == "threads" || title == "Runs";
      t += std::string("<th") + (num ? " class=\"num\"" : "") + ">";
      if (col.empty()) {
        t += Esc(title);
      } else {
        Params p = view;
        std::erase_if(p, [](const auto& kv) { return kv.first == "sort" || kv.first == "order"; });
        p.emplace_back("sort", col);
        std::string mark;
        if (col == *sort) {
          p.emplace_back("order", ord == "desc" ? "asc" : "desc");
          mark = ord == "desc" ? " &#9660;" : " &#9650;";
        }
        if (!cursor.empty()) p.emplace_back("cursor", cursor);
        t += "<a href=\"" + Href("/", p) + "\">" + Esc(title) + "</a>" + mark;
      }
      t += "</th>";
    }
    t += "<th>Compare</th></tr></thead>\n<tbody>\n";
    int rank = 0;
    const std::string best_id = board.front().row->row.result_id;
    for (const Entry& e : board) {
      const ResultRow& r = e.row->row;
      const bool noisy = r.status == "ok" && !r.ci_reached;
      std::string median = "-";
      if (r.status != "ok") {
        median = "<span class=\"noisy\">failed</span>";
      } else if (r.headline) {
        median = Esc(FormatBare(*r.headline, r.headline_unit)) +
                 (noisy ? " <span class=\"noisy\" title=\"CI target not reached\">!</span>" : "");
      }
      t += "<tr class=\"entry\" data-config=\"" + Esc(e.config.Key()) + "\" data-result=\"" +
           Esc(r.result_id) + "\"" +
           (r.headline ? " data-median=\"" + fmt::format("{}", *r.headline) + "\"" : "") + ">";
      t += "<td class=\"num\">" + std::to_string(++rank) + "</td>";
      t += "<td>" + Esc(r.model_file.empty() ? Prefix(r.model_sha256, 12) : r.model_file) + "</td>";
      t += "<td class=\"num\"><a href=\"/results/" + Esc(UrlEncode(r.result_id)) + "\">" + median +
           "</a></td>";
      t += "<td class=\"num\">" +
           Esc(CiText(r.headline_ci95_low, r.headline_ci95_high, r.headline_unit)) + "</td>";
      t += "<td class=\"num\">" + (r.headline_n > 0 ? std::to_string(r.headline_n) : "-") + "</td>";
      t += "<td class=\"words\">" + Esc(r.quant_label.empty() ? r.quant : r.quant_label) + "</td>";
      t += "<td>" + Esc(r.runtime) + "</td>";
      t += "<td class=\"num\">" + (r.threads > 0 ? std::to_string(r.threads) : "-") + "</td>";
      t += "<td class=\"words\"><a href=\"/devices/" + Esc(UrlEncode(r.device_id)) + "\">" +
           Esc(names->Of(r.device_id)) + "</a>" +
           (r.label.empty() ? "" : " <span class=\"tag\" title=\"run tag\">" + Esc(r.label) + "</span>") +
           (e.row->profile_mismatch
                ? " <span class=\"mismatch\" title=\"differs from the submitting "
                  "client's registered device\">(profile mismatch)</span>"
                : "") +
           "</td>";
      t += "<td class=\"num\">" + std::to_string(e.runs) + "</td>";
      t += "<td class=\"words\">" + Esc(RecordTime(r.started_at)) + "</td>";
      t += "<td>" +
           (r.result_id == best_id
                ? std::string("-")
                : "<a href=\"" + Href("/compare", {{"a", best_id}, {"b", r.result_id}}) +
                      "\">vs #1</a>") +
           "</td></tr>\n";
    }
    t += "</tbody>";
    body += ScrollTable(t, "leaderboard") + "</section>\n";
  }

  body += "<p class=\"pager\">";
  if (!cursor.empty()) body += "<a href=\"" + Href("/", view) + "\">first page</a>";
  if (!page->next.empty()) {
    Params p = view;
    p.emplace_back("cursor", page->next);
    body += "<a rel=\"next\" href=\"" + Href("/", p) + "\">next page</a>";
  }
  body += "</p>\n";
  (void)here;
  return PageResponse(Layout("Leaderboard", "leaderboard", body));
}

}  // namespace pipette::dashboard
