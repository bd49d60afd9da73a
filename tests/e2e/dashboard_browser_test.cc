// The dashboard in headless Chromium against a real `pipette serve` process: real results (the
// stories260K suite's, src/dashboard/testdata/stories260k.jsonl), a registered client and a plan
// with jobs in each state are put into an SQLite fleet database, the server is started on it, and
// Chromium opens every page: each must log nothing to the console (no script error, no failed
// load such as a missing stylesheet), and its DOM must hold the expected rows and chart points.
// Screenshots of every page at 1280x900 and 375x812 go to a folder the test prints
// ($PIPETTE_DASHBOARD_SHOTS, else a fresh folder under the temp dir; kept). A second test measures
// every page's layout at 1366x900 and 390x844 (issue 27): nothing wider than the page, tables
// that fit (or, on a phone, scroll inside their own box), charts that scale with their legend.
// Skips, saying why, when chromium is not installed (scripts/deps.sh --test installs it).
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "headless_chromium.h"
#include "pipette/fleet_store.h"
#include "pipette/store.h"
#include "platform/process.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kNow = 1764568800;
const std::string kClient = "pc_0123456789abcdef0123456789abcdef";

using testing_browser::BrowserRun;
using testing_browser::Count;
using testing_browser::FindChromium;
using testing_browser::ProbeFacts;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}



class DashboardInBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    if (chromium_.empty()) GTEST_SKIP() << "chromium is not installed (scripts/deps.sh --test)";
    dir_ = fs::temp_directory_path() / ("pipette-dashboard-browser-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const char* shots = std::getenv("PIPETTE_DASHBOARD_SHOTS");
    shots_ = shots && *shots ? fs::path(shots) : fs::path(dir_.string() + "-shots");
    fs::create_directories(shots_);
    db_ = (dir_ / "fleet.db").string();
  }
  void TearDown() override {
    if (server_) {
      server_->Kill(SIGTERM);
      server_->Wait(std::chrono::milliseconds(10000));
    }
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // The fixture's records, a client, and a plan of four jobs: one done, one leased, one failed,
  // one queued.
  void Fill() {
    auto store = OpenFleetStore(db_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    std::ifstream in(std::string(PIPETTE_SOURCE_DIR) + "/src/dashboard/testdata/stories260k.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      records_.push_back(json::parse(line));
      auto put = (*store)->PutResult(records_.back(), kClient, kNow);
      ASSERT_TRUE(put.ok()) << put.error().message;
    }
    ASSERT_GE(records_.size(), 30u);
    FleetClient c;
    c.client_id = kClient;
    c.public_key_hex = std::string(64, 'a');
    c.label = "ci-x86";
    c.labels = {"x86", "cpu"};
    c.profile = records_[0]["device"];
    ASSERT_TRUE((*store)->Register(c, "", kNow).ok());
    ASSERT_TRUE((*store)->SetClientStatus(kClient, ClientStatus::kApproved).ok());
    std::vector<json> specs;
    for (const char* b : {"prefill_throughput_8", "prefill_throughput_16", "prefill_throughput_32",
                          "prefill_throughput_64"}) {
      specs.push_back({{"benchmark", b},
                       {"model", {{"sha256", std::string(64, 'b')}, {"file_name", "m.gguf"}}},
                       {"runtime", "llamacpp"},
                       {"requires", {{"labels", {"x86"}}}}});
    }
    auto plan = (*store)->CreatePlan("stories260k nightly", specs, 0, kNow);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    plan_id_ = *plan;
    const json caps = {{"labels", {"x86", "cpu"}},
                       {"arch", "x86_64"},
                       {"memory_bytes", 1 << 30},
                       {"runtimes", {"llamacpp"}},
                       {"models", {std::string(64, 'b')}}};
    ASSERT_TRUE((*store)->SetCapabilities(kClient, caps).ok());
    auto j1 = (*store)->Claim(kClient, caps, kNow, 600);
    ASSERT_TRUE(j1.ok() && j1->has_value());
    ASSERT_TRUE((*store)->Complete((*j1)->job_id, kClient, records_[0], kNow).ok());
    auto j2 = (*store)->Claim(kClient, caps, kNow, 600);
    ASSERT_TRUE(j2.ok() && j2->has_value());
    ASSERT_TRUE((*store)->Fail((*j2)->job_id, kClient, "model file not found", false, kNow).ok());
    auto j3 = (*store)->Claim(kClient, caps, kNow, 6000000);
    ASSERT_TRUE(j3.ok() && j3->has_value());
  }

  // The Q8_0 model's prefill and decode results once more as another runtime's (llamacpp-stock,
  // as `pipette import llama-bench` stores them): configurations whose names differ only there.
  void AddSecondRuntime() {
    auto store = OpenFleetStore(db_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    int n = 0;
    for (json r : std::vector<json>(records_)) {
      const std::string id = r["benchmark"]["id"];
      if (r["model"]["file_name"] != "stories260K-Q8_0.gguf" ||
          (id.rfind("prefill_throughput_", 0) != 0 && id.rfind("decode_throughput_", 0) != 0)) {
        continue;
      }
      r["runtime"]["name"] = "llamacpp-stock";
      const std::string suffix = std::to_string(++n);
      std::string rid = r["result_id"];
      r["result_id"] = rid.replace(rid.size() - suffix.size(), suffix.size(), suffix);
      auto put = (*store)->PutResult(r, kClient, kNow);
      ASSERT_TRUE(put.ok()) << put.error().message;
    }
    ASSERT_GT(n, 4);
  }

  // `pipette report` of the fixture's records (put into a local results store): the HTML, or ""
  // with a failure.
  std::string Report() {
    const std::string store_path = (dir_ / "results.db").string();
    {
      auto store = ResultStore::Open(store_path);
      EXPECT_TRUE(store.ok()) << store.error().message;
      if (!store.ok()) return "";
      for (const json& r : records_) EXPECT_TRUE((*store)->Put(r).ok());
    }
    const fs::path html = dir_ / "report.html";
    auto child = ChildProcess::Start({std::string(PIPETTE_BIN_DIR) + "/src/cli/pipette", "--store",
                                      store_path, "report", "-o", html.string()},
                                     (dir_ / "report.err").string());
    EXPECT_TRUE(child.ok()) << child.error().message;
    if (!child.ok()) return "";
    child->CloseStdin();
    const auto exit = child->Wait(std::chrono::milliseconds(60000));
    EXPECT_TRUE(exit && exit->exited && exit->code == 0) << ReadFile(dir_ / "report.err");
    return ReadFile(html);
  }

  void StartServer() {
    const std::string pipette = std::string(PIPETTE_BIN_DIR) + "/src/cli/pipette";
    auto child = ChildProcess::Start({pipette, "serve", "--listen", "127.0.0.1:0", "--db", db_},
                                     (dir_ / "serve.err").string());
    ASSERT_TRUE(child.ok()) << child.error().message;
    server_.emplace(std::move(child).value());
    const auto line = server_->ReadLine(std::chrono::milliseconds(15000));
    ASSERT_TRUE(line.has_value()) << "no listening line; stderr: " << ReadFile(dir_ / "serve.err");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(*line, m, std::regex(R"(listening on (http://[0-9.]+:\d+))")))
        << *line;
    base_ = m[1].str();
  }

  // Chromium headless on `url` at `width`x`height` with `action` (--dump-dom or
  // --screenshot=FILE), at most 60 s.
  // `extra` flags go before the action.
  BrowserRun Browse(const std::string& action, const std::string& url, int width, int height,
                    std::vector<std::string> extra = {}) {
    extra.push_back("--hide-scrollbars");
    return testing_browser::Browse(chromium_, action, url, dir_.string(),
                                   std::to_string(width) + "," + std::to_string(height), extra);
  }

  // Console messages and failed loads in chromium's log.
  static std::vector<std::string> Complaints(const std::string& log) {
    std::vector<std::string> out;
    std::stringstream ss(log);
    std::string line;
    while (std::getline(ss, line)) {
      if (line.find("CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos ||
          line.find("Failed to load resource") != std::string::npos) {
        out.push_back(line);
      }
    }
    return out;
  }

  // Opens `path`: the DOM (1280 wide) and screenshots at desktop and phone widths named `name`.
  std::string Open(const std::string& path, const std::string& name) {
    const std::string url = base_ + path;
    BrowserRun dom = Browse("--dump-dom", url, 1280, 900);
    EXPECT_TRUE(dom.finished) << url << ": " << dom.err.substr(0, 2000);
    EXPECT_EQ(Complaints(dom.err), std::vector<std::string>{}) << url;
    EXPECT_NE(dom.out.find("</html>"), std::string::npos) << url;
    for (const auto& [w, h, suffix] : {std::tuple{1280, 900, "desktop"}, {375, 812, "phone"}}) {
      const fs::path png = shots_ / (name + "-" + suffix + ".png");
      BrowserRun shot = Browse("--screenshot=" + png.string(), url, w, h);
      EXPECT_TRUE(shot.finished) << url << ": " << shot.err.substr(0, 2000);
      EXPECT_EQ(Complaints(shot.err), std::vector<std::string>{}) << url;
      std::error_code ec;
      EXPECT_GT(fs::file_size(png, ec), 5000u) << png;
    }
    return dom.out;
  }

  std::set<std::string> ModelsOf(const std::string& benchmark) {
    std::set<std::string> out;
    for (const json& r : records_) {
      if (r["benchmark"]["id"] == benchmark) out.insert(r["model"]["file_name"].get<std::string>());
    }
    return out;
  }
  std::string IdOf(const std::string& benchmark, const std::string& model) {
    for (const json& r : records_) {
      if (r["benchmark"]["id"] == benchmark && r["model"]["file_name"] == model) {
        return r["result_id"];
      }
    }
    return "";
  }

  std::string chromium_;
  fs::path dir_, shots_;
  std::string db_, base_, plan_id_;
  std::vector<json> records_;
  std::optional<ChildProcess> server_;
};

// The <svg ...>...</svg> whose id is `id` in `dom`, or "".
std::string Svg(const std::string& dom, const std::string& id) {
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t start = dom.rfind("<svg", at);
  return dom.substr(start, dom.find("</svg>", at) + 6 - start);
}

// A page that shows each of `pages` (name, the HTML the server sent) in a frame `width` x
// `height` pixels and, once all have loaded, writes what it measured of each into
// <pre id="probe"> as a JSON array. The dashboard runs no script and forbids being framed
// (Content-Security-Policy, X-Frame-Options), so the page is given to the frame as srcdoc with a
// <base> at the server: the stylesheet and everything else still come from the server. (Frames,
// because headless Chromium does not make a window narrower than 500 pixels.) Per page: the
// frame's innerWidth and the document's scrollWidth; every table (folded <details> opened) with
// its right edge, the right edge of the box it is seen through (its nearest ancestor that clips
// sideways, else the viewport) and whether that box scrolls; every chart with its box, whether
// it sits in a box that scrolls, its scale (rendered width / viewBox width), its points and how
// many are visible (inside the chart and the viewport), its legend's texts and whether the
// legend is visible, and its y axis' title and tick labels.
std::string LayoutProbePage(const std::vector<std::pair<std::string, std::string>>& pages,
                            int width, int height) {
  json list = json::array();
  for (const auto& [name, html] : pages) list.push_back({{"name", name}, {"html", html}});
  std::string data;
  for (const char c : list.dump()) {
    if (c == '/' && !data.empty() && data.back() == '<') data += '\\';  // "<\/": the script goes on
    data += c;
  }
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>probe</title></head>\n"
         "<body style=\"margin:0\">\n<pre id=\"probe\">not loaded</pre>\n<script>\nvar W = " +
         std::to_string(width) + ", H = " + std::to_string(height) + ", pages = " + data + ";\n" +
         R"(function Measure(f, name) {
  var d = f.contentDocument, w = f.contentWindow;
  d.querySelectorAll('details').forEach(function (e) { e.open = true; });
  var vw = w.innerWidth;
  var out = {page: name, width: vw, scroll_width: d.documentElement.scrollWidth, tables: [],
             charts: []};
  var clipper = function (e) {
    for (var p = e.parentElement; p && p !== d.body; p = p.parentElement) {
      if (w.getComputedStyle(p).overflowX !== 'visible') return p;
    }
    return null;
  };
  var what = function (e) {
    return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
           (e.getAttribute('class') ? '.' + e.getAttribute('class') : '');
  };
  var text = function (t) {  // a <text>'s words, without its <title>
    return Array.prototype.filter.call(t.childNodes, function (n) {
      return n.nodeName !== 'title';
    }).map(function (n) { return n.textContent; }).join(' ');
  };
  out.wide = [];  // what reaches past the viewport, not inside a box that clips it
  d.querySelectorAll('body *').forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.right > vw + 1 && !clipper(e) && out.wide.length < 5) {
      out.wide.push(what(e) + ' ' + Math.round(r.right));
    }
  });
  d.querySelectorAll('table').forEach(function (t) {
    var r = t.getBoundingClientRect(), c = clipper(t);
    out.tables.push({what: what(t), right: Math.round(r.right), width: Math.round(r.width),
                     box_right: c ? Math.round(c.getBoundingClientRect().right) : vw,
                     scrolls: !!c && c.scrollWidth > c.clientWidth + 1,
                     columns: t.rows.length ? Array.prototype.map.call(t.rows[0].cells,
                         function (h) { return h.textContent + ' ' + Math.round(h.offsetWidth); })
                         : []});
  });
  d.querySelectorAll('svg.chart').forEach(function (s) {
    var r = s.getBoundingClientRect(), c = clipper(s);
    var seen = {left: Math.max(r.left, 0), right: Math.min(r.right, vw), top: r.top,
                bottom: r.bottom};
    if (c) {
      var cr = c.getBoundingClientRect();
      seen.left = Math.max(seen.left, cr.left);
      seen.right = Math.min(seen.right, cr.right);
    }
    var visible = function (e) {
      var b = e.getBoundingClientRect();
      return b.left >= seen.left - 1 && b.right <= seen.right + 1 && b.top >= seen.top - 1 &&
             b.bottom <= seen.bottom + 1;
    };
    var points = s.querySelectorAll('circle.point'), legend = s.querySelector('g.legend');
    var title = s.querySelector('g.axis.y text.axis-title');
    out.charts.push({
      id: s.id, left: Math.round(r.left), right: Math.round(r.right),
      scale: Math.round(r.width / s.viewBox.baseVal.width * 100) / 100,
      scrolls: !!c && c.scrollWidth > c.clientWidth + 1,
      points: points.length,
      points_visible: Array.prototype.filter.call(points, visible).length,
      legend: legend ? Array.prototype.map.call(legend.querySelectorAll(':scope > text'), text)
                     : null,
      legend_visible: !!legend && visible(legend),
      y_title: title ? title.textContent : '',
      y_ticks: Array.prototype.map.call(
          s.querySelectorAll('g.axis.y > text:not(.axis-title)'), text)});
  });
  return out;
}
var results = [], left = pages.length;
pages.forEach(function (p, i) {
  var f = document.createElement('iframe');
  f.style.cssText = 'border:0;display:block;width:' + W + 'px;height:' + H + 'px';
  f.srcdoc = p.html;
  f.addEventListener('load', function () {
    try {
      results[i] = Measure(f, p.name);
    } catch (e) {
      results[i] = {page: p.name, error: String(e)};
    }
    if (--left === 0) document.getElementById('probe').textContent = JSON.stringify(results);
  });
  document.body.appendChild(f);
});
</script>
</body></html>
)";
}


TEST_F(DashboardInBrowser, EveryPageRendersWithItsRowsAndPointsAndNoConsoleErrors) {
  Fill();
  if (HasFatalFailure()) return;
  StartServer();
  if (HasFatalFailure()) return;
  std::cout << "dashboard screenshots: " << shots_.string() << std::endl;

  // Leaderboard: one row per configuration of each benchmark; a filter narrows the rows.
  const std::string board = Open("/", "leaderboard");
  std::set<std::string> benchmarks;
  size_t entries = 0;
  for (const json& r : records_) benchmarks.insert(r["benchmark"]["id"].get<std::string>());
  for (const std::string& b : benchmarks) entries += ModelsOf(b).size();
  EXPECT_EQ(Count(board, "<section class=\"board\""), benchmarks.size());
  EXPECT_EQ(Count(board, "<tr class=\"entry\""), entries);
  const std::string q8 = Open("/?quant=Q8_0&sort=median&order=asc", "leaderboard-q8_0");
  EXPECT_EQ(Count(q8, "<tr class=\"entry\""), benchmarks.size());
  EXPECT_EQ(q8.find("stories260K-Q4_0.gguf"), std::string::npos);

  // Scaling: one point per configuration and context length.
  const std::string scaling = Open("/scaling", "scaling");
  size_t prefill = 0, decode = 0;
  for (const json& r : records_) {
    const std::string id = r["benchmark"]["id"];
    prefill += id.rfind("prefill_throughput_", 0) == 0;
    decode += id.rfind("decode_throughput_", 0) == 0;
  }
  EXPECT_EQ(Count(Svg(scaling, "prefill-chart"), "<circle class=\"point"), prefill);
  EXPECT_EQ(Count(Svg(scaling, "decode-chart"), "<circle class=\"point"), decode);

  // Quality: one point per configuration with a KL result, the front marked.
  const std::string quality = Open("/quality", "quality");
  const std::string scatter = Svg(quality, "quality-chart");
  EXPECT_EQ(Count(scatter, "<circle class=\"point"), ModelsOf("kl_divergence_512").size());
  EXPECT_GE(Count(scatter, "<circle class=\"point front"), 1u);

  // A result: its metrics and raw samples.
  const std::string a = IdOf("decode_throughput_256_100", "stories260K-Q8_0.gguf");
  const std::string b = IdOf("decode_throughput_256_100", "stories260K-Q4_0.gguf");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  json ra;
  for (const json& r : records_) {
    if (r["result_id"] == a) ra = r;
  }
  const std::string result = Open("/results/" + a, "result");
  EXPECT_EQ(Count(result, "<tr class=\"metric\""), ra["metrics"].size());
  EXPECT_EQ(Count(result, "<tr class=\"sample\""), ra["samples"].size());
  EXPECT_NE(result.find(ra["model"]["sha256"].get<std::string>()), std::string::npos);

  const std::string device = records_[0]["device"]["id"];
  EXPECT_EQ(Count(Open("/devices", "devices"), "<tr class=\"device\""), 1u);
  EXPECT_NE(Open("/devices/" + device, "device")
                .find(records_[0]["device"]["cpu"]["flags_hash"].get<std::string>()),
            std::string::npos);
  const std::string compare = Open("/compare?a=" + a + "&b=" + b, "compare");
  EXPECT_GT(Count(compare, "<tr class=\"metric\""), 3u);
  const std::string fleet = Open("/fleet", "fleet");
  EXPECT_EQ(Count(fleet, "<tr class=\"client\""), 1u);
  EXPECT_NE(fleet.find("1/4 done, 1 leased, 1 queued, 1 failed"), std::string::npos);
  const std::string plan = Open("/plans/" + plan_id_, "plan");
  EXPECT_EQ(Count(plan, "<tr class=\"job\""), 4u);
  EXPECT_NE(plan.find("model file not found"), std::string::npos);
}

// Issue 27: at 1366 px the leaderboard's last columns were cut off (its table scrolled inside a
// box narrower than the table); at 390 px the scaling and quality charts kept a 600 px minimum
// width and scrolled, their legends and right-hand points out of sight; the scaling legend cut
// names short; the quality chart said % over ticks of 0..1. Every page, measured in Chromium:
// nothing wider than the page; at 1366 no table or chart needs sideways scrolling; at 390 a
// table may scroll inside its own box, a chart never: it scales, its points and legend visible.
TEST_F(DashboardInBrowser, EveryPageFitsAtLaptopAndPhoneWidths) {
  Fill();
  if (HasFatalFailure()) return;
  AddSecondRuntime();
  if (HasFatalFailure()) return;
  StartServer();
  if (HasFatalFailure()) return;
  const std::string a = IdOf("decode_throughput_256_100", "stories260K-Q8_0.gguf");
  const std::string b = IdOf("decode_throughput_256_100", "stories260K-Q4_0.gguf");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  const std::string device = records_[0]["device"]["id"];
  const std::vector<std::string> paths = {
      "/",       "/scaling", "/quality",         "/results/" + a, "/compare?a=" + a + "&b=" + b,
      "/devices", "/devices/" + device, "/fleet", "/plans/" + plan_id_};
  httplib::Client http(base_);
  std::vector<std::pair<std::string, std::string>> pages;
  for (const std::string& path : paths) {
    auto res = http.Get(path);
    ASSERT_TRUE(res) << path;
    ASSERT_EQ(res->status, 200) << path;
    std::string html = res->body;
    const size_t head = html.find("<head>");
    ASSERT_NE(head, std::string::npos) << path;
    html.insert(head + 6, "\n<base href=\"" + base_ + "/\">");
    pages.emplace_back(path, std::move(html));
  }
  // The HTML report of the same results, measured alike.
  pages.emplace_back("pipette report", Report());
  ASSERT_NE(pages.back().second.find("</html>"), std::string::npos);
  const auto number = [](const std::string& label) {
    try {
      return std::stod(label);
    } catch (...) {
      return std::nan("");
    }
  };
  for (const auto& [width, height] : {std::pair{1366, 900}, {390, 844}}) {
    const bool phone = width < 600;
    const fs::path probe = dir_ / ("probe-" + std::to_string(width) + ".html");
    std::ofstream(probe) << LayoutProbePage(pages, width, height);
    const BrowserRun run = Browse("--dump-dom", "file://" + probe.string(), width + 40, height,
                                  {"--allow-file-access-from-files"});
    ASSERT_TRUE(run.finished) << run.err.substr(0, 2000);
    EXPECT_EQ(Complaints(run.err), std::vector<std::string>{}) << width;
    const json facts = ProbeFacts(run.out);
    ASSERT_TRUE(facts.is_array()) << run.out.substr(0, 2000);
    ASSERT_EQ(facts.size(), pages.size()) << facts.dump();
    std::ostringstream summary;  // printed after the width's checks
    summary << width << " px:\n";
    for (const json& page : facts) {
      const std::string at = std::to_string(width) + " px " + page.value("page", "?");
      ASSERT_FALSE(page.contains("error")) << at << ": " << page.dump();
      summary << "  " << page["page"].get<std::string>() << ": scrollWidth "
                << page["scroll_width"] << " of " << page["width"];
      EXPECT_EQ(page["width"], width) << at;
      EXPECT_LE(page["scroll_width"].get<int>(), width)
          << at << ": the page scrolls sideways: " << page["wide"].dump();
      for (const json& t : page["tables"]) {
        summary << "; " << t["what"].get<std::string>() << " right " << t["right"] << " box "
                  << t["box_right"] << (t["scrolls"].get<bool>() ? " scrolls" : "");
        EXPECT_LE(t["box_right"].get<int>(), width) << at << ": " << t.dump();
        if (!phone) {
          EXPECT_FALSE(t["scrolls"].get<bool>()) << at << ": cut off: " << t.dump();
        }
      }
      for (const json& c : page["charts"]) {
        const std::string id = c["id"];
        summary << "; chart " << id << " " << c["left"] << ".." << c["right"] << " scale "
                  << c["scale"] << " points " << c["points_visible"] << "/" << c["points"]
                  << " legend " << (c["legend_visible"].get<bool>() ? "visible" : "hidden")
                  << (c["scrolls"].get<bool>() ? " scrolls" : "");
        EXPECT_GE(c["left"].get<int>(), 0) << at << ": " << c.dump();
        EXPECT_LE(c["right"].get<int>(), width) << at << ": " << c.dump();
        EXPECT_FALSE(c["scrolls"].get<bool>()) << at << ": " << c.dump();
        EXPECT_EQ(c["points_visible"], c["points"]) << at << ": " << c.dump();
        if (id == "prefill-chart" || id == "decode-chart" || id == "quality-chart") {
          EXPECT_GT(c["points"].get<int>(), 0) << at << ": " << c.dump();
        }
        ASSERT_TRUE(c["legend"].is_array()) << at << ": " << c.dump();
        EXPECT_TRUE(c["legend_visible"].get<bool>()) << at << ": " << c.dump();
        std::set<std::string> names;
        for (const json& n : c["legend"]) {
          names.insert(n.get<std::string>());
          EXPECT_EQ(n.get<std::string>().find("\u2026"), std::string::npos)
              << at << ": a legend entry cut short: " << c.dump();
        }
        EXPECT_EQ(names.size(), c["legend"].size()) << at << ": legend entries alike: " << c.dump();
        // An axis titled in % has ticks in percent: they reach past 1, and none is above 100.
        if (c["y_title"].get<std::string>().find('%') != std::string::npos) {
          double top = 0;
          for (const json& t : c["y_ticks"]) top = std::max(top, number(t.get<std::string>()));
          EXPECT_GT(top, 1) << at << ": " << c.dump();
          EXPECT_LE(top, 100) << at << ": " << c.dump();
        }
      }
      summary << "\n";
    }
    std::cout << summary.str();
  }
}

}  // namespace
}  // namespace pipette
