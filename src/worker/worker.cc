// The pull worker (pipette/worker.h): claim, heartbeat, run, store, submit, repeat.
#include "pipette/worker.h"

#include <fmt/format.h>
#include <sys/utsname.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "base/ids.h"
#include "pipette/cell.h"
#include "pipette/fleet_client.h"
#include "pipette/fleet_plan.h"
#include "pipette/identity.h"
#include "pipette/runtimes.h"
#include "pipette/store.h"
#include "platform/device_access.h"
#include "platform/interrupt.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Arch() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.machine) : std::string();
}

int64_t MemTotalBytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    int64_t kb = 0;
    std::string unit;
    in >> kb >> unit;
    if (key == "MemTotal:") return kb * 1024;
  }
  return 0;
}

// "20261201T030501Z": the UTC second, for log file names.
std::string CompactUtcNow() {
  std::string t = NowRfc3339().substr(0, 19);
  std::erase(t, '-');
  std::erase(t, ':');
  return t + "Z";
}

// Extends the lease every `interval` seconds on its own thread while a cell runs. A lost lease
// is said once; the run goes on (its record is still stored and submitted: the server keeps it).
class Heartbeat {
 public:
  Heartbeat(const FleetHttpClient& client, std::string job_id, double interval,
            const std::function<void(const std::string&)>& say)
      : client_(client), job_id_(std::move(job_id)), interval_(interval), say_(say) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Heartbeat() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  bool lost() const { return lost_; }

 private:
  void Loop() {
    bool unreachable_said = false;
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (cv_.wait_for(lock, std::chrono::duration<double>(interval_), [this] { return stop_; })) {
        return;
      }
      lock.unlock();
      FleetResult r = client_.Heartbeat(job_id_);
      lock.lock();
      if (r.ok()) {
        unreachable_said = false;
        continue;
      }
      if (r.error().kind == FleetFailure::kRejected) {
        lost_ = true;
        say_(fmt::format("lease of job {} lost ({}); the result will still be submitted", job_id_,
                         r.error().message));
        return;
      }
      if (!unreachable_said) {
        say_(fmt::format("heartbeat of job {}: {}; the cell goes on", job_id_, r.error().message));
        unreachable_said = true;
      }
    }
  }

  const FleetHttpClient& client_;
  const std::string job_id_;
  const double interval_;
  const std::function<void(const std::string&)>& say_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<bool> lost_{false};
  std::thread thread_;
};

class Worker {
 public:
  Worker(const WorkerOptions& options, const WorkerHooks& hooks) : o_(options) {
    // The heartbeat thread speaks too: one line at a time.
    say_ = [line = hooks.line, mu = std::make_shared<std::mutex>()](const std::string& text) {
      if (!line) return;
      std::lock_guard<std::mutex> lock(*mu);
      line(text);
    };
  }

  Result<int> Run() {
    if (auto s = Setup(); !s) return s.error();
    say_(fmt::format("worker {} for {}: {} model(s), labels [{}], results stored in {}",
                     client_->identity().client_id, client_->server_url(), models_.size(),
                     fmt::join(o_.labels, ","), store_path_));
    InstallInterruptHandler();
    double backoff = 1;
    int jobs = 0;
    bool reachable = true;
    while (!Interrupted()) {
      Deliver(/*ignore_backoff=*/reachable);
      if (o_.max_jobs > 0 && jobs >= o_.max_jobs) break;
      FleetResult claim = client_->Claim(capabilities_);
      if (!claim.ok()) {
        reachable = false;
        const FleetError& e = claim.error();
        const double wait = e.retry_after_s > 0 ? e.retry_after_s : backoff;
        if (e.kind == FleetFailure::kUnreachable) {
          say_(fmt::format("{}; retrying in {:g} s", e.message, wait));
        } else {
          say_(fmt::format("claim refused: {}; retrying in {:g} s", e.message, wait));
        }
        backoff = std::min(backoff * 2, o_.max_backoff_s);
        if (!SleepUnlessInterrupted(wait)) break;
        continue;
      }
      if (!reachable) {
        // The server is back: what waits in the outbox goes now, and the backoff starts over.
        reachable = true;
        backoff = 1;
        Deliver(/*ignore_backoff=*/true);
      }
      if (claim->status == 204 || !claim->body.is_object() || !claim->body.contains("job")) {
        if (o_.once) {
          say_("no job for this worker; stopping (asked to run once)");
          break;
        }
        say_(fmt::format("no job for this worker; next try in {:g} s", backoff));
        const double wait = backoff;
        backoff = std::min(backoff * 2, o_.max_backoff_s);
        if (!SleepUnlessInterrupted(wait)) break;
        continue;
      }
      if (!IsJob(claim->body)) {
        // Not pipette's answer (another program at the URL, a proxy): said, and tried later.
        say_(fmt::format("the server at {} answered the claim without a job pipette can read; "
                         "is it pipette serve? retrying in {:g} s",
                         client_->server_url(), backoff));
        const double wait = backoff;
        backoff = std::min(backoff * 2, o_.max_backoff_s);
        if (!SleepUnlessInterrupted(wait)) break;
        continue;
      }
      backoff = 1;
      ++jobs;
      if (!RunJob(claim->body)) break;  // interrupted
    }
    Deliver(/*ignore_backoff=*/true);
    if (auto pending = outbox_->Pending(); pending.ok() && *pending > 0) {
      say_(
          fmt::format("{} result(s) wait in the outbox {}; the next pipette worker or pipette "
                      "submit delivers them",
                      *pending, outbox_->dir()));
    }
    if (Interrupted()) say_("interrupted: stopping");
    return jobs;
  }

 private:
  Status Setup() {
    const std::string identity_path =
        o_.identity_path.empty() ? DefaultIdentityPath() : o_.identity_path;
    auto identity = LoadIdentity(identity_path);
    if (!identity) return identity.error();
    client_ = std::make_unique<FleetHttpClient>(o_.server_url, *identity, o_.client);
    if (auto s = client_->Check(); !s) return s;
    store_path_ = o_.store_path.empty() ? DefaultStorePath() : o_.store_path;
    auto store = ResultStore::Open(store_path_);
    if (!store) return store.error();
    store_ = std::move(*store);
    auto models = ScanModels(o_.models_dirs,
                             [this](const std::string& p) { return CachedSha256(*store_, p); });
    if (!models) return models.error();
    models_ = std::move(*models);
    logs_dir_ = o_.logs_dir.empty()
                    ? (fs::absolute(store_path_).parent_path() / "worker-logs").string()
                    : o_.logs_dir;
    std::error_code ec;
    fs::create_directories(logs_dir_, ec);
    if (!fs::is_directory(logs_dir_, ec)) {
      return MakeError(logs_dir_ + ": cannot create the worker's log folder; give another log folder");
    }
    auto outbox =
        Outbox::Open(o_.outbox_dir.empty() ? DefaultOutboxDir(o_.server_url) : o_.outbox_dir);
    if (!outbox) return outbox.error();
    outbox_ = std::make_unique<Outbox>(std::move(*outbox));
    std::string arch;
    int64_t memory = 0;
    auto address = ParseDeviceAddress(o_.device);
    if (!address) return address.error();
    if (address->kind != TransportKind::kLocal) {
      auto device = DeviceAccess::Open(*address, {}, o_.driver_path);
      if (!device) return device.error();
      device_ = *device;
      auto info = device_->Info();
      if (!info) return info.error();
      arch = info->os.arch;
      memory = static_cast<int64_t>(info->memory_bytes);
      say_("measuring on " + device_->Uri() + " (" + arch + ")");
    }
    capabilities_ = WorkerCapabilities(o_.labels, models_, arch, memory);
    context_.models = models_;
    context_.label = o_.label;
    context_.checkpoint_dir =
        (fs::absolute(store_path_).parent_path() / "eval-checkpoints").string();
    context_.open_runtime = [this](const RuntimeChoice& c) {
      RuntimeChoice choice = c;
      if (choice.name == "llamacpp" && choice.driver_path.empty() && !device_) {
        choice.driver_path = o_.driver_path;
      }
      choice.device = device_;
      return OpenRuntime(choice);
    };
    return Status::Ok();
  }

  // Sends what waits in the outbox and reports each acknowledgement.
  void Deliver(bool ignore_backoff) {
    auto report = outbox_->Flush(*client_, std::time(nullptr), ignore_backoff);
    if (!report) {
      say_("outbox: " + report.error().message);
      return;
    }
    for (const std::string& id : report->acknowledged) say_("acknowledged " + id);
    for (const std::string& r : report->rejections) say_("rejected by the server: " + r);
    for (const std::string& n : report->job_notes) say_("submitted as a plain result: " + n);
    if (report->pending > 0 && !report->retry_reason.empty()) {
      say_(fmt::format("{} result(s) wait in the outbox: {}", report->pending,
                       report->retry_reason));
    }
  }

  void Fail(const std::string& job_id, const std::string& reason, bool retriable) {
    FleetResult r = client_->FailJob(job_id, reason, retriable);
    if (r.ok()) {
      say_(fmt::format("failed: job {}: {} (reported, {}; the job is {})", job_id, reason,
                       retriable ? "another device may take it" : "no device can run it",
                       r->body.is_object() ? r->body.value("state", "?") : "?"));
    } else {
      say_(fmt::format("failed: job {}: {} (not reported: {}; its lease expires)", job_id, reason,
                       r.error().message));
    }
  }

  // A claim answer RunJob can read: {"job": {"job_id": "...", "plan_id"?: "...", "spec": {...}}}.
  static bool IsJob(const json& reply) {
    // find, not []: a const json's [] of a missing key is undefined behaviour (an answer without
    // "job" from a server that is not pipette's).
    const auto found = reply.is_object() ? reply.find("job") : reply.end();
    if (found == reply.end()) return false;
    const json& job = *found;
    const auto string_or_absent = [&](const char* key) {
      return !job.contains(key) || job[key].is_string();
    };
    return job.is_object() && job.contains("job_id") && job["job_id"].is_string() &&
           !job["job_id"].get<std::string>().empty() && job.contains("spec") &&
           job["spec"].is_object() && string_or_absent("plan_id") &&
           (!job["spec"].contains("benchmark") || job["spec"]["benchmark"].is_string());
  }

  // One claimed job (IsJob). Returns false when an interrupt ended it.
  bool RunJob(const json& reply) {
    const json& job = reply["job"];
    const std::string job_id = job.value("job_id", "");
    const json spec = job.value("spec", json::object());
    say_(fmt::format("claimed job {} ({}) of plan {}", job_id, spec.value("benchmark", "?"),
                     job.value("plan_id", "?")));
    auto cell = CellSpecFromJob(spec, context_);
    if (!cell) {
      Fail(job_id, cell.error().message, cell.error().stage == kJobStageDevice);
      return true;
    }
    cell->log_path = (fs::path(logs_dir_) / (job_id + "-" + CompactUtcNow() + ".log")).string();
    cell->device = device_;
    double interval = o_.lease_s / 3;
    if (reply.contains("lease_expires_at") && reply["lease_expires_at"].is_number()) {
      const double left = reply["lease_expires_at"].get<double>() - std::time(nullptr);
      if (left > 0 && left < o_.lease_s) interval = left / 3;
    }
    CellHooks hooks;
    hooks.hash_file = [this](const std::string& p) { return CachedSha256(*store_, p); };
    // A readiness wait can hold a cell for minutes: say what holds it, every 30 s at most (the
    // other progress lines, one per repetition, would flood a worker's log).
    auto last_wait_line = std::chrono::steady_clock::time_point();
    hooks.progress = [this, &last_wait_line](const std::string& line) {
      if (line.rfind("waiting for the device to be ready", 0) != 0) return;
      const auto now = std::chrono::steady_clock::now();
      if (now - last_wait_line < std::chrono::seconds(30)) return;
      last_wait_line = now;
      say_(line);
    };
    Result<json> record = MakeError("not run");
    {
      Heartbeat heartbeat(*client_, job_id, std::max(interval, 0.2), say_);
      record = RunCell(*cell, hooks);
    }
    if (!record) {
      // Bad input found before anything ran: the same on every device; but a device that cannot
      // be reached now (stage "device") may be back later, or another may run the job.
      Fail(job_id, record.error().message, record.error().stage == kJobStageDevice);
      return true;
    }
    const std::string result_id = record->value("result_id", "");
    if (auto s = store_->Put(*record); !s) {
      say_("storing result " + result_id + " locally: " + s.error().message +
           " (it is still submitted)");
    }
    if (Interrupted()) {
      say_(
          fmt::format("interrupted: job {} abandoned (stored locally as {}; its lease expires "
                      "and another worker takes it)",
                      job_id, result_id));
      return false;
    }
    if (auto s = outbox_->Add(*record, job_id); !s) {
      say_("outbox: " + s.error().message);
      return true;
    }
    say_(fmt::format("done: result {} ({}) of job {}, submitting", result_id,
                     record->value("status", "?"), job_id));
    Deliver(/*ignore_backoff=*/true);
    return true;
  }

  const WorkerOptions& o_;
  std::function<void(const std::string&)> say_;
  std::unique_ptr<FleetHttpClient> client_;
  std::unique_ptr<ResultStore> store_;
  std::unique_ptr<Outbox> outbox_;
  std::string store_path_, logs_dir_;
  std::map<std::string, std::string> models_;
  json capabilities_;
  std::shared_ptr<DeviceAccess> device_;  // null: this machine
  JobContext context_;
};

}  // namespace

json WorkerCapabilities(const std::vector<std::string>& labels,
                        const std::map<std::string, std::string>& models, const std::string& arch,
                        int64_t memory_bytes) {
  json shas = json::array();
  for (const auto& [sha, path] : models) shas.push_back(sha);
  return {{"labels", labels},
          {"arch", arch.empty() ? Arch() : arch},
          {"memory_bytes", memory_bytes > 0 ? memory_bytes : MemTotalBytes()},
          {"runtimes", RuntimeNames()},
          {"models", shas}};
}

Result<std::map<std::string, std::string>> ScanModels(
    const std::vector<std::string>& dirs,
    const std::function<Result<std::string>(const std::string&)>& hash) {
  std::map<std::string, std::string> models;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      return MakeError(dir + ": no such model folder; give a folder of *.gguf files");
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".gguf" && entry.is_regular_file(ec)) {
        files.push_back(fs::absolute(entry.path()));
      }
    }
    if (ec) return MakeError(dir + ": cannot list the model folder (" + ec.message() + ")");
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      auto sha = hash(f.string());
      if (!sha) return sha.error();
      models.emplace(*sha, f.string());  // the first of identical files
    }
  }
  return models;
}

Result<int> RunWorker(const WorkerOptions& options, const WorkerHooks& hooks) {
  return Worker(options, hooks).Run();
}

}  // namespace pipette
