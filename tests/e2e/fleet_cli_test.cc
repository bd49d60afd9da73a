// The device side of the fleet through the CLI (issue 10, items 3 and 5), against a real
// `pipette serve` process on stories260K cells: `register`, `run --submit`, `submit`, and the
// reading commands (`results list|show|export`, compare, diff, select, report) with --server
// reading the server as they read a local store. A server that is down when a result is made
// delays the result, never loses it; so does a server whose disk is full (a real full tmpfs, and
// the --db-max-size quota that fails the same way).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "base/ids.h"
#include "cli_runner.h"
#include "model_fixtures.h"
#include "pipette/fleet_store.h"
#include "pipette/identity.h"
#include "platform/process.h"

namespace pipette::testing_models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t FilesIn(const fs::path& dir) {
  std::error_code ec;
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

class FleetCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Stories260K("Q8_0").empty()) GTEST_SKIP() << SharedMissingReason();
    dir_ = fs::path(WorkDir()) / ("fleet-cli-" + NewNonce().substr(0, 8));
    fs::create_directories(dir_);
    db_ = (dir_ / "fleet.db").string();
    store_ = (dir_ / "local.db").string();
    identity_ = (dir_ / "identity.json").string();
    // What `run --submit` and `submit` read: the identity and the outbox (children inherit them).
    setenv("PIPETTE_IDENTITY", identity_.c_str(), 1);
    setenv("PIPETTE_OUTBOX", (dir_ / "outbox").c_str(), 1);
  }
  void TearDown() override {
    StopServer();
    unsetenv("PIPETTE_IDENTITY");
    unsetenv("PIPETTE_OUTBOX");
  }

  // Starts `pipette serve` (on `port`, or a free one the first time); sets url_.
  // `extra`: more serve options (--db-max-size).
  void StartServer(int port = 0, const std::vector<std::string>& extra = {}) {
    const fs::path err = dir_ / ("serve-" + std::to_string(starts_++) + ".err");
    server_logs_.push_back(err);
    std::vector<std::string> argv = {Binary("pipette"), "serve", "--listen",
                                     "127.0.0.1:" + std::to_string(port), "--db", db_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Result<ChildProcess> child = ChildProcess::Start(argv, err.string());
    ASSERT_TRUE(child.ok()) << child.error().message;
    server_.emplace(std::move(child).value());
    std::optional<std::string> line = server_->ReadLine(std::chrono::milliseconds(10000));
    ASSERT_TRUE(line.has_value()) << ReadFile(err);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(*line, m, std::regex(R"(listening on (http://127\.0\.0\.1:(\d+)))")))
        << *line;
    url_ = m[1].str();
    port_ = std::stoi(m[2].str());
  }
  void StopServer() {
    if (!server_) return;
    server_->Kill(SIGTERM);
    server_->Wait();
    server_.reset();
  }

  std::string NewKey() {
    CliResult r = RunPipette({"serve", "keys", "create", "--db", db_});
    EXPECT_EQ(r.exit.code, 0) << r.err;
    return r.out.substr(0, r.out.find('\n'));
  }

  // One short stories260K cell into the local store, submitted to the server; returns the
  // result_id (from --json) and keeps stderr in last_err_.
  std::string RunAndSubmit(const std::string& quant, const std::string& benchmark) {
    CliResult r = RunPipette({"--store", store_, "--json", "run", "-q", "--model",
                              Stories260K(quant), "--benchmark", benchmark, "--threads", "1",
                              "--min-reps", "3", "--max-reps", "3", "--no-readiness-load",
                              "--submit", url_});
    EXPECT_EQ(r.exit.code, 0) << r.err;
    last_err_ = r.err;
    const json record = json::parse(r.out, nullptr, false);
    return record.is_object() ? record.value("result_id", "") : "";
  }

  int64_t ResultsOnServer() {
    auto store = OpenFleetStore(db_);
    if (!store.ok()) return -1;
    auto n = (*store)->CountResults();
    return n.ok() ? *n : -1;
  }

  // The server's disk fills up after a first result is stored (`fill`), then space is freed
  // (`free`): the submission in between is refused with 507 and one line, nothing of it is
  // stored, reads go on, the record waits in the outbox; `submit` delivers it once there is
  // space, exactly once.
  void FullDiskRefusesThenDelivers(const std::function<void()>& fill,
                                   const std::function<void()>& free) {
    ASSERT_EQ(RunPipette({"register", "--server", url_, "--preauth", NewKey()}).exit.code, 0);
    const std::string first = RunAndSubmit("Q8_0", "prefill_throughput_8");
    ASSERT_EQ(ResultsOnServer(), 1);
    fill();
    if (HasFatalFailure()) return;

    const std::string refused = RunAndSubmit("Q4_0", "prefill_throughput_8");
    ASSERT_FALSE(refused.empty());
    EXPECT_NE(last_err_.find("server error (507): the server's disk is full; the result was not "
                             "stored"),
              std::string::npos)
        << last_err_;
    const fs::path outbox = dir_ / "outbox" / ("127.0.0.1_" + std::to_string(port_));
    EXPECT_TRUE(fs::exists(outbox / (refused + ".json")));
    EXPECT_EQ(ResultsOnServer(), 1) << "nothing of the refused result is stored";
    // Reads go on.
    CliResult list = RunPipette({"--json", "results", "list", "--server", url_});
    ASSERT_EQ(list.exit.code, 0) << list.err;
    const json rows = json::parse(list.out, nullptr, false);
    ASSERT_TRUE(rows.is_array()) << list.out;
    ASSERT_EQ(rows.size(), 1u) << list.out;
    EXPECT_EQ(rows[0].value("result_id", ""), first);
    // `submit` now: refused again, still waiting, exit 1.
    CliResult still = RunPipette({"--store", store_, "submit", "--server", url_});
    EXPECT_EQ(still.exit.code, 1) << still.out << still.err;
    EXPECT_NE(still.out.find("pending: server error (507): the server's disk is full"),
              std::string::npos)
        << still.out;

    free();
    if (HasFatalFailure()) return;
    CliResult sent = RunPipette({"--store", store_, "submit", "--server", url_});
    ASSERT_EQ(sent.exit.code, 0) << sent.err;
    EXPECT_NE(sent.out.find("submitted 1, already there 1, rejected 0, pending 0"),
              std::string::npos)
        << sent.out;
    EXPECT_EQ(FilesIn(outbox), 0u);
    EXPECT_EQ(ResultsOnServer(), 2);
    std::string logs;
    for (const auto& path : server_logs_) logs += ReadFile(path);
    EXPECT_NE(logs.find("the server's disk is full"), std::string::npos) << logs;
    EXPECT_EQ(logs.find("internal error"), std::string::npos) << logs;
  }

  fs::path dir_;
  std::vector<fs::path> server_logs_;
  std::string db_, store_, identity_, url_, last_err_;
  int port_ = 0;
  int starts_ = 0;
  std::optional<ChildProcess> server_;
};

TEST_F(FleetCliTest, RunSubmitsAndEveryReadingCommandReadsTheServer) {
  StartServer();
  CliResult reg = RunPipette({"register", "--server", url_, "--preauth", NewKey(), "--label",
                              "ci-x86", "--labels", "x86,ci"});
  ASSERT_EQ(reg.exit.code, 0) << reg.err;
  EXPECT_NE(reg.out.find("status: approved"), std::string::npos) << reg.out;
  EXPECT_TRUE(fs::exists(identity_));

  const std::string a = RunAndSubmit("Q8_0", "prefill_throughput_8");
  EXPECT_NE(last_err_.find("submitted result " + a + " to " + url_), std::string::npos)
      << last_err_;
  const std::string b = RunAndSubmit("Q4_0", "prefill_throughput_8");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(ResultsOnServer(), 2);
  EXPECT_EQ(FilesIn(dir_ / "outbox" / ("127.0.0.1_" + std::to_string(port_))), 0u)
      << "delivered records leave the outbox";

  // results list --server: the server's rows, as the local store lists them.
  CliResult list = RunPipette({"--json", "results", "list", "--server", url_});
  ASSERT_EQ(list.exit.code, 0) << list.err;
  const json rows = json::parse(list.out);
  ASSERT_EQ(rows.size(), 2u) << list.out;
  EXPECT_EQ(rows[0]["result_id"], b);  // newest first
  EXPECT_EQ(rows[1]["result_id"], a);
  CliResult filtered = RunPipette({"--json", "results", "list", "--server", url_, "--quant", "q4_0"});
  ASSERT_EQ(filtered.exit.code, 0) << filtered.err;
  ASSERT_EQ(json::parse(filtered.out).size(), 1u) << filtered.out;
  EXPECT_EQ(json::parse(filtered.out)[0]["result_id"], b);

  // results show --server: the whole record by id, or by the short id a listing shows.
  CliResult shown = RunPipette({"--json", "results", "show", "--server", url_, a});
  ASSERT_EQ(shown.exit.code, 0) << shown.err;
  CliResult local = RunPipette({"--store", store_, "--json", "results", "show", a});
  ASSERT_EQ(local.exit.code, 0) << local.err;
  EXPECT_EQ(json::parse(shown.out), json::parse(local.out));
  CliResult by_prefix = RunPipette({"results", "show", "--server", url_, a.substr(0, 12)});
  ASSERT_EQ(by_prefix.exit.code, 0) << by_prefix.err;
  EXPECT_NE(by_prefix.out.find(a), std::string::npos) << by_prefix.out;
  CliResult missing = RunPipette({"results", "show", "--server", url_, "00000000-0000"});
  EXPECT_EQ(missing.exit.code, 2);
  EXPECT_NE(missing.err.find("no result '00000000-0000' in " + url_), std::string::npos)
      << missing.err;

  // export, compare (two ids, two groups), diff, select, report: the same answers as locally.
  CliResult exported = RunPipette({"results", "export", "--server", url_});
  ASSERT_EQ(exported.exit.code, 0) << exported.err;
  EXPECT_EQ(std::count(exported.out.begin(), exported.out.end(), '\n'), 2);
  CliResult pair = RunPipette({"compare", "--server", url_, a, b});
  ASSERT_EQ(pair.exit.code, 0) << pair.err;
  EXPECT_NE(pair.out.find("prefill_throughput"), std::string::npos) << pair.out;
  CliResult groups = RunPipette({"--json", "compare", "--server", url_, "--a", "quant=Q8_0", "--b",
                                 "quant=Q4_0"});
  ASSERT_EQ(groups.exit.code, 0) << groups.err;
  CliResult groups_local = RunPipette({"--store", store_, "--json", "compare", "--a", "quant=Q8_0",
                                       "--b", "quant=Q4_0"});
  ASSERT_EQ(groups_local.exit.code, 0) << groups_local.err;
  EXPECT_EQ(json::parse(groups.out)["pairs"], json::parse(groups_local.out)["pairs"]);
  CliResult diff = RunPipette({"diff", "--server", url_, a, b});
  ASSERT_EQ(diff.exit.code, 0) << diff.err;
  EXPECT_NE(diff.out.find("first difference: inputs"), std::string::npos) << diff.out;
  CliResult select = RunPipette({"--json", "select", "--server", url_});
  ASSERT_EQ(select.exit.code, 0) << select.err;
  EXPECT_EQ(json::parse(select.out)["configurations"], 2) << select.out;
  EXPECT_EQ(json::parse(select.out)["store"], url_);
  const std::string html = (dir_ / "report.html").string();
  CliResult report = RunPipette({"report", "--server", url_, "-o", html});
  ASSERT_EQ(report.exit.code, 0) << report.err;
  EXPECT_NE(ReadFile(html).find("the server " + url_), std::string::npos);

  // submit: the local store's results are there already; nothing is sent twice.
  CliResult again = RunPipette({"--store", store_, "submit", "--server", url_});
  ASSERT_EQ(again.exit.code, 0) << again.err;
  EXPECT_NE(again.out.find("submitted 0, already there 2, rejected 0, pending 0"),
            std::string::npos)
      << again.out;
  EXPECT_EQ(ResultsOnServer(), 2);

  // Bad input: both a store and a server; a URL that is not one; a server nobody runs.
  CliResult both = RunPipette({"--store", store_, "results", "list", "--server", url_});
  EXPECT_EQ(both.exit.code, 2);
  EXPECT_NE(both.err.find("--store and --server both say where to read results; give one"),
            std::string::npos)
      << both.err;
  CliResult bad_url = RunPipette({"select", "--server", "127.0.0.1:8080"});
  EXPECT_EQ(bad_url.exit.code, 2);
  EXPECT_NE(bad_url.err.find("is not a server URL"), std::string::npos) << bad_url.err;
  StopServer();
  CliResult down = RunPipette({"results", "list", "--server", url_});
  EXPECT_EQ(down.exit.code, 1);
  EXPECT_NE(down.err.find("cannot reach " + url_), std::string::npos) << down.err;
  EXPECT_EQ(std::count(down.err.begin(), down.err.end(), '\n'), 1) << down.err;
}

TEST_F(FleetCliTest, AResultMadeWhileTheServerIsDownIsSentWhenItIsBack) {
  StartServer();
  ASSERT_EQ(RunPipette({"register", "--server", url_, "--preauth", NewKey()}).exit.code, 0);
  StopServer();

  // The measurement is stored and succeeds; the result waits in the outbox, said in one line.
  const std::string id = RunAndSubmit("Q8_0", "prefill_throughput_8");
  ASSERT_FALSE(id.empty());
  EXPECT_NE(last_err_.find("1 result not submitted yet (cannot reach " + url_), std::string::npos)
      << last_err_;
  const fs::path outbox = dir_ / "outbox" / ("127.0.0.1_" + std::to_string(port_));
  EXPECT_EQ(FilesIn(outbox), 1u);
  EXPECT_TRUE(fs::exists(outbox / (id + ".json")));

  // Back on the same port: `submit` sends what waited (and finds nothing else to send).
  StartServer(port_);
  CliResult sent = RunPipette({"--store", store_, "submit", "--server", url_});
  ASSERT_EQ(sent.exit.code, 0) << sent.err;
  EXPECT_NE(sent.out.find("submitted 1, already there 0, rejected 0, pending 0"), std::string::npos)
      << sent.out;
  EXPECT_EQ(FilesIn(outbox), 0u);
  EXPECT_EQ(ResultsOnServer(), 1);
}

TEST_F(FleetCliTest, PendingClientsAndSpentKeysAreTold) {
  StartServer();
  // Without a key the device waits for the operator; its submissions wait with it.
  CliResult pending = RunPipette({"register", "--server", url_});
  ASSERT_EQ(pending.exit.code, 0) << pending.err;
  EXPECT_NE(pending.out.find("status: pending; ask the operator: pipette serve clients approve pc_"),
            std::string::npos)
      << pending.out;
  const std::string id = RunAndSubmit("Q8_0", "prefill_throughput_8");
  ASSERT_FALSE(id.empty());
  EXPECT_NE(last_err_.find("pending approval"), std::string::npos) << last_err_;
  EXPECT_EQ(ResultsOnServer(), 0);

  // A key spent by one device is refused to another (exit 2, one line).
  const std::string key = NewKey();
  ASSERT_EQ(RunPipette({"register", "--server", url_, "--preauth", key, "--identity",
                        (dir_ / "other.json").string()})
                .exit.code,
            0);
  CliResult spent = RunPipette({"register", "--server", url_, "--preauth", key, "--identity",
                                (dir_ / "third.json").string()});
  EXPECT_EQ(spent.exit.code, 2);
  EXPECT_NE(spent.err.find("pre-authorization key is unknown, expired or spent"), std::string::npos)
      << spent.err;
  EXPECT_EQ(std::count(spent.err.begin(), spent.err.end(), '\n'), 1) << spent.err;
}

// The fleet database on a real filesystem that fills up: a 4 MiB tmpfs (mounting needs root, as
// CI has; elsewhere the test skips and the quota test below covers the same path), filled by
// another file.
TEST_F(FleetCliTest, AFullDiskRefusesTheSubmissionAndItIsDeliveredOnceSpaceIsFreed) {
  const fs::path disk = dir_ / "disk";
  fs::create_directories(disk);
  if (mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=4m") != 0) {
    GTEST_SKIP() << "cannot mount a small tmpfs at " << disk << " (" << std::strerror(errno)
                 << "; needs root): the full-disk quota test covers the same refusal";
  }
  struct Unmount {
    fs::path at;
    ~Unmount() { umount2(at.c_str(), MNT_DETACH); }
  } unmount{disk};
  db_ = (disk / "fleet.db").string();
  StartServer();
  const fs::path filler = disk / "filler";
  FullDiskRefusesThenDelivers(
      [&] {
        // Every free block taken: the next write under the database fails with ENOSPC.
        std::ofstream out(filler, std::ios::binary);
        const std::string block(4096, 'x');
        while (out.write(block.data(), static_cast<std::streamsize>(block.size())) && out.flush()) {
        }
      },
      [&] { fs::remove(filler); });
}

// The same with the quota of `pipette serve --db-max-size` (always available): the server
// restarted with a quota one page above the database's size, then without it.
TEST_F(FleetCliTest, AFullQuotaRefusesTheSubmissionLikeAFullDisk) {
  StartServer();
  FullDiskRefusesThenDelivers(
      [&] {
        StopServer();  // the last connection closed: the WAL is folded into the file
        const auto size = static_cast<int64_t>(fs::file_size(db_));
        StartServer(port_, {"--db-max-size", std::to_string(size + 4096)});
      },
      [&] {
        StopServer();
        StartServer(port_);
      });
}

TEST_F(FleetCliTest, SuiteRunSubmitsEachCellAndNoIdentityStopsBeforeMeasuring) {
  StartServer();
  // Before `register` there is no identity: refused before anything is measured (exit 2).
  CliResult early = RunPipette({"--store", store_, "run", "--model", Stories260K("Q8_0"),
                                "--benchmark", "prefill_throughput_8", "--submit", url_});
  EXPECT_EQ(early.exit.code, 2);
  EXPECT_NE(early.err.find("no identity at " + identity_ + "; run pipette register --server " + url_),
            std::string::npos)
      << early.err;
  EXPECT_FALSE(fs::exists(store_)) << "nothing measured, nothing stored";

  ASSERT_EQ(RunPipette({"register", "--server", url_, "--preauth", NewKey()}).exit.code, 0);
  const fs::path suite = dir_ / "two.toml";
  std::ofstream(suite) << "name = \"two\"\nbenchmarks = [\"prefill_throughput_8\", "
                          "\"decode_throughput_8_8\"]\n[[models]]\npath = \""
                       << Stories260K("Q8_0") << "\"\n[[runtimes]]\nname = \"llamacpp\"\n"
                       << "settings = { threads = 1 }\n[harness]\nmin_reps = 2\nmax_reps = 2\n"
                       << "[readiness]\nwaive = [\"load\"]\n";
  CliResult run = RunPipette({"--store", store_, "suite", "run", suite.string(), "--submit", url_});
  ASSERT_EQ(run.exit.code, 0) << run.err;
  size_t submitted = 0;
  for (size_t p = run.err.find("pipette: submitted result "); p != std::string::npos;
       p = run.err.find("pipette: submitted result ", p + 1)) {
    ++submitted;
  }
  EXPECT_EQ(submitted, 2u) << run.err;
  EXPECT_EQ(ResultsOnServer(), 2);
  // A rerun skips the stored cells and sends nothing again.
  CliResult rerun = RunPipette({"--store", store_, "suite", "run", suite.string(), "--submit", url_});
  ASSERT_EQ(rerun.exit.code, 0) << rerun.err;
  EXPECT_EQ(ResultsOnServer(), 2);
}

}  // namespace
}  // namespace pipette::testing_models
