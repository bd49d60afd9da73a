// The dashboard in headless Chromium against a real `pipette serve` process: real results (the
// stories260K suite's, src/dashboard/testdata/stories260k.jsonl), a registered client and a plan
// with jobs in each state are put into an SQLite fleet database, the server is started on it, and
// Chromium opens every page: each must log nothing to the console (no script error, no failed
// load such as a missing stylesheet), and its DOM must hold the expected rows and chart points.
// Screenshots of every page at 1280x900 and 375x812 go to a folder the test prints
// ($PIPETTE_DASHBOARD_SHOTS, else a fresh folder under the temp dir; kept).
// Skips, saying why, when chromium is not installed (scripts/deps.sh --test installs it).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "pipette/fleet_store.h"
#include "platform/process.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kNow = 1764568800;
const std::string kClient = "pc_0123456789abcdef0123456789abcdef";

std::string FindChromium() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "chrome"}) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (dir.empty()) continue;
      const fs::path candidate = fs::path(dir) / name;
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) {
        return candidate.string();
      }
    }
  }
  return "";
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t Count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size()))
    ++n;
  return n;
}

struct BrowserRun {
  bool finished = false;
  std::string out, err;
};

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
  BrowserRun Browse(const std::string& action, const std::string& url, int width, int height) {
    static int counter = 0;
    const std::string err_path =
        (dir_ / ("chromium-" + std::to_string(counter++) + ".txt")).string();
    BrowserRun run;
    auto child = ChildProcess::Start(
        {chromium_, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", "--no-first-run", "--hide-scrollbars",
         "--user-data-dir=" + (dir_ / "chromium-profile").string(),
         "--window-size=" + std::to_string(width) + "," + std::to_string(height), action, url},
        err_path);
    if (!child.ok()) {
      run.err = child.error().message;
      return run;
    }
    child->CloseStdin();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      auto line = child->ReadLine(std::chrono::milliseconds(1000));
      if (line) {
        run.out += *line + "\n";
      } else if (!child->TimedOut()) {
        break;
      }
    }
    auto exit = child->Wait(std::chrono::milliseconds(5000));
    if (!exit) {
      child->Kill(SIGKILL);
      child->Wait();
    }
    run.finished = exit.has_value() && exit->exited && exit->code == 0;
    run.err = ReadFile(err_path);
    return run;
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

}  // namespace
}  // namespace pipette
