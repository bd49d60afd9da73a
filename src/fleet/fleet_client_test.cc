// The fleet client and its outbox: files on a real disk, a real port nothing listens on.
#include "pipette/fleet_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A loopback port that was free a moment ago (bound, then closed): nothing listens there.
int DeadPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/pipette-fleet-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

json Record(const std::string& id) {
  return {{"schema", "pipette.result/1"}, {"result_id", id}, {"status", "ok"}};
}

json ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

TEST(FleetHttpClient, UnreachableServerIsOneLineAndRetriable) {
  const int port = DeadPort();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  FleetHttpClient client(url, GenerateIdentity());
  ASSERT_TRUE(client.Check().ok());
  EXPECT_EQ(client.host_port(), "127.0.0.1:" + std::to_string(port));
  const FleetResult r = client.Health();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, FleetFailure::kUnreachable);
  EXPECT_EQ(r.error().status, 0);
  EXPECT_TRUE(r.error().retriable());
  EXPECT_EQ(r.error().message,
            "cannot reach " + url + " (connection refused); is pipette serve running there?");
}

TEST(FleetHttpClient, BadUrlIsRefusedByEveryCall) {
  FleetHttpClient client("127.0.0.1:8080", GenerateIdentity());
  ASSERT_FALSE(client.Check().ok());
  EXPECT_EQ(client.Check().error().message,
            "'127.0.0.1:8080' is not a server URL; give http://HOST:PORT, e.g. "
            "http://127.0.0.1:8080");
  const FleetResult r = client.Me();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, FleetFailure::kRejected);
  EXPECT_TRUE(FleetHttpClient("http://h:1/", Identity{}).Check().ok());
  EXPECT_EQ(FleetHttpClient("http://h/", Identity{}).host_port(), "h:80");
  EXPECT_FALSE(FleetHttpClient("http://h:99999", Identity{}).Check().ok());
  EXPECT_FALSE(FleetHttpClient("http://h:1/api", Identity{}).Check().ok());
}

TEST(FleetHttpClient, FilterQueryEncodesEveryField) {
  ResultFilter f;
  f.benchmarks = {"prefill_throughput_8", "decode_throughput_8"};
  f.models = {"stories 260K"};
  f.settings = {"threads=1"};
  f.since = "2026-11-29T10:00:00Z";
  f.status = "ok";
  f.limit = 5;
  EXPECT_EQ(ResultFilterQuery(f),
            "?benchmark=prefill_throughput_8&benchmark=decode_throughput_8&model=stories%20260K"
            "&status=ok&since=2026-11-29T10%3A00%3A00Z&setting=threads%3D1&limit=5");
  EXPECT_EQ(ResultFilterQuery(ResultFilter{}), "");
}

TEST(FleetHttpClient, ResultRowRoundTripsThroughJson) {
  ResultRow r;
  r.result_id = "abcdef0123456789";
  r.short_id = "abcdef01";
  r.benchmark_id = "prefill_throughput_8";
  r.threads = 4;
  r.headline = 123.5;
  r.headline_ci95_low = 120.0;
  r.headline_n = 7;
  r.ci_reached = false;
  auto back = ResultRowFromJson(ResultRowToJson(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->result_id, r.result_id);
  EXPECT_EQ(back->short_id, "abcdef01");
  EXPECT_EQ(back->threads, 4);
  EXPECT_EQ(*back->headline, 123.5);
  EXPECT_EQ(*back->headline_ci95_low, 120.0);
  EXPECT_FALSE(back->headline_ci95_high.has_value());
  EXPECT_EQ(back->headline_n, 7);
  EXPECT_FALSE(back->ci_reached);
  EXPECT_FALSE(ResultRowFromJson(json::array()).ok());
}

TEST(Outbox, DefaultDirIsPerServer) {
  ::setenv("PIPETTE_OUTBOX", "/tmp/ob", 1);
  EXPECT_EQ(DefaultOutboxDir("http://127.0.0.1:8750"), "/tmp/ob/127.0.0.1_8750");
  EXPECT_EQ(DefaultOutboxDir("http://fleet.example/"), "/tmp/ob/fleet.example_80");
  ::unsetenv("PIPETTE_OUTBOX");
}

TEST(Outbox, RecordsSurviveReopeningAndWritesLeaveNoPartialFile) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/outbox";
  {
    auto outbox = Outbox::Open(dir);
    ASSERT_TRUE(outbox.ok()) << outbox.error().message;
    ASSERT_TRUE(outbox->Add(Record("r1")).ok());
    ASSERT_TRUE(outbox->Add(Record("r2"), "job_1").ok());
    // Adding again replaces the waiting copy: still one file.
    ASSERT_TRUE(outbox->Add(Record("r1")).ok());
  }
  auto reopened = Outbox::Open(dir);  // as another process would, after a restart
  ASSERT_TRUE(reopened.ok());
  auto ids = reopened->PendingIds();
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->size(), 2u);
  EXPECT_EQ(*reopened->Pending(), 2);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"r1.json", "r2.json"}));  // no temporary file left
  const json entry = ReadFile(dir + "/r2.json");
  EXPECT_EQ(entry["record"], Record("r2"));
  EXPECT_EQ(entry["job_id"], "job_1");
  EXPECT_EQ(entry["attempts"], 0);
  EXPECT_EQ(entry["next_try_at"], 0);
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);
}

TEST(Outbox, RefusesRecordsWithoutUsableIds) {
  TempDir tmp;
  auto outbox = Outbox::Open(tmp.path());
  ASSERT_TRUE(outbox.ok());
  EXPECT_FALSE(outbox->Add(json{{"status", "ok"}}).ok());
  EXPECT_FALSE(outbox->Add(Record("../escape")).ok());
  EXPECT_FALSE(outbox->Add(Record(".hidden")).ok());
  EXPECT_EQ(*outbox->Pending(), 0);
}

TEST(Outbox, UnreachableServerBacksOffDoublingToSixtySeconds) {
  TempDir tmp;
  auto outbox = Outbox::Open(tmp.path());
  ASSERT_TRUE(outbox.ok());
  ASSERT_TRUE(outbox->Add(Record("r1")).ok());
  ASSERT_TRUE(outbox->Add(Record("r2")).ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(DeadPort());
  FleetHttpClient client(url, GenerateIdentity(), FleetClientOptions{1000, 1000, 1000, ""});
  int64_t now = 1'000'000;
  auto report = outbox->Flush(client, now);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->sent, 0);
  EXPECT_EQ(report->rejected, 0);
  EXPECT_EQ(report->pending, 2);
  EXPECT_TRUE(report->acknowledged.empty());
  EXPECT_EQ(report->retry_reason,
            "cannot reach " + url + " (connection refused); is pipette serve running there?");
  // The first unreachable answer stops the flush: only one record was tried.
  const auto attempts = [&](const std::string& id) {
    return ReadFile(tmp.path() + "/" + id + ".json")["attempts"].get<int>();
  };
  const auto next = [&](const std::string& id) {
    return ReadFile(tmp.path() + "/" + id + ".json")["next_try_at"].get<int64_t>();
  };
  const std::string first = attempts("r1") == 1 ? "r1" : "r2";
  EXPECT_EQ(attempts("r1") + attempts("r2"), 1);
  EXPECT_EQ(next(first), now + 1);
  EXPECT_EQ(ReadFile(tmp.path() + "/" + first + ".json")["last_error"], report->retry_reason);

  // Not due yet: the first waits, the second is tried.
  report = outbox->Flush(client, now);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->pending, 2);
  EXPECT_EQ(attempts(first), 1);
  EXPECT_EQ(attempts("r1") + attempts("r2"), 2);

  // Waits of 1, 2, 4, 8, 16, 32, 60, 60 s.
  const std::vector<int64_t> waits = {1, 2, 4, 8, 16, 32, 60, 60};
  now = next(first);
  for (size_t i = 1; i < waits.size(); ++i) {
    report = outbox->Flush(client, now);
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(attempts(first), static_cast<int>(i) + 1);
    EXPECT_EQ(next(first) - now, waits[i]) << "attempt " << i + 1;
    now = std::max(next("r1"), next("r2"));
  }
  // ignore_backoff tries the first record at once.
  const int before = attempts(first) + attempts(first == "r1" ? "r2" : "r1");
  report = outbox->Flush(client, 0, /*ignore_backoff=*/true);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(attempts(first) + attempts(first == "r1" ? "r2" : "r1"), before + 1);
  EXPECT_EQ(*outbox->Pending(), 2);
}

// A 2xx that is not pipette's acknowledgement (another program at the URL) removes nothing.
TEST(Outbox, ATwoHundredWithoutPipettesAcknowledgementKeepsTheRecord) {
  httplib::Server fake;
  fake.Post("/api/results", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{}", "application/json");
  });
  const int port = fake.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { fake.listen_after_bind(); });
  while (!fake.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  TempDir tmp;
  auto outbox = Outbox::Open(tmp.path());
  ASSERT_TRUE(outbox.ok());
  ASSERT_TRUE(outbox->Add(Record("r1")).ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto report = outbox->Flush(FleetHttpClient(url, GenerateIdentity()), 1'000'000);
  fake.stop();
  serving.join();
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->sent + report->already, 0);
  EXPECT_EQ(report->pending, 1);
  EXPECT_EQ(report->retry_reason, "the server at " + url +
                                      " answered 200 without pipette's acknowledgement; is it "
                                      "pipette serve?");
  EXPECT_EQ(*outbox->Pending(), 1);
}

TEST(Outbox, EntryChangedByHandIsSetAside) {
  TempDir tmp;
  auto outbox = Outbox::Open(tmp.path());
  ASSERT_TRUE(outbox.ok());
  std::ofstream(tmp.path() + "/broken.json") << "{not json";
  FleetHttpClient client("http://127.0.0.1:" + std::to_string(DeadPort()), GenerateIdentity());
  auto report = outbox->Flush(client, 0);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->rejected, 1);
  ASSERT_EQ(report->rejections.size(), 1u);
  EXPECT_EQ(report->rejections[0], "broken: not an outbox entry (the file was changed by hand?)");
  // Set aside byte for byte, the reason beside it.
  std::ifstream kept(tmp.path() + "/rejected/broken.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "{not json");
  EXPECT_TRUE(fs::exists(tmp.path() + "/rejected/broken.reason.json"));
  EXPECT_EQ(*outbox->Pending(), 0);
}

}  // namespace
}  // namespace pipette
