// The dashboard over a real SQLite fleet store holding real results (the stories260K suite's:
// three quantizations on one device, src/dashboard/testdata/stories260k.jsonl, the output of
// `pipette results export --format jsonl` with the runtime's stderr tail dropped, long
// per-token series cut to 4 values and numbers rounded to 6 digits to keep the file small).
#include "pipette/dashboard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "pipette/fleet_store.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Query = std::multimap<std::string, std::string>;

constexpr int64_t kNow = 1764568800;  // 2025-12-01T06:00:00Z

std::vector<json> FixtureRecords() {
  std::ifstream in(std::string(PIPETTE_DASHBOARD_TESTDATA) + "/stories260k.jsonl");
  std::vector<json> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

size_t Count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size()))
    ++n;
  return n;
}

// The text from `open` up to the next `close` after it; "" when `open` is not there.
std::string Between(const std::string& s, const std::string& open, const std::string& close) {
  const size_t a = s.find(open);
  if (a == std::string::npos) return "";
  const size_t b = s.find(close, a);
  return s.substr(a, b == std::string::npos ? std::string::npos : b + close.size() - a);
}

std::string Board(const std::string& html, const std::string& benchmark) {
  return Between(html, "<section class=\"board\" data-benchmark=\"" + benchmark + "\"",
                 "</section>");
}

std::string Svg(const std::string& html, const std::string& id) {
  const size_t at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t start = html.rfind("<svg", at);
  return html.substr(start, html.find("</svg>", at) + 6 - start);
}

std::vector<double> Medians(const std::string& board) {
  std::vector<double> out;
  const std::regex re("data-median=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(board.begin(), board.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back(std::stod((*it)[1]));
  }
  return out;
}

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pipette-dashboard-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = OpenFleetStore((dir_ / "fleet.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(*store);
    records_ = FixtureRecords();
    ASSERT_GE(records_.size(), 30u) << "the fixture of real records is missing";
    for (const json& r : records_) {
      auto put = store_->PutResult(r, "pc_00000000000000000000000000000001", kNow);
      ASSERT_TRUE(put.ok()) << put.error().message;
      ASSERT_EQ(*put, PutOutcome::kStored);
    }
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  DashboardResponse Get(const std::string& path, const Query& query = {}) {
    return RenderDashboard(*store_, path, query);
  }
  std::string Page(const std::string& path, const Query& query = {}) {
    DashboardResponse r = Get(path, query);
    EXPECT_EQ(r.kind, DashboardResponse::Kind::kPage) << path << ": " << r.body;
    EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
    EXPECT_NE(r.body.find("</html>"), std::string::npos);
    return r.body;
  }
  // Distinct model files (configurations) of the fixture's ok results of `benchmark`.
  std::set<std::string> ModelsOf(const std::string& benchmark) {
    std::set<std::string> out;
    for (const json& r : records_) {
      if (r["benchmark"]["id"] == benchmark && r["status"] == "ok") {
        out.insert(r["model"]["file_name"].get<std::string>());
      }
    }
    return out;
  }
  const json* RecordOf(const std::string& benchmark, const std::string& model) {
    for (const json& r : records_) {
      if (r["benchmark"]["id"] == benchmark && r["model"]["file_name"] == model) return &r;
    }
    return nullptr;
  }

  fs::path dir_;
  std::unique_ptr<FleetStore> store_;
  std::vector<json> records_;
};

TEST_F(DashboardTest, LeaderboardHasOneRowPerConfigurationOfEachBenchmark) {
  const std::string html = Page("/");
  std::set<std::string> benchmarks;
  for (const json& r : records_) benchmarks.insert(r["benchmark"]["id"].get<std::string>());
  EXPECT_EQ(Count(html, "<section class=\"board\""), benchmarks.size());
  for (const std::string& b : benchmarks) {
    const std::string board = Board(html, b);
    ASSERT_FALSE(board.empty()) << b;
    EXPECT_EQ(Count(board, "<tr class=\"entry\""), ModelsOf(b).size()) << b;
  }
  // The headline with its CI: the prefill_throughput_512 board shows each median and CI bounds.
  const std::string board = Board(html, "prefill_throughput_512");
  EXPECT_NE(board.find("Median (tokens/s)"), std::string::npos);
  EXPECT_NE(board.find("95% CI"), std::string::npos);
  // Default order: throughput best first.
  const std::vector<double> m = Medians(board);
  ASSERT_EQ(m.size(), ModelsOf("prefill_throughput_512").size());
  EXPECT_TRUE(std::is_sorted(m.rbegin(), m.rend())) << board;
  // The filter form and the navigation.
  EXPECT_NE(html.find("<form class=\"filters\""), std::string::npos);
  EXPECT_NE(html.find("href=\"/static/dashboard.css\""), std::string::npos);
}

TEST_F(DashboardTest, FiltersChangeTheRowsAndLinksKeepThem) {
  const std::string all = Page("/");
  const std::string q8 = Page("/", {{"quant", "Q8_0"}});
  EXPECT_LT(Count(q8, "<tr class=\"entry\""), Count(all, "<tr class=\"entry\""));
  EXPECT_GT(Count(q8, "<tr class=\"entry\""), 0u);
  EXPECT_EQ(q8.find("stories260K-Q4_0.gguf"), std::string::npos);
  EXPECT_NE(q8.find("stories260K-Q8_0.gguf"), std::string::npos);
  // Every leaderboard link (sorting, paging, per-benchmark) keeps the filter.
  const std::regex href("href=\"(/\\?[^\"]*)\"");
  size_t links = 0;
  for (auto it = std::sregex_iterator(q8.begin(), q8.end(), href); it != std::sregex_iterator();
       ++it) {
    ++links;
    EXPECT_NE((*it)[1].str().find("quant=Q8_0"), std::string::npos) << (*it)[1];
  }
  EXPECT_GT(links, 10u);
  // The form shows the current value.
  EXPECT_NE(q8.find("name=\"quant\" value=\"Q8_0\""), std::string::npos);
  // One benchmark only.
  const std::string one = Page("/", {{"benchmark", "decode_throughput_256_100"}});
  EXPECT_EQ(Count(one, "<section class=\"board\""), 1u);
  // Model and device filters.
  const std::string model =
      Page("/", {{"model", "Q4_K_M"}, {"benchmark", "prefill_throughput_512"}});
  EXPECT_EQ(Count(model, "<tr class=\"entry\""), 1u);
  const std::string device = records_[0]["device"]["id"].get<std::string>();
  EXPECT_EQ(Count(Page("/", {{"device", device.substr(0, 10)}}), "<tr class=\"entry\""),
            Count(all, "<tr class=\"entry\""));
  EXPECT_EQ(Count(Page("/", {{"device", "0000ffff"}}), "<tr class=\"entry\""), 0u);
}

TEST_F(DashboardTest, SortsByAColumnInEitherOrder) {
  const Query asc = {{"sort", "median"}, {"order", "asc"}, {"benchmark", "prefill_throughput_512"}};
  const std::vector<double> up = Medians(Page("/", asc));
  ASSERT_GE(up.size(), 2u);
  EXPECT_TRUE(std::is_sorted(up.begin(), up.end()));
  const std::string by_model =
      Page("/", {{"sort", "model"}, {"order", "desc"}, {"benchmark", "prefill_throughput_512"}});
  const size_t q8 = by_model.find("stories260K-Q8_0.gguf"),
               q4 = by_model.find("stories260K-Q4_0.gguf");
  ASSERT_NE(q8, std::string::npos);
  ASSERT_NE(q4, std::string::npos);
  EXPECT_LT(q8, q4);  // descending by name: Q8_0 before Q4_0
  // The sorted column's header link flips the order.
  EXPECT_NE(by_model.find("sort=model&amp;order=asc"), std::string::npos);
}

TEST_F(DashboardTest, PagesThroughResults) {
  const std::string first = Page("/", {{"limit", "10"}});
  EXPECT_NE(first.find(std::to_string(records_.size()) + " matching results"), std::string::npos)
      << first.substr(0, 2000);
  const std::smatch m = [&] {
    std::smatch out;
    std::regex_search(first, out,
                      std::regex("rel=\"next\" href=\"/\\?limit=10&amp;cursor=([^\"]+)\""));
    return out;
  }();
  ASSERT_FALSE(m.empty()) << "no next-page link";
  const std::string cursor = m[1];
  const std::string second = Page("/", {{"limit", "10"}, {"cursor", cursor}});
  EXPECT_NE(second.find("first page"), std::string::npos);
  // Different results on the second page.
  const std::regex id("data-result=\"([^\"]+)\"");
  std::set<std::string> a, b;
  for (auto it = std::sregex_iterator(first.begin(), first.end(), id); it != std::sregex_iterator();
       ++it)
    a.insert((*it)[1]);
  for (auto it = std::sregex_iterator(second.begin(), second.end(), id);
       it != std::sregex_iterator(); ++it)
    b.insert((*it)[1]);
  EXPECT_FALSE(b.empty());
  for (const std::string& r : b) EXPECT_EQ(a.count(r), 0u) << r;
}

TEST_F(DashboardTest, BadParametersAreNamed) {
  const std::vector<std::pair<Query, std::string>> cases = {
      {{{"sort", "zzz"}}, "sort must be one of"},
      {{{"order", "up"}}, "order must be"},
      {{{"limit", "-1"}}, "limit must be a whole number from 1 to 1000 (got '-1')"},
      {{{"limit", "abc"}}, "limit must be"},
      {{{"status", "maybe"}}, "status must be ok or failed"},
      {{{"since", "yesterday"}}, "since:"},
      {{{"cursor", "garbage"}}, "cursor"}};
  for (const auto& [query, expected] : cases) {
    const DashboardResponse r = Get("/", query);
    EXPECT_EQ(r.kind, DashboardResponse::Kind::kBadRequest)
        << query.begin()->first << ": " << r.body;
    EXPECT_NE(r.body.find(expected), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find('\n'), std::string::npos) << "one line: " << r.body;
  }
  const DashboardResponse c = Get("/compare", {{"a", records_[0]["result_id"]}});
  EXPECT_EQ(c.kind, DashboardResponse::Kind::kBadRequest);
  EXPECT_NE(c.body.find("b:"), std::string::npos) << c.body;
  EXPECT_EQ(Get("/quality", {{"quality", "nope"}}).kind, DashboardResponse::Kind::kBadRequest);
}

TEST_F(DashboardTest, UnknownPagesAndResultsAreNotFound) {
  for (const std::string& path :
       std::vector<std::string>{"/nope", "/results/00000000-0000-4000-8000-000000000000",
                                "/devices/ffffffff", "/plans/plan_nope", "/results/a/b"}) {
    const DashboardResponse r = Get(path);
    EXPECT_EQ(r.kind, DashboardResponse::Kind::kNotFound) << path << ": " << r.body;
    EXPECT_EQ(r.body.find('\n'), std::string::npos) << r.body;
  }
  EXPECT_NE(Get("/results/00000000-0000-4000-8000-000000000000").body.find("no result 00000000"),
            std::string::npos);
}

TEST_F(DashboardTest, ScalingChartsHaveOnePointPerConfigurationAndContext) {
  const std::string html = Page("/scaling");
  size_t prefill_points = 0, decode_points = 0;
  for (const json& r : records_) {
    const std::string id = r["benchmark"]["id"];
    if (r["status"] != "ok") continue;
    if (id.rfind("prefill_throughput_", 0) == 0) ++prefill_points;
    if (id.rfind("decode_throughput_", 0) == 0) ++decode_points;
  }
  // The fixture has one result per configuration and benchmark.
  const std::string prefill = Svg(html, "prefill-chart");
  const std::string decode = Svg(html, "decode-chart");
  ASSERT_FALSE(prefill.empty());
  ASSERT_FALSE(decode.empty());
  EXPECT_EQ(Count(prefill, "<circle class=\"point"), prefill_points);
  EXPECT_EQ(Count(decode, "<circle class=\"point"), decode_points);
  // One line per configuration (three quantizations).
  EXPECT_EQ(Count(prefill, "<polyline class=\"line\""), ModelsOf("prefill_throughput_512").size());
  // Filtered to one quantization: one line.
  const std::string q8 = Page("/scaling", {{"quant", "Q8_0"}});
  EXPECT_EQ(Count(Svg(q8, "prefill-chart"), "<polyline class=\"line\""), 1u);
}

// Issue 27: the legend cut "stories260K-Q8_0.gguf llamacpp t=2 @..." to 25 characters, so the
// same model under two runtimes read alike. Each line is named by its runtime and what differs;
// what every line shares is said once.
TEST_F(DashboardTest, ScalingLegendNamesTheRuntimeAndWhatDiffers) {
  int n = 0;
  for (json r : records_) {
    if (r["model"]["file_name"] != "stories260K-Q8_0.gguf" ||
        r["benchmark"]["id"].get<std::string>().rfind("prefill_throughput_", 0) != 0) {
      continue;
    }
    r["runtime"]["name"] = "llamacpp-stock";
    std::string id = r["result_id"];
    char suffix[12];
    std::snprintf(suffix, sizeof suffix, "%02d", ++n);
    r["result_id"] = id.replace(id.size() - 2, 2, suffix);
    ASSERT_TRUE(store_->PutResult(r, "pc_00000000000000000000000000000001", kNow).ok());
  }
  ASSERT_GT(n, 2);
  const std::string html = Page("/scaling");
  const std::string legend = Between(Svg(html, "prefill-chart"), "<g class=\"legend\">", "</g>");
  // 25 characters a line: the model's name, then the runtime below it.
  EXPECT_NE(legend.find(">stories260K-Q8_0.gguf<tspan x=\"572.0\" dy=\"14.0\">llamacpp</tspan>"),
            std::string::npos)
      << legend;
  EXPECT_NE(legend.find(">stories260K-Q8_0.gguf<tspan x=\"572.0\" dy=\"14.0\">llamacpp-stock"
                        "</tspan></text>"),
            std::string::npos)
      << legend;
  EXPECT_EQ(legend.find("\u2026"), std::string::npos) << legend;
  EXPECT_EQ(legend.find("t=2"), std::string::npos) << legend;
  EXPECT_NE(html.find("Every line: t=2 @"), std::string::npos);
}

TEST_F(DashboardTest, QualityScatterHasTheParetoFront) {
  const std::string html = Page("/quality");
  const std::string svg = Svg(html, "quality-chart");
  ASSERT_FALSE(svg.empty()) << html.substr(0, 3000);
  const size_t kl = ModelsOf("kl_divergence_512").size();
  ASSERT_GT(kl, 0u);
  EXPECT_EQ(Count(svg, "<circle class=\"point"), kl);
  EXPECT_GE(Count(svg, "<circle class=\"point front"), 1u);
  EXPECT_NE(html.find("kl_divergence_512"), std::string::npos);
  // Q8_0 agrees with the reference best: on the front.
  const json* q8 = RecordOf("kl_divergence_512", "stories260K-Q8_0.gguf");
  ASSERT_NE(q8, nullptr);
  EXPECT_NE(html.find(">stories260K-Q8_0.gguf llamacpp t=2"), std::string::npos);
  // Top1 agreement in %, on ticks from 0 to 100 (issue 27: a % axis read 0..1).
  const std::string y = Between(svg, "<g class=\"axis y\">", "</g>");
  EXPECT_NE(y.find("(%)"), std::string::npos) << y;
  for (const char* tick : {">0</text>", ">20</text>", ">100</text>"}) {
    EXPECT_NE(y.find(tick), std::string::npos) << tick << " in " << y;
  }
}

TEST_F(DashboardTest, ResultPageShowsMetricsSamplesAndProvenance) {
  const json* r = RecordOf("decode_throughput_256_100", "stories260K-Q8_0.gguf");
  ASSERT_NE(r, nullptr);
  const std::string id = (*r)["result_id"];
  const std::string html = Page("/results/" + id);
  EXPECT_EQ(Count(html, "<tr class=\"metric\""), (*r)["metrics"].size());
  EXPECT_EQ(Count(html, "<tr class=\"sample\""), (*r)["samples"].size());
  EXPECT_NE(html.find("href=\"/api/results/" + id + "\""), std::string::npos);
  EXPECT_NE(html.find((*r)["model"]["sha256"].get<std::string>()), std::string::npos);
  EXPECT_NE(html.find((*r)["runtime"]["commit"].get<std::string>()), std::string::npos);
  EXPECT_NE(html.find((*r)["device"]["cpu"]["model"].get<std::string>()), std::string::npos);
  EXPECT_NE(html.find((*r)["harness"]["compiler"].get<std::string>()), std::string::npos);
  EXPECT_NE(html.find("Thermal series"), std::string::npos);
}

// Issue 27: "every dashboard result page show[s] "load: bad special token: ..." as a warning
// box"; the loader's harmless notes are a muted line, real warnings stay boxes, and a
// kl_divergence result (deterministic) is not called noisy.
TEST_F(DashboardTest, ResultPageShowsLoaderNotesQuietly) {
  const json* r = RecordOf("kl_divergence_512", "stories260K-Q4_K_M.gguf");
  ASSERT_NE(r, nullptr);
  const std::string html = Page("/results/" + (*r)["result_id"].get<std::string>());
  EXPECT_EQ(Count(html, "<p class=\"notice\">"), 1u);  // the quantization fallback
  EXPECT_NE(html.find("<p class=\"notice\">stories260K-Q4_K_M.gguf is labelled Q4_K_M"),
            std::string::npos);
  EXPECT_NE(html.find("<p class=\"meta\">Engine notes (harmless): load: bad special token: "
                      "&#39;tokenizer.ggml.seperator_token_id&#39;"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("(noisy)"), std::string::npos);
  EXPECT_NE(html.find("not reached"), std::string::npos);
}

TEST_F(DashboardTest, DevicesAndDeviceFingerprint) {
  const std::string device = records_[0]["device"]["id"];
  const std::string list = Page("/devices");
  EXPECT_EQ(Count(list, "<tr class=\"device\""), 1u);
  EXPECT_NE(list.find("/devices/" + device), std::string::npos);
  const std::string page = Page("/devices/" + device);
  EXPECT_NE(page.find(records_[0]["device"]["cpu"]["flags_hash"].get<std::string>()),
            std::string::npos);
  EXPECT_NE(page.find("Recent results"), std::string::npos);
}

TEST_F(DashboardTest, CompareShowsRatios) {
  const json* a = RecordOf("decode_throughput_256_100", "stories260K-Q8_0.gguf");
  const json* b = RecordOf("decode_throughput_256_100", "stories260K-Q4_0.gguf");
  ASSERT_TRUE(a && b);
  const std::string html = Page("/compare", {{"a", (*a)["result_id"]}, {"b", (*b)["result_id"]}});
  const double ratio = (*b)["metrics"]["decode_throughput"]["median"].get<double>() /
                       (*a)["metrics"]["decode_throughput"]["median"].get<double>();
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", ratio);
  const std::string row = Between(html, "data-metric=\"decode_throughput\"", "</tr>");
  EXPECT_NE(row.find(text), std::string::npos) << row;
  EXPECT_NE(html.find("class=\"differs\""), std::string::npos);  // the quant differs
}

TEST_F(DashboardTest, FleetAndPlanProgress) {
  FleetClient c;
  c.client_id = "pc_0123456789abcdef0123456789abcdef";
  c.public_key_hex = std::string(64, 'a');
  c.label = "<script>alert('x')</script>";
  c.labels = {"x86"};
  c.profile = records_[0]["device"];
  auto reg = store_->Register(c, "", kNow);
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  ASSERT_TRUE(store_->SetClientStatus(c.client_id, ClientStatus::kApproved).ok());
  std::vector<json> specs;
  for (const char* b : {"prefill_throughput_8", "prefill_throughput_16", "prefill_throughput_32"}) {
    specs.push_back({{"benchmark", b},
                     {"model", {{"sha256", std::string(64, 'b')}, {"file_name", "m.gguf"}}},
                     {"runtime", "llamacpp"},
                     {"requires", {{"labels", {"x86"}}}}});
  }
  auto plan = store_->CreatePlan("nightly <b>", specs, 0, kNow);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const json caps = {{"labels", {"x86"}},
                     {"arch", "x86_64"},
                     {"memory_bytes", 1 << 30},
                     {"runtimes", {"llamacpp"}},
                     {"models", {std::string(64, 'b')}}};
  ASSERT_TRUE(store_->SetCapabilities(c.client_id, caps).ok());
  auto job = store_->Claim(c.client_id, caps, kNow, 60);
  ASSERT_TRUE(job.ok() && job->has_value()) << (job.ok() ? "no job" : job.error().message);
  auto done = store_->Complete((*job)->job_id, c.client_id, records_[0], kNow);
  ASSERT_TRUE(done.ok()) << done.error().message;
  auto job2 = store_->Claim(c.client_id, caps, kNow, 60);
  ASSERT_TRUE(job2.ok() && job2->has_value());

  const std::string fleet = Page("/fleet");
  EXPECT_EQ(fleet.find("<script>"), std::string::npos);
  EXPECT_NE(fleet.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos)
      << fleet;
  EXPECT_EQ(fleet.find("nightly <b>"), std::string::npos);
  EXPECT_NE(fleet.find("1/3 done, 1 leased"), std::string::npos) << fleet;
  EXPECT_NE(fleet.find("runtimes: llamacpp"), std::string::npos);
  const std::string page = Page("/plans/" + *plan);
  EXPECT_EQ(Count(page, "<tr class=\"job\""), 3u);
  EXPECT_EQ(Count(page, "data-state=\"done\""), 1u);
  EXPECT_EQ(Count(page, "data-state=\"leased\""), 1u);
  EXPECT_EQ(Count(page, "data-state=\"queued\""), 1u);
  EXPECT_NE(page.find("/results/" + records_[0]["result_id"].get<std::string>()),
            std::string::npos);
}

TEST_F(DashboardTest, StoredStringsAreEscapedEverywhere) {
  json r = records_[0];
  r["result_id"] = "0badc0de-0000-4000-8000-000000000001";
  r["model"]["file_name"] = "<img src=x onerror=alert(1)>\"'.gguf";
  r["device"]["label"] = "<b>lab</b>";
  auto put = store_->PutResult(r, "pc_00000000000000000000000000000001", kNow);
  ASSERT_TRUE(put.ok()) << put.error().message;
  for (const std::string& path : std::vector<std::string>{
           "/", "/devices", "/results/" + r["result_id"].get<std::string>(),
           "/devices/" + r["device"]["id"].get<std::string>(), "/quality", "/scaling"}) {
    const std::string html = Page(path, {{"model", "<script>x</script>"}});
    EXPECT_EQ(html.find("<img src=x"), std::string::npos) << path;
    EXPECT_EQ(html.find("<b>lab"), std::string::npos) << path;
    EXPECT_EQ(html.find("<script>"), std::string::npos) << path;
  }
  const std::string html = Page("/", {{"benchmark", r["benchmark"]["id"].get<std::string>()}});
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;&quot;&#39;.gguf"), std::string::npos);
}

TEST_F(DashboardTest, ServesTheStylesheet) {
  const DashboardResponse r = Get("/static/dashboard.css");
  EXPECT_EQ(r.kind, DashboardResponse::Kind::kPage);
  EXPECT_EQ(r.content_type, "text/css; charset=utf-8");
  EXPECT_NE(r.body.find("@media"), std::string::npos);
}

}  // namespace
}  // namespace pipette

namespace pipette {
namespace {

// A kept page is served while no result is added, and rendered again once one is: a page from
// the cache is the page rendering gives now.
TEST_F(DashboardTest, KeptPagesAreServedUntilAResultIsAdded) {
  PageCache cache(1 << 20);
  const std::string benchmark = records_[0]["benchmark"]["id"].get<std::string>();
  const Query query = {{"benchmark", benchmark}};
  const DashboardResponse first = RenderDashboard(*store_, "/", query, &cache);
  ASSERT_EQ(first.kind, DashboardResponse::Kind::kPage) << first.body;
  EXPECT_EQ(RenderDashboard(*store_, "/", query, &cache).body, first.body);

  json added = records_[0];
  added["result_id"] = "01a2ffff-0000-7000-8000-00000000cace";
  added["model"]["file_name"] = "added-after-caching.gguf";
  ASSERT_EQ(*store_->PutResult(added, "pc_00000000000000000000000000000001", kNow),
            PutOutcome::kStored);
  const DashboardResponse after = RenderDashboard(*store_, "/", query, &cache);
  EXPECT_NE(after.body.find("added-after-caching.gguf"), std::string::npos);
  EXPECT_EQ(after.body, Get("/", query).body);
  // A refusal is never kept; nor is a page that depends on the clock.
  EXPECT_EQ(RenderDashboard(*store_, "/", {{"limit", "-1"}}, &cache).kind,
            DashboardResponse::Kind::kBadRequest);
  EXPECT_EQ(RenderDashboard(*store_, "/scaling", {{"since", "2026-01-01"}}, &cache).kind,
            DashboardResponse::Kind::kPage);
}

// A result page reads a short id (the start of one result's id, as listings show it) as the id.
TEST_F(DashboardTest, ResultPageReadsAShortId) {
  std::vector<std::string> ids;
  for (const json& r : records_) ids.push_back(r["result_id"].get<std::string>());
  std::sort(ids.begin(), ids.end());
  // The shortest start (8 characters at least) of ids[1] that its neighbours do not share.
  const auto shared = [](const std::string& a, const std::string& b) {
    size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    return n;
  };
  const size_t length =
      std::max<size_t>({8, shared(ids[0], ids[1]) + 1, shared(ids[1], ids[2]) + 1});
  ASSERT_LT(length, 36u);
  EXPECT_EQ(Page("/results/" + ids[1].substr(0, length)), Page("/results/" + ids[1]));
  if (shared(ids[0], ids[1]) >= 8) {
    const DashboardResponse both = Get("/results/" + ids[1].substr(0, shared(ids[0], ids[1])));
    EXPECT_EQ(both.kind, DashboardResponse::Kind::kBadRequest);
    EXPECT_NE(both.body.find("matches several results"), std::string::npos) << both.body;
  }
}

TEST(PageCacheTest, KeepsTheNewestVersionWithinItsBytes) {
  PageCache cache(100);
  DashboardResponse page;
  page.body = std::string(40, 'a');
  cache.Keep("one", 1, page);
  ASSERT_TRUE(cache.Find("one", 1).has_value());
  EXPECT_EQ(cache.Find("one", 1)->body, page.body);
  EXPECT_FALSE(cache.Find("one", 2).has_value());  // another version: dropped
  EXPECT_FALSE(cache.Find("one", 1).has_value());
  cache.Keep("one", 1, page);
  cache.Keep("two", 1, page);
  ASSERT_TRUE(cache.Find("one", 1).has_value());  // "one" is now the more recently used
  cache.Keep("three", 1, page);                    // 3 x 43 bytes > 100: "two" goes
  EXPECT_TRUE(cache.Find("one", 1).has_value());
  EXPECT_FALSE(cache.Find("two", 1).has_value());
  EXPECT_TRUE(cache.Find("three", 1).has_value());
  page.body = std::string(200, 'b');  // larger than the whole cache: not kept
  cache.Keep("big", 1, page);
  EXPECT_FALSE(cache.Find("big", 1).has_value());
  PageCache none(0);
  none.Keep("one", 1, page);
  EXPECT_FALSE(none.Find("one", 1).has_value());
}

}  // namespace
}  // namespace pipette
