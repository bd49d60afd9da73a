// The outbox: records on disk until the server acknowledged them (docs/fleet-protocol.md).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/json_depth.h"
#include "pipette/fleet_client.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kMaxBackoffS = 60;

std::string Errno() { return std::strerror(errno); }

// Writes `content` to dir/name so that a crash leaves the old file or the new one: a temporary
// file in the same folder, fsynced, renamed over the name, then the folder fsynced so the rename
// itself survives a power cut.
Status WriteAtomically(const std::string& dir, const std::string& name,
                       const std::string& content) {
  const std::string path = dir + "/" + name;
  const std::string tmp = dir + "/.tmp-" + name + "-" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return MakeError("cannot write " + tmp + ": " + Errno());
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = Errno();
      ::close(fd);
      ::unlink(tmp.c_str());
      return MakeError("cannot write " + tmp + ": " + why + " (disk full?)");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const std::string why = Errno();
    ::close(fd);
    ::unlink(tmp.c_str());
    return MakeError("cannot write " + tmp + ": " + why);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = Errno();
    ::unlink(tmp.c_str());
    return MakeError("cannot rename " + tmp + " to " + path + ": " + why);
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

Result<json> ReadJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError("cannot read " + path + ": " + Errno());
  std::stringstream text;
  text << in.rdbuf();
  if (JsonNestsDeeperThan(text.str())) return MakeError(path + " is not JSON (nested too deeply)");
  try {
    return json::parse(text.str());
  } catch (const std::exception&) {
    return MakeError(path + " is not JSON");
  }
}

// A result_id names a file: refuse anything that could leave the folder.
bool SafeName(const std::string& id) {
  return !id.empty() && id.size() <= 200 && id[0] != '.' &&
         id.find_first_of("/\\") == std::string::npos && id.find('\0') == std::string::npos;
}

struct Entry {
  std::string file;  // "<result_id>.json"
  json data;
};

Result<std::vector<Entry>> ListEntries(const std::string& dir) {
  std::vector<Entry> entries;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return MakeError("cannot read the outbox " + dir + ": " + ec.message());
  for (const auto& e : it) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.' || e.path().extension() != ".json") continue;
    if (!e.is_regular_file(ec)) continue;
    auto data = ReadJson(e.path().string());
    // A file removed meanwhile by another process sharing the folder.
    if (!data.ok() && !fs::exists(e.path(), ec)) continue;
    entries.push_back({name, data.ok() ? std::move(*data) : json(nullptr)});
  }
  const auto added = [](const Entry& e) {
    return e.data.is_object() ? e.data.value("added_at", int64_t{0}) : int64_t{0};
  };
  std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    return added(a) != added(b) ? added(a) < added(b) : a.file < b.file;
  });
  return entries;
}

std::string DataHome() {
  if (const char* x = std::getenv("XDG_DATA_HOME"); x != nullptr && *x != '\0') return x;
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return std::string(h) + "/.local/share";
  }
  return ".";
}

}  // namespace

std::string DefaultOutboxDir(const std::string& server_url) {
  std::string root;
  if (const char* o = std::getenv("PIPETTE_OUTBOX"); o != nullptr && *o != '\0') {
    root = o;
  } else {
    root = DataHome() + "/pipette/outbox";
  }
  std::string name = FleetHttpClient(server_url, Identity{}).host_port();
  for (char& c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-')) c = '_';
  }
  return root + "/" + name;
}

Result<Outbox> Outbox::Open(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return MakeError("cannot create the outbox folder " + dir + ": " + ec.message());
  if (!fs::is_directory(dir, ec)) return MakeError("the outbox " + dir + " is not a folder");
  ::chmod(dir.c_str(), 0700);
  return Outbox(dir);
}

Status Outbox::Add(const json& record, const std::string& job_id) {
  if (!record.is_object() || !record.contains("result_id") || !record["result_id"].is_string()) {
    return MakeError("cannot queue a record without a result_id for the server");
  }
  const std::string id = record["result_id"].get<std::string>();
  if (!SafeName(id)) return MakeError("result_id '" + id + "' cannot name an outbox file");
  const json entry = {{"record", record},
                      {"job_id", job_id},
                      {"attempts", 0},
                      {"next_try_at", 0},
                      {"added_at", std::time(nullptr)},
                      {"last_error", ""}};
  return WriteAtomically(dir_, id + ".json", entry.dump());
}

Result<FlushReport> Outbox::Flush(const FleetHttpClient& client, int64_t now, bool ignore_backoff) {
  auto entries = ListEntries(dir_);
  if (!entries.ok()) return entries.error();
  FlushReport report;
  bool unreachable = false;  // or refusing this client: the rest wait
  const std::string rejected_dir = dir_ + "/rejected";
  const auto reject = [&](const Entry& e, const std::string& id, const std::string& reason,
                          int status) -> Status {
    std::error_code ec;
    fs::create_directories(rejected_dir, ec);
    json out = e.data.is_object() ? e.data : json::object();
    out["reason"] = reason;
    out["status"] = status;
    out["rejected_at"] = now;
    if (Status s = WriteAtomically(rejected_dir, e.file, out.dump()); !s.ok()) return s;
    fs::remove(dir_ + "/" + e.file, ec);
    ++report.rejected;
    report.rejections.push_back(id + ": " + reason);
    return Status::Ok();
  };
  for (Entry& e : *entries) {
    const std::string id = e.file.substr(0, e.file.size() - 5);
    if (!e.data.is_object() || !e.data.contains("record") || !e.data["record"].is_object()) {
      // Set aside as it is, byte for byte (whatever it holds may still be worth recovering),
      // with the reason beside it.
      std::error_code ec;
      fs::create_directories(rejected_dir, ec);
      fs::rename(dir_ + "/" + e.file, rejected_dir + "/" + e.file, ec);
      if (ec) return MakeError("cannot move " + dir_ + "/" + e.file + " to " + rejected_dir);
      const std::string reason = "not an outbox entry (the file was changed by hand?)";
      if (Status s = WriteAtomically(rejected_dir, id + ".reason.json",
                                     json{{"reason", reason}, {"rejected_at", now}}.dump());
          !s.ok()) {
        return s.error();
      }
      ++report.rejected;
      report.rejections.push_back(id + ": " + reason);
      continue;
    }
    if (unreachable || (!ignore_backoff && e.data.value("next_try_at", int64_t{0}) > now)) {
      ++report.pending;
      continue;
    }
    const json& record = e.data["record"];
    const std::string job_id = e.data.contains("job_id") && e.data["job_id"].is_string()
                                   ? e.data["job_id"].get<std::string>()
                                   : "";
    FleetResult r =
        job_id.empty() ? client.SubmitResult(record) : client.CompleteJob(job_id, record);
    if (!job_id.empty() && !r.ok() && r.error().kind == FleetFailure::kRejected) {
      // The job endpoint refused it (a lost lease, a job the server no longer has): the result is
      // still a result. Submit it plainly; the server is idempotent if the job endpoint stored it.
      report.job_notes.push_back(id + " (job " + job_id + "): " + r.error().message);
      r = client.SubmitResult(record);
    }
    // Only pipette's acknowledgement removes a record: {"stored": bool, "result_id"?: this id}.
    // Any other 2xx (a proxy, another program at the URL) keeps it, to be tried again.
    const auto acknowledges = [&id](const json& body) {
      return body.is_object() && body.contains("stored") && body["stored"].is_boolean() &&
             (!body.contains("result_id") ||
              (body["result_id"].is_string() && body["result_id"].get<std::string>() == id));
    };
    if (r.ok() && !acknowledges(r->body)) {
      r = FleetError{FleetFailure::kRetriable, r->status,
                     "the server at " + client.server_url() + " answered " +
                         std::to_string(r->status) +
                         " without pipette's acknowledgement; is it pipette serve?",
                     0};
    }
    if (r.ok()) {
      const bool stored = r->body.at("stored").get<bool>();  // acknowledges() checked it
      ++(stored ? report.sent : report.already);
      report.acknowledged.push_back(id);
      std::error_code ec;
      fs::remove(dir_ + "/" + e.file, ec);
      if (ec) return MakeError("cannot remove " + dir_ + "/" + e.file + ": " + ec.message());
      continue;
    }
    const FleetError& err = r.error();
    // 401 and 403 judge the client (unknown, pending approval, revoked, its clock off), not the
    // record: every other record would be refused alike, and all are good once that is fixed.
    const bool client_refused = err.status == 401 || err.status == 403;
    if (err.kind == FleetFailure::kRejected && !client_refused) {
      if (Status s = reject(e, id, err.message, err.status); !s.ok()) return s.error();
      continue;
    }
    const int attempts = e.data.value("attempts", 0) + 1;
    int64_t wait = std::min<int64_t>(kMaxBackoffS, int64_t{1} << std::min(attempts - 1, 6));
    wait = std::max<int64_t>(wait, std::min<int64_t>(err.retry_after_s, kMaxBackoffS));
    e.data["attempts"] = attempts;
    e.data["next_try_at"] = now + wait;
    e.data["last_error"] = err.message;
    if (Status s = WriteAtomically(dir_, e.file, e.data.dump()); !s.ok()) return s.error();
    ++report.pending;
    if (report.retry_reason.empty()) report.retry_reason = err.message;
    if (err.kind == FleetFailure::kUnreachable || client_refused) unreachable = true;
  }
  return report;
}

Result<std::vector<std::string>> Outbox::PendingIds() const {
  auto entries = ListEntries(dir_);
  if (!entries.ok()) return entries.error();
  std::vector<std::string> ids;
  for (const Entry& e : *entries) ids.push_back(e.file.substr(0, e.file.size() - 5));
  return ids;
}

Result<int> Outbox::Pending() const {
  auto ids = PendingIds();
  if (!ids.ok()) return ids.error();
  return static_cast<int>(ids->size());
}

}  // namespace pipette
