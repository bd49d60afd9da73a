// A fleet on this machine (issue 10, "Must show"): `pipette serve` on a temporary SQLite
// database, two `pipette worker`s registered with different labels, plans from real suite files
// of stories260K cells. Every cell is measured exactly once, each by a worker whose labels match;
// a worker killed (-9) mid-cell loses its lease and the other completes the job; the server
// killed (-9) while workers submit and restarted on the same database holds exactly the results
// the workers saw acknowledged, and the workers carry on by themselves. The same fleet on
// PostgreSQL (a fresh database on the test server of tests/support) with four workers claiming at
// once, the server killed and the database stopped under it; and a worker whose clock is ten
// minutes off (libfaketime), refused with the reason and keeping what it measured.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "cli_runner.h"
#include "model_fixtures.h"
#include "pipette/fleet_store.h"
#include "platform/driver_builds.h"
#include "platform/process.h"
#include "ssh_server.h"
#include "tests/support/free_port.h"
#ifdef PIPETTE_HAVE_TEST_POSTGRES
#include "tests/support/postgres_server.h"
#endif

namespace pipette::testing_models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Waits up to `seconds` for `done`, polling.
bool WaitFor(const std::function<bool()>& done, double seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

// A long-running pipette (serve or worker) whose stdout lines are collected by a thread.
class Running {
 public:
  // `prefix`: a launcher and its arguments before pipette (e.g. faketime), or none.
  Running(const std::vector<std::string>& args, const std::string& err_path,
          const std::vector<std::string>& prefix = {}) {
    std::vector<std::string> argv = prefix;
    argv.push_back(Binary("pipette"));
    argv.insert(argv.end(), args.begin(), args.end());
    auto child = ChildProcess::Start(argv, err_path);
    EXPECT_TRUE(child.ok()) << (child.ok() ? "" : child.error().message);
    if (!child.ok()) return;
    child_ = std::make_unique<ChildProcess>(std::move(*child));
    child_->CloseStdin();
    reader_ = std::thread([this] {
      while (auto line = child_->ReadLine()) {
        std::lock_guard<std::mutex> lock(mu_);
        lines_.push_back(*line);
      }
    });
  }
  ~Running() { Kill(SIGKILL); }

  void Kill(int sig) {
    if (!child_) return;
    child_->Kill(sig);
    if (reader_.joinable()) reader_.join();
    child_->Wait();
  }
  int Pid() const { return child_ ? child_->Pid() : -1; }
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  bool Said(const std::string& text) {
    for (const auto& l : Lines()) {
      if (l.find(text) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::unique_ptr<ChildProcess> child_;
  std::thread reader_;
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// The fleet on the backend named by the parameter: "sqlite" (a file in the test's folder) or
// "postgresql" (a fresh database on the test server; skipped with the reason when none can run).
class FleetTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (Stories260K("Q8_0").empty()) GTEST_SKIP() << SharedMissingReason();
    static int tests = 0;  // one folder per test, also when one process runs several
    dir_ = WorkDir() + "/fleet-" + std::to_string(getpid()) + "-" + std::to_string(tests++);
    fs::create_directories(dir_ + "/models");
    fs::copy_file(Stories260K("Q8_0"), dir_ + "/models/stories260K-Q8_0.gguf",
                  fs::copy_options::overwrite_existing);
    db_ = dir_ + "/fleet.db";
    if (GetParam() == "postgresql") {
#ifdef PIPETTE_HAVE_TEST_POSTGRES
      Result<std::string> url = pipette::testing::FreshPostgresDatabase();
      if (!url.ok()) GTEST_SKIP() << url.error().message;
      db_ = *url;
#else
      GTEST_SKIP() << "built without the PostgreSQL test server (tests/support)";
#endif
    }
    port_ = testing::FreePort();
    url_ = "http://127.0.0.1:" + std::to_string(port_);
    StartServer();
  }
  void TearDown() override {
    workers_.clear();
    server_.reset();
  }

  void StartServer() {
    static int n = 0;
    const std::string err = dir_ + "/serve-" + std::to_string(n++) + ".log";
    server_logs_.push_back(err);
    server_ = std::make_unique<Running>(
        std::vector<std::string>{"serve", "--listen", "127.0.0.1:" + std::to_string(port_), "--db",
                                 db_, "--lease", "5", "--rate-limit", "0"},
        err);
    ASSERT_TRUE(WaitFor(
        [&] {
          return server_->Said("listening on") ||
                 ReadFile(err).find("listening on") != std::string::npos;
        },
        20))
        << ReadFile(err);
  }

  // Registers identity `name` with `labels` through a pre-authorization key.
  std::string Register(const std::string& name, const std::string& labels) {
    CliResult key = RunPipette({"serve", "keys", "create", "--db", db_});
    EXPECT_EQ(key.exit.code, 0) << key.err;
    std::smatch m;
    static const std::regex token(R"(preauth_[0-9a-f]+\.[0-9a-f]+)");
    const std::string all = key.out + key.err;
    EXPECT_TRUE(std::regex_search(all, m, token)) << all;
    CliResult reg = RunPipette({"register", "--server", url_, "--preauth", m.str(), "--labels",
                                labels, "--identity", dir_ + "/" + name + ".json"});
    EXPECT_EQ(reg.exit.code, 0) << reg.err;
    static const std::regex id(R"(pc_[0-9a-f]{32})");
    EXPECT_TRUE(std::regex_search(reg.out, m, id)) << reg.out;
    return m.str();
  }

  // `prefix`: a launcher before pipette (faketime), or none; `extra`: more worker options.
  void StartWorker(const std::string& name, const std::string& labels,
                   const std::vector<std::string>& prefix = {},
                   const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--store", dir_ + "/" + name + ".db", "worker", "--server", url_,
                                     "--identity", dir_ + "/" + name + ".json", "--labels", labels,
                                     "--models", dir_ + "/models", "--outbox", Outbox(name), "--logs",
                                     dir_ + "/logs-" + name, "--lease", "5"};
    args.insert(args.end(), extra.begin(), extra.end());
    workers_[name] = std::make_unique<Running>(
        args, dir_ + "/" + name + "-" + std::to_string(restarts_++) + ".err", prefix);
  }
  std::string Outbox(const std::string& name) const { return dir_ + "/outbox-" + name; }
  std::string last_submit_out_;  // what the last SubmitPlan printed

  // Everything the servers started so far wrote to stderr (their request logs).
  std::string ServerLogs() {
    std::string all;
    for (const auto& path : server_logs_) all += ReadFile(path);
    return all;
  }

  // A suite of stories260K cells: the benchmarks given, tiny repetitions, readiness waived.
  // `tag`: the suite's label, a run tag ("" for none).
  std::string Suite(const std::string& name, const std::vector<std::string>& benchmarks, int reps,
                    const std::string& tag = "") {
    std::string list;
    for (const auto& b : benchmarks) list += (list.empty() ? "\"" : ", \"") + b + "\"";
    const std::string path = dir_ + "/" + name + ".toml";
    std::ofstream(path) << "name = \"" << name << "\"\nmode = \"matrix\"\nbenchmarks = [" << list
                        << "]\n" << (tag.empty() ? "" : "label = \"" + tag + "\"\n") << "[[models]]\npath = \"models/stories260K-Q8_0.gguf\"\n"
                        << "[[runtimes]]\nname = \"llamacpp\"\nsettings = { threads = 1 }\n"
                        << "[harness]\nwarmup_runs = 0\nmin_reps = " << reps
                        << "\nmax_reps = " << reps << "\nspin_up_ms = 0\n"
                        << "[readiness]\nwaive = [\"load\", \"thermal\", \"throttle\"]\n";
    return path;
  }

  std::string SubmitPlan(const std::string& suite, const std::string& label) {
    CliResult r =
        RunPipette({"--store", dir_ + "/submitter.db", "plan", "submit", suite, "--server", url_,
                    "--identity", dir_ + "/a.json", "--requires-label", label});
    EXPECT_EQ(r.exit.code, 0) << r.err;
    last_submit_out_ = r.out;
    std::smatch m;
    static const std::regex id(R"(plan (plan_[0-9a-f]+): (\d+) jobs)");
    EXPECT_TRUE(std::regex_search(r.out, m, id)) << r.out;
    return m[1].str();
  }

  json PlanStatus(const std::string& plan_id) {
    CliResult r = RunPipette(
        {"--json", "plan", "status", plan_id, "--server", url_, "--identity", dir_ + "/a.json"});
    if (r.exit.code != 0) return json();
    return json::parse(r.out, nullptr, false);
  }

  bool PlanDone(const std::string& plan_id, int jobs) {
    const json s = PlanStatus(plan_id);
    return s.is_object() && s["counts"].value("done", 0) == jobs;
  }

  // Every result_id any worker printed as acknowledged.
  std::set<std::string> Acknowledged() {
    std::set<std::string> ids;
    static const std::regex ack(R"(acknowledged ([0-9a-f-]{36}))");
    for (auto* lines : {&a_lines_, &b_lines_}) {
      for (const auto& l : *lines) {
        std::smatch m;
        if (std::regex_search(l, m, ack)) ids.insert(m[1].str());
      }
    }
    for (auto& [name, w] : workers_) {
      for (const auto& l : w->Lines()) {
        std::smatch m;
        if (std::regex_search(l, m, ack)) ids.insert(m[1].str());
      }
    }
    return ids;
  }

  int64_t ResultsInDb() {
    auto store = OpenFleetStore(db_);
    EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
    if (!store.ok()) return -1;
    auto n = (*store)->CountResults();
    return n.ok() ? *n : -1;
  }

  // Waits for `plan` to be done and for the database to hold exactly the results the workers
  // saw acknowledged (nothing lost, nothing stored unseen). `dump` says what the workers said.
  void AwaitPlanAndDeliveries(const std::string& plan, int jobs,
                              const std::function<std::string()>& dump) {
    ASSERT_TRUE(WaitFor([&] { return PlanDone(plan, jobs); }, 150))
        << PlanStatus(plan).dump() << dump();
    ASSERT_TRUE(
        WaitFor([&] { return static_cast<int64_t>(Acknowledged().size()) == ResultsInDb(); }, 60))
        << Acknowledged().size() << " acknowledged, " << ResultsInDb() << " in the database\n"
        << dump();
  }

  std::string Dump(const std::string& name) {
    std::string out;
    for (const auto& l : workers_[name]->Lines()) out += l + "\n";
    return out;
  }

  std::string dir_, db_, url_;
  std::vector<std::string> server_logs_;
  int port_ = 0;
  int restarts_ = 0;
  std::unique_ptr<Running> server_;
  std::map<std::string, std::unique_ptr<Running>> workers_;
  std::vector<std::string> a_lines_, b_lines_;  // of worker processes that were replaced
  std::string measured_;                         // a result_id a test made
};

TEST_P(FleetTest, PlansRunOnceOnMatchingWorkersAndSurviveKills) {
  const std::string id_a = Register("a", "A,shared");
  const std::string id_b = Register("b", "B,shared");
  ASSERT_NE(id_a, id_b);

  // 1. Thirty cells, half for label A and half for label B.
  std::vector<std::string> shapes;
  for (int p = 8; p <= 64; p += 8) shapes.push_back("prefill_throughput_" + std::to_string(p));
  for (int p = 8; p <= 56; p += 8)
    shapes.push_back("decode_throughput_" + std::to_string(p) + "_4");
  ASSERT_EQ(shapes.size(), 15u);
  const std::string suite = Suite("fifteen", shapes, 2);
  const std::string plan_a = SubmitPlan(suite, "A");
  // No worker has connected yet: said once for the fifteen jobs, not fifteen times.
  EXPECT_NE(last_submit_out_.find("15 jobs are unassignable: no device has offered itself yet"),
            std::string::npos)
      << last_submit_out_;
  EXPECT_EQ(last_submit_out_.find("job 0 (prefill_throughput_8) is unassignable"), std::string::npos)
      << last_submit_out_;
  const std::string plan_b = SubmitPlan(suite, "B");
  StartWorker("a", "A,shared");
  StartWorker("b", "B,shared");
  ASSERT_TRUE(WaitFor([&] { return PlanDone(plan_a, 15) && PlanDone(plan_b, 15); }, 120))
      << PlanStatus(plan_a).dump() << "\n"
      << Dump("a") << Dump("b");
  for (const auto& [plan, who] : {std::pair{plan_a, id_a}, std::pair{plan_b, id_b}}) {
    const json s = PlanStatus(plan);
    ASSERT_EQ(s["jobs"].size(), 15u);
    for (const json& job : s["jobs"]) {
      EXPECT_EQ(job["state"], "done");
      EXPECT_EQ(job["client_id"], who) << job.dump();
      EXPECT_EQ(job["attempts"], 1) << job.dump();
    }
  }
  ASSERT_TRUE(WaitFor([&] { return Acknowledged().size() == 30u; }, 30)) << Dump("a") << Dump("b");
  EXPECT_EQ(ResultsInDb(), 30);

  // 2. A long cell for either worker; the one that claims it is killed mid-cell. Its lease
  // expires and the other worker completes the job. (100 repetitions: seconds, so the kill half
  // a second in lands mid-cell, and the survivor's whole run fits the wait on a loaded machine.)
  const std::string long_plan =
      SubmitPlan(Suite("long", {"decode_throughput_64_128"}, 120), "shared");
  std::string victim;
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const auto& name : {"a", "b"}) {
          if (workers_[name]->Said("(decode_throughput_64_128) of plan " + long_plan)) {
            victim = name;
            return true;
          }
        }
        return false;
      },
      30));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // mid-cell
  ASSERT_FALSE(PlanDone(long_plan, 1)) << "the long cell ended before the kill; make it longer";
  const auto victim_lines = workers_[victim]->Lines();
  (victim == "a" ? a_lines_ : b_lines_) = victim_lines;
  workers_[victim]->Kill(SIGKILL);
  const std::string survivor_id = victim == "a" ? id_b : id_a;
  // The survivor runs the whole cell after the lease expired: minutes on a busy machine.
  ASSERT_TRUE(WaitFor([&] { return PlanDone(long_plan, 1); }, 300)) << PlanStatus(long_plan).dump();
  const json long_status = PlanStatus(long_plan);
  EXPECT_EQ(long_status["jobs"][0]["client_id"], survivor_id);
  EXPECT_EQ(long_status["jobs"][0]["attempts"], 2);
  // The killed worker comes back (same identity, outbox and store).
  StartWorker(victim, victim == "a" ? "A,shared" : "B,shared");

  // 3. The server killed while workers submit, then restarted on the same database.
  std::vector<std::string> many;
  for (int p = 8; p <= 160; p += 8) many.push_back("prefill_throughput_" + std::to_string(p));
  const size_t acked_before = Acknowledged().size();
  const std::string busy_plan = SubmitPlan(Suite("busy", many, 10), "shared");
  ASSERT_TRUE(WaitFor([&] { return Acknowledged().size() >= acked_before + 4; }, 60));
  server_->Kill(SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  StartServer();
  // Every acknowledged result is there, and nothing else: count in the database = acknowledged.
  AwaitPlanAndDeliveries(busy_plan, static_cast<int>(many.size()),
                         [&] { return Dump("a") + Dump("b"); });
  if (HasFatalFailure()) return;
  EXPECT_EQ(ResultsInDb(), static_cast<int64_t>(30 + 1 + many.size()));
  // The workers said they lost the server and carried on.
  bool said_unreachable = false;
  for (const auto& name : {"a", "b"}) said_unreachable |= workers_[name]->Said("cannot reach");
  EXPECT_TRUE(said_unreachable) << Dump("a") << Dump("b");
}

TEST_P(FleetTest, UnreachableServerIsRetriedAndAModelNoDeviceHasIsUnassignable) {
  Register("a", "A");
  // Nothing listens there: the worker says so and retries, backing off.
  const std::string saved_url = url_;
  url_ = "http://127.0.0.1:" + std::to_string(testing::FreePort());
  StartWorker("a", "A");
  ASSERT_TRUE(WaitFor([&] { return workers_["a"]->Said("retrying in 2 s"); }, 20)) << Dump("a");
  EXPECT_TRUE(workers_["a"]->Said("cannot reach " + url_)) << Dump("a");
  workers_["a"]->Kill(SIGTERM);
  url_ = saved_url;

  // The worker offers stories260K-Q8_0 only; a plan on Q4_0 finds no device.
  StartWorker("a", "A");
  ASSERT_TRUE(WaitFor([&] { return workers_["a"]->Said("no job for this worker"); }, 20))
      << Dump("a");
  fs::copy_file(Stories260K("Q4_0"), dir_ + "/stories260K-Q4_0.gguf");
  const std::string suite = dir_ + "/other.toml";
  std::ofstream(suite) << "name = \"other\"\nbenchmarks = [\"prefill_throughput_8\"]\n"
                       << "[[models]]\npath = \"stories260K-Q4_0.gguf\"\n"
                       << "[[runtimes]]\nname = \"llamacpp\"\n";
  CliResult r = RunPipette({"--store", dir_ + "/submitter.db", "plan", "submit", suite, "--server",
                            url_, "--identity", dir_ + "/a.json", "--requires-label", "A"});
  ASSERT_EQ(r.exit.code, 0) << r.err;
  EXPECT_NE(r.out.find("job 0 (prefill_throughput_8) is unassignable: "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 job(s) match no registered device yet"), std::string::npos) << r.out;
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_FALSE(workers_["a"]->Said("claimed job")) << Dump("a");
}

// Four workers with the same labels started at once on a plan of small cells: every job is done
// exactly once (one attempt, its own result), the jobs spread over the workers; the server
// killed (-9) while they submit and restarted on the same database holds exactly what they saw
// acknowledged. On PostgreSQL the database is also stopped under the running server: the server
// answers 503 "the database is not answering; retry later" (never "internal error"), the
// workers keep their results in their outboxes and deliver them once it is back.
// The tests above run on SQLite; this one on both backends.
class FleetOnEachBackend : public FleetTest {};

TEST_P(FleetOnEachBackend, FourWorkersClaimAtOnceEachJobOnceAndNothingIsLostToKillsOrOutages) {
  const std::vector<std::string> names = {"w0", "w1", "w2", "w3"};
  std::set<std::string> ids;
  for (const auto& name : names) ids.insert(Register(name, "fleet"));
  ASSERT_EQ(ids.size(), 4u);
  // a.json signs the plans (any approved identity may).
  fs::copy_file(dir_ + "/w0.json", dir_ + "/a.json");

  std::vector<std::string> cells;
  for (int p = 8; p <= 160; p += 8) cells.push_back("prefill_throughput_" + std::to_string(p));
  const int jobs = static_cast<int>(cells.size());
  const std::string plan = SubmitPlan(Suite("twenty", cells, 2), "fleet");
  for (const auto& name : names) StartWorker(name, "fleet");
  const auto dump_all = [&] {
    std::string out;
    for (const auto& name : names) out += "--- " + name + "\n" + Dump(name);
    return out;
  };
  ASSERT_TRUE(WaitFor([&] { return PlanDone(plan, jobs); }, 150))
      << PlanStatus(plan).dump() << "\n" << dump_all();
  const json status = PlanStatus(plan);
  ASSERT_EQ(status["jobs"].size(), cells.size());
  std::set<std::string> result_ids;
  std::map<std::string, int> per_worker;
  for (const json& job : status["jobs"]) {
    EXPECT_EQ(job["state"], "done") << job.dump();
    EXPECT_EQ(job["attempts"], 1) << job.dump();
    result_ids.insert(job["result_id"].get<std::string>());
    ++per_worker[job["client_id"].get<std::string>()];
  }
  EXPECT_EQ(result_ids.size(), cells.size()) << status.dump();
  ASSERT_TRUE(WaitFor([&] { return Acknowledged().size() == cells.size(); }, 30)) << dump_all();
  EXPECT_EQ(Acknowledged(), result_ids);
  EXPECT_EQ(ResultsInDb(), jobs);
  // Spread: started together, at least three of the four took jobs (all four, normally; a worker
  // that starts a little late on a busy machine may find the queue drained).
  std::string spread;
  for (const auto& [who, n] : per_worker) spread += who + ": " + std::to_string(n) + "; ";
  EXPECT_GE(per_worker.size(), 3u) << spread;
  std::cout << "jobs per worker: " << spread << std::endl;

  // The server killed (-9) while the workers submit, restarted on the same database.
  const size_t acked_before = Acknowledged().size();
  const std::string busy = SubmitPlan(Suite("busy", cells, 10), "fleet");
  ASSERT_TRUE(WaitFor([&] { return Acknowledged().size() >= acked_before + 4; }, 60)) << dump_all();
  server_->Kill(SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  StartServer();
  AwaitPlanAndDeliveries(busy, jobs, dump_all);
  if (HasFatalFailure()) return;
  EXPECT_EQ(ResultsInDb(), 2 * jobs);

  if (GetParam() != "postgresql") return;
#ifdef PIPETTE_HAVE_TEST_POSTGRES
  // The database stopped under the running server while the workers measure and submit.
  const size_t acked_mid = Acknowledged().size();
  // Cells long enough (200 repetitions) that the workers are still measuring when the database
  // stops after the first acknowledgement: with 10, four workers finished the whole plan first
  // once on a busy machine, and nothing had to wait.
  const std::string outage = SubmitPlan(Suite("outage", cells, 200), "fleet");
  ASSERT_TRUE(WaitFor([&] { return Acknowledged().size() >= acked_mid + 1; }, 60)) << dump_all();
  ASSERT_TRUE(pipette::testing::StopTestPostgres().ok());
  const std::string not_answering =
      "server error (503): the database is not answering; retry later";
  const auto a_worker_said = [&](const std::string& text) {
    for (const auto& name : names) {
      if (workers_[name]->Said(text)) return true;
    }
    return false;
  };
  // What a worker finishes meanwhile waits in its outbox; the database comes back right then,
  // before most leases (5 s) could expire.
  const bool waited =
      WaitFor([&] { return a_worker_said("wait in the outbox: " + not_answering); }, 30);
  const size_t acked_during = Acknowledged().size();
  ASSERT_TRUE(pipette::testing::StartTestPostgres().ok());
  EXPECT_TRUE(waited) << dump_all();
  AwaitPlanAndDeliveries(outage, jobs, dump_all);
  if (HasFatalFailure()) return;
  // A lease that expired during the outage sends its job to another worker: that is a second
  // measurement (its own result_id), not a doubled record; none is lost.
  EXPECT_GE(ResultsInDb(), 3 * jobs);
  EXPECT_GT(Acknowledged().size(), acked_during) << "the waiting results were delivered";
  for (const auto& name : names) {
    size_t waiting = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(Outbox(name), ec)) waiting += e.is_regular_file();
    EXPECT_EQ(waiting, 0u) << name << "'s outbox still holds results\n" << Dump(name);
  }
  const std::string logs = ServerLogs();
  EXPECT_NE(logs.find("the database is not answering; retry later"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("internal error"), std::string::npos) << logs;
#endif
}

// A worker whose clock is ten minutes behind (libfaketime, as a real device with a wrong clock):
// every request it signs is refused (401) with the reason; it says so in one line and retries
// with backoff; what it measured waits in its outbox and is delivered once its clock is right.
TEST_P(FleetTest, AWorkerTenMinutesOffIsRefusedWithTheReasonAndKeepsWhatItMeasured) {
  // libfaketime preloaded by env, which execs pipette itself: the `faketime` command would fork
  // and wait, and a signal to it would orphan the worker.
  std::string lib;
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"}) {
    const std::string candidate = std::string(dir) + "/faketime/libfaketime.so.1";
    if (lib.empty() && access(candidate.c_str(), R_OK) == 0) lib = candidate;
  }
  if (lib.empty()) {
    GTEST_SKIP() << "libfaketime.so.1 is missing; install the faketime package (scripts/deps.sh "
                 << "--test)";
  }
  // The monotonic clock stays real: only the wall clock (what requests are signed with) is off.
  const std::vector<std::string> ten_minutes_behind = {
      "/usr/bin/env", "LD_PRELOAD=" + lib, "FAKETIME=-10m", "FAKETIME_DONT_FAKE_MONOTONIC=1"};
  Register("a", "A");
  // A cell measured on that device, submitted through the worker's outbox: refused, kept.
  {
    std::vector<std::string> argv = ten_minutes_behind;
    for (const std::string& arg :
         {Binary("pipette"), std::string("--store"), dir_ + "/a.db", std::string("--json"),
          std::string("run"), std::string("-q"), std::string("--model"),
          dir_ + "/models/stories260K-Q8_0.gguf", std::string("--benchmark"),
          std::string("prefill_throughput_8"), std::string("--threads"), std::string("1"),
          std::string("--min-reps"), std::string("2"), std::string("--max-reps"), std::string("2"),
          std::string("--no-readiness-load"), std::string("--submit"), url_}) {
      argv.push_back(arg);
    }
    setenv("PIPETTE_IDENTITY", (dir_ + "/a.json").c_str(), 1);
    setenv("PIPETTE_OUTBOX", (dir_ + "/outboxes").c_str(), 1);
    auto run = ChildProcess::Start(argv, dir_ + "/run.err");
    unsetenv("PIPETTE_IDENTITY");
    unsetenv("PIPETTE_OUTBOX");
    ASSERT_TRUE(run.ok()) << run.error().message;
    run->CloseStdin();
    std::string out;
    while (auto line = run->ReadLine()) out += *line + "\n";
    const std::optional<ExitInfo> exit = run->Wait();
    const std::string err = ReadFile(dir_ + "/run.err");
    ASSERT_TRUE(exit.has_value());
    ASSERT_EQ(exit->code, 0) << err;
    EXPECT_NE(err.find("fix the device's clock"), std::string::npos) << err;
    const json record = json::parse(out, nullptr, false);
    ASSERT_TRUE(record.is_object()) << out;
    measured_ = record.value("result_id", "");
  }
  ASSERT_FALSE(measured_.empty());
  EXPECT_EQ(ResultsInDb(), 0);
  // That outbox is the worker's: the default one of `run --submit` for this server.
  const std::string outbox = dir_ + "/outboxes/127.0.0.1_" + std::to_string(port_);
  ASSERT_TRUE(fs::exists(outbox + "/" + measured_ + ".json")) << outbox;
  fs::rename(outbox, Outbox("a"));

  StartWorker("a", "A", ten_minutes_behind);
  const std::string refused =
      "s away from the server's clock (window +-300 s); fix the device's clock; retrying in ";
  ASSERT_TRUE(WaitFor([&] { return workers_["a"]->Said(refused + "4 s"); }, 30)) << Dump("a");
  // One line says the refusal, the reason and the retry; the wait grows (1, 2, 4 s).
  bool one_line = false;
  for (const auto& l : workers_["a"]->Lines()) {
    one_line |= l.find("claim refused: server refused (401): timestamp ") != std::string::npos &&
                l.find(refused + "1 s") != std::string::npos;
  }
  EXPECT_TRUE(one_line) << Dump("a");
  EXPECT_TRUE(workers_["a"]->Said(refused + "2 s")) << Dump("a");
  EXPECT_TRUE(workers_["a"]->Said("1 result(s) wait in the outbox: server refused (401)"))
      << Dump("a");
  EXPECT_EQ(ResultsInDb(), 0);
  workers_["a"]->Kill(SIGTERM);
  EXPECT_TRUE(workers_["a"]->Said("1 result(s) wait in the outbox")) << Dump("a");
  ASSERT_TRUE(fs::exists(Outbox("a") + "/" + measured_ + ".json"));

  // The clock fixed: the same worker delivers what waited.
  a_lines_ = workers_["a"]->Lines();
  StartWorker("a", "A");
  ASSERT_TRUE(WaitFor([&] { return workers_["a"]->Said("acknowledged " + measured_); }, 30))
      << Dump("a");
  EXPECT_EQ(ResultsInDb(), 1);
  EXPECT_FALSE(fs::exists(Outbox("a") + "/" + measured_ + ".json"));
}

const auto kBackendName = [](const auto& info) { return info.param; };
// Issue 23: a host drives another device as a fleet worker (`worker --device ssh://...`): here an
// aarch64 "board" (the aarch64 device build under qemu-user, behind a throwaway sshd), beside a
// worker on this machine. Each plan is done by its device, and the dashboard's devices page,
// rendered by headless Chromium, lists both devices (the emulated one flagged).
TEST_P(FleetTest, AWorkerOnThisHostMeasuresABoardOverSsh) {
  const std::string driver =
      DeviceDriverFolder() + "/aarch64-linux/armv8-a/pipette-llamacpp-driver";
  if (access("/proc/sys/fs/binfmt_misc/qemu-aarch64", R_OK) != 0 || access(driver.c_str(), R_OK) != 0) {
    GTEST_SKIP() << "needs the aarch64 device build (scripts/build-device.sh --target aarch64-linux "
                    "--cpu armv8-a) and binfmt support for it (scripts/deps.sh --test)";
  }
  std::string why;
  auto sshd = SshServer::Start(&why);
  if (!sshd) GTEST_SKIP() << why;
  setenv("PIPETTE_SSH_CONFIG", sshd->ClientConfig().c_str(), 1);
  Register("a", "A");
  // The board's identity, registered with the board's own fingerprint.
  {
    CliResult key = RunPipette({"serve", "keys", "create", "--db", db_});
    std::smatch m;
    const std::string all = key.out + key.err;
    ASSERT_TRUE(std::regex_search(all, m, std::regex(R"(preauth_[0-9a-f]+\.[0-9a-f]+)"))) << all;
    CliResult reg = RunPipette({"register", "--server", url_, "--preauth", m.str(), "--labels",
                                "BOARD", "--label", "board-1", "--identity", dir_ + "/board.json",
                                "--device", sshd->Uri(), "--driver", driver});
    ASSERT_EQ(reg.exit.code, 0) << reg.err;
  }
  StartWorker("a", "A");
  StartWorker("board", "BOARD", {}, {"--device", sshd->Uri(), "--driver", driver});
  const std::string on_host = SubmitPlan(Suite("host", {"prefill_throughput_8"}, 2), "A");
  const std::string on_board = SubmitPlan(
      Suite("board", {"prefill_throughput_8", "decode_throughput_8_8"}, 2, "edge-plan"), "BOARD");
  ASSERT_TRUE(WaitFor([&] { return PlanDone(on_host, 1) && PlanDone(on_board, 2); }, 240))
      << PlanStatus(on_board).dump() << Dump("board");
  ASSERT_TRUE(WaitFor([&] { return ResultsInDb() == 3; }, 60)) << Dump("board");
  // Every board result was measured there: aarch64, emulated, through ssh.
  auto store = OpenFleetStore(db_);
  ASSERT_TRUE(store.ok());
  auto page = (*store)->ListResults(ResultFilter{}, 10, "", ListOptions{});
  ASSERT_TRUE(page.ok());
  std::set<std::string> devices;
  std::string board_device;
  int board_results = 0;
  for (const auto& fr : page->rows) {
    auto rec = (*store)->GetResult(fr.row.result_id);
    ASSERT_TRUE(rec.ok() && *rec);
    const json& d = (**rec)["device"];
    devices.insert(d["id"].get<std::string>());
    if (d.value("transport", "") == "ssh") {
      ++board_results;
      board_device = d["id"];
      EXPECT_EQ(d["os"]["arch"], "aarch64");
      EXPECT_EQ(d["emulated"], true);
      EXPECT_EQ(d["name"], "board-1");   // the name it registered with: one name per device
      EXPECT_EQ(d["label"], "edge-plan");  // the plan's run tag, a field of its own
      EXPECT_EQ((**rec)["status"], "ok") << (**rec)["failure"].dump();
    }
  }
  EXPECT_EQ(board_results, 2);
  EXPECT_EQ(devices.size(), 2u);
  // The devices page in headless Chromium: both devices listed, the board flagged as emulated.
  const std::string chromium = FindOnPath("chromium");
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/deps.sh --test)";
  const std::string png = dir_ + "/devices.png";
  const std::vector<std::string> common = {chromium, "--headless", "--no-sandbox", "--disable-gpu",
                                           "--no-first-run", "--disable-background-networking",
                                           "--disable-component-update", "--disable-sync",
                                           "--user-data-dir=" + dir_ + "/chromium-profile",
                                           "--window-size=1280,800"};
  std::vector<std::string> dump = common;
  dump.insert(dump.end(), {"--dump-dom", url_ + "/devices"});
  auto dom = RunCommand(dump, std::chrono::seconds(60));
  ASSERT_TRUE(dom.ok());
  for (const std::string& id : devices) {
    EXPECT_NE(dom->out.find("data-device=\"" + id + "\""), std::string::npos) << id;
  }
  // The board's row: flagged emulated, and its registered client is the board's identity.
  const size_t row = dom->out.find("data-device=\"" + board_device + "\"");
  ASSERT_NE(row, std::string::npos);
  const std::string board_row = dom->out.substr(row, dom->out.find("</tr>", row) - row);
  EXPECT_NE(board_row.find("emulated (not the hardware"), std::string::npos) << board_row;
  // One name for the device: the one it registered with, never the plan's run tag, which has a
  // column of its own; the leaderboard and `serve clients list` say the same.
  EXPECT_NE(board_row.find(">board-1</a>"), std::string::npos) << board_row;
  EXPECT_NE(board_row.find("<td>edge-plan</td>"), std::string::npos) << board_row;
  std::vector<std::string> board = common;
  board.insert(board.end(), {"--dump-dom", url_ + "/?device=" + board_device});
  auto leaderboard = RunCommand(board, std::chrono::seconds(60));
  ASSERT_TRUE(leaderboard.ok());
  EXPECT_NE(leaderboard->out.find(">board-1</a>"), std::string::npos) << leaderboard->out;
  EXPECT_EQ(leaderboard->out.find(">edge-plan</a>"), std::string::npos);
  const CliResult clients = RunPipette({"serve", "clients", "list", "--db", db_});
  EXPECT_NE(clients.out.find("board-1"), std::string::npos) << clients.out;
  std::vector<std::string> shot = common;
  shot.insert(shot.end(), {"--screenshot=" + png, url_ + "/devices"});
  auto taken = RunCommand(shot, std::chrono::seconds(60));
  ASSERT_TRUE(taken.ok());
  const std::string image = ReadFile(png);
  ASSERT_GT(image.size(), 5000u) << "no screenshot: " << taken->err;
  EXPECT_EQ(image.substr(1, 3), "PNG");
  std::cout << "devices page screenshot: " << png << std::endl;
  unsetenv("PIPETTE_SSH_CONFIG");
}

// `pipette decide --server` (issue 26): the funnel's stages run as plans that a worker of the
// fleet claims; the funnel judges between them on the records it copies back. Interrupted while
// its first plan waits for a worker, the same command waits for that plan instead of submitting
// it again; run again when done, it submits nothing.
TEST_P(FleetTest, DecideRunsItsStagesAsPlansAndResumesAWaitingPlan) {
  Register("a", "A");
  fs::copy_file(Stories260K("Q4_0"), dir_ + "/models/stories260K-Q4_0.gguf");
  const std::string file = dir_ + "/decide.toml";
  std::ofstream(file) << "name = \"fleet-decide\"\n"
                      << "benchmarks = [\"max_memory_usage_8\", \"decode_throughput_8_8\"]\n"
                      << "[[models]]\npath = \"models/stories260K-Q8_0.gguf\"\n"
                      << "[[models]]\npath = \"models/stories260K-Q4_0.gguf\"\n"
                      << "[[runtimes]]\nname = \"llamacpp\"\nsettings = { threads = 1 }\n"
                      << "[harness]\nwarmup_runs = 0\nmin_reps = 3\nmax_reps = 5\nspin_up_ms = 0\n"
                      << "[readiness]\nwaive = [\"load\", \"thermal\", \"throttle\"]\n"
                      << "[decision]\nobjectives = [\"decode\", \"memory\"]\n"
                      << "[decision.measure]\nrounds = 1\n"
                      << "[decision.stabilize]\nfinalists = 1\nsoak = \"soak_8_8_1\"\n";
  const std::string state = dir_ + "/decide-state.json";
  const std::vector<std::string> args = {"--store", dir_ + "/decider.db", "decide", file,
                                         "--server", url_, "--identity", dir_ + "/a.json",
                                         "--requires-label", "A", "--state", state};
  auto read_state = [&] {
    std::ifstream in(state);
    return json::parse(in, nullptr, false);
  };

  // No worker yet: the first plan waits; Ctrl-C leaves it on the server, recorded in the state.
  CliResult first = RunPipette(args, [&](int pid, const std::string& err) {
    WaitFor([&] { return ReadFile(err).find("screen: plan plan_") != std::string::npos; }, 60);
    kill(pid, SIGINT);
  });
  EXPECT_EQ(first.exit.code, 130) << first.err;
  EXPECT_NE(first.err.find("match no registered worker yet"), std::string::npos) << first.err;
  const json interrupted = read_state();
  ASSERT_EQ(interrupted["plans"].size(), 1u) << interrupted.dump(2);
  const std::string waiting = interrupted["plans"][0]["plan_id"];
  EXPECT_EQ(interrupted["cells"].size(), 0u);

  StartWorker("a", "A");
  CliResult done = RunPipette(args);
  ASSERT_EQ(done.exit.code, 0) << done.out << done.err << Dump("a");
  EXPECT_NE(done.out.find("chosen: stories260K-"), std::string::npos) << done.out;
  const json s = read_state();
  // The waiting plan was picked up, not submitted again; then one plan per batch of cells: each
  // screen benchmark, the measure's (where still undecided), the soak.
  EXPECT_EQ(s["plans"][0]["plan_id"], waiting) << s["plans"].dump(2);
  std::set<std::string> stages, keys;
  for (const json& p : s["plans"]) {
    stages.insert(p["stage"].get<std::string>());
    for (const json& k : p["keys"]) EXPECT_TRUE(keys.insert(k.get<std::string>()).second) << k;
  }
  EXPECT_TRUE(stages.count("screen") && stages.count("stabilize")) << s["plans"].dump(2);
  // Every cell came from the fleet: stored on the server and copied into the local store, with
  // the worker's wall time as device time.
  auto server = OpenFleetStore(db_);
  ASSERT_TRUE(server.ok());
  int cells = 0;
  for (const json& c : s["cells"]) {
    ++cells;
    EXPECT_TRUE(keys.count(c["key"].get<std::string>())) << "not run by a plan: " << c.dump();
    EXPECT_EQ(c["status"], "ok") << c.dump();
    EXPECT_GT(c["seconds"].get<double>(), 0) << c.dump();
    CliResult shown = RunPipette({"--store", dir_ + "/decider.db", "--json", "results", "show",
                                  c["result_id"].get<std::string>()});
    EXPECT_EQ(shown.exit.code, 0) << shown.err;
    const json record = json::parse(shown.out, nullptr, false);
    EXPECT_EQ(record.value("benchmark", json::object()).value("id", ""), c["benchmark"]);
  }
  EXPECT_GE(cells, 5);  // 2 configurations x 2 screen benchmarks, then the soak
  auto on_server = (*server)->CountResults();
  ASSERT_TRUE(on_server.ok());
  EXPECT_GE(*on_server, cells);
  EXPECT_EQ(s["verdict"]["final"], true);
  EXPECT_EQ(s["verdict"]["stages"][2]["cells"], 1);  // the finalist's soak

  // Everything is done: the same command again submits nothing and says the same.
  const size_t plans = s["plans"].size();
  CliResult again = RunPipette(args);
  EXPECT_EQ(again.exit.code, 0) << again.err;
  EXPECT_EQ(read_state()["plans"].size(), plans);
  EXPECT_EQ(again.out.substr(again.out.find("chosen: ")),
            done.out.substr(done.out.find("chosen: ")));

  // Bad input: --device with --server, requirements without a server.
  CliResult both = RunPipette({"decide", file, "--server", url_, "--device", "local"});
  EXPECT_EQ(both.exit.code, 2) << both.err;
  EXPECT_NE(both.err.find("--requires-label"), std::string::npos) << both.err;
  CliResult no_server = RunPipette({"decide", file, "--requires-label", "A"});
  EXPECT_EQ(no_server.exit.code, 2) << no_server.err;
  EXPECT_NE(no_server.err.find("give --server too"), std::string::npos) << no_server.err;
}

INSTANTIATE_TEST_SUITE_P(Sqlite, FleetTest, ::testing::Values("sqlite"), kBackendName);
INSTANTIATE_TEST_SUITE_P(Backends, FleetOnEachBackend, ::testing::Values("sqlite", "postgresql"),
                         kBackendName);

}  // namespace
}  // namespace pipette::testing_models
