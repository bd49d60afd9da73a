#include "tests/support/postgres_server.h"
#include "tests/support/free_port.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <pqxx/pqxx>
#include <vector>

namespace pipette::testing {
namespace {

struct Server {
  std::string bin;           // /usr/lib/postgresql/<v>/bin
  std::string dir;           // the temporary folder: data/, log, the unix socket
  std::optional<uid_t> uid;  // run the binaries as this user (we are root)
  std::optional<gid_t> gid;
  int port = 0;
  bool running = false;
  int databases = 0;
};

std::mutex mu;
Server* server = nullptr;          // guarded by mu; leaked on purpose (used from atexit)
std::optional<Error> start_error;  // the first start failed: every call reports it

std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

// Runs `argv` (as the server's user when we are root), output appended to <dir>/commands.log;
// an error with the command's last line of output when it fails.
Status Run(const Server& s, const std::vector<std::string>& argv) {
  const std::string log = s.dir + "/commands.log";
  pid_t pid = fork();
  if (pid < 0) return MakeError("test PostgreSQL: fork failed");
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    if (s.uid) {
      if (setgroups(0, nullptr) != 0 || setgid(*s.gid) != 0 || setuid(*s.uid) != 0) _exit(126);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  const std::string name = std::filesystem::path(argv[0]).filename();
  return MakeError("test PostgreSQL: " + name + " failed: " + LastLine(log) + " (see " + log + ")");
}

std::string FindBinDir() {
  glob_t g{};
  std::vector<std::string> found;
  if (glob("/usr/lib/postgresql/*/bin/initdb", 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) found.push_back(g.gl_pathv[i]);
  globfree(&g);
  if (found.empty()) return "";
  // The newest major version: compare numerically ("9.6" < "15").
  std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
    auto v = [](const std::string& p) { return std::atof(p.c_str() + 20); };
    return v(a) < v(b);
  });
  return std::filesystem::path(found.back()).parent_path();
}

Status StartLocked(Server& s) {
  const std::string opts = "-p " + std::to_string(s.port) + " -k " + s.dir +
                           " -c listen_addresses=127.0.0.1 -c fsync=off"
                           " -c full_page_writes=off -c max_connections=200";
  Status st = Run(s, {s.bin + "/pg_ctl", "start", "-w", "-t", "30", "-D", s.dir + "/data", "-l",
                      s.dir + "/server.log", "-o", opts});
  if (!st.ok()) {
    std::string last = LastLine(s.dir + "/server.log");
    return MakeError(st.error().message + (last.empty() ? "" : "; server log: " + last));
  }
  s.running = true;
  return Status::Ok();
}

void StopAtExit() {
  std::lock_guard<std::mutex> lock(mu);
  if (server == nullptr) return;
  if (server->running)
    (void)Run(*server, {server->bin + "/pg_ctl", "stop", "-w", "-m", "immediate", "-D",
                        server->dir + "/data"});
  std::error_code ec;
  std::filesystem::remove_all(server->dir, ec);
  server = nullptr;
}

// A process that outlives this one only to clean up after it: when this process dies without
// running its atexit handlers (killed by a test timeout, a crash), the pipe closes, and the reaper
// stops the server and deletes its folder. Everything it needs is prepared before fork(): after
// it, only async-signal-safe calls.
void StartReaper(const Server& s) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  const std::string pg_ctl = s.bin + "/pg_ctl", data = s.dir + "/data";
  const char* stop_argv[] = {pg_ctl.c_str(), "stop",       "-m",   "immediate",
                             "-D",           data.c_str(), nullptr};
  const char* rm_argv[] = {"/bin/rm", "-rf", s.dir.c_str(), nullptr};
  const bool drop = s.uid.has_value();
  const uid_t uid = s.uid.value_or(0);
  const gid_t gid = s.gid.value_or(0);
  const pid_t pid = fork();
  if (pid != 0) {  // this process (or fork failed): keep the write end open until exit
    close(fds[0]);
    return;
  }
  close(fds[1]);
  setsid();  // out of the test's process group: a Ctrl-C or group kill leaves it to clean up
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  const int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
  }
  char c;
  while (read(fds[0], &c, 1) != 0) {
    if (errno != EINTR) break;
  }
  auto run = [](const char* const* argv, bool as_user, uid_t u, gid_t g) {
    const pid_t child = fork();
    if (child == 0) {
      if (as_user && (setgroups(0, nullptr) != 0 || setgid(g) != 0 || setuid(u) != 0)) _exit(126);
      execv(argv[0], const_cast<char* const*>(argv));
      _exit(127);
    }
    int status;
    if (child > 0) waitpid(child, &status, 0);
  };
  run(stop_argv, drop, uid, gid);  // fails quietly when the server is already stopped
  run(rm_argv, false, 0, 0);
  _exit(0);
}

// A new folder "<parent>/<prefix>XXXXXX" owned by the server's user.
Result<std::string> MakeDir(const Server& s, const std::string& parent, const std::string& prefix) {
  std::string templ = parent + "/" + prefix + "XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return MakeError("test PostgreSQL: cannot create a folder under " + parent);
  }
  const std::string dir = buf.data();
  if (s.uid && chown(dir.c_str(), *s.uid, *s.gid) != 0) {
    return MakeError("test PostgreSQL: cannot give " + dir + " to the postgres user");
  }
  chmod(dir.c_str(), 0755);
  return dir;
}

Status InitDb(const Server& s, const std::string& data) {
  return Run(s, {s.bin + "/initdb", "-D", data, "-U", "pipette", "-A", "trust", "--no-sync", "-E",
                 "UTF8", "--no-locale"});
}

bool OwnedBy(const std::string& path, uid_t owner) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && st.st_uid == owner;
}

// The server's data folder: a copy of a cluster made once per PostgreSQL version and user (initdb
// takes a second or more, a copy of its 40 MB a tenth of that; every test process starts its own
// server). The cluster is made aside and renamed into place, so a half-made one is never copied;
// when the cache cannot be used, initdb runs here.
Status MakeDataDir(const Server& s, const std::string& tmp) {
  const uid_t owner = s.uid.value_or(geteuid());
  const std::string version = std::filesystem::path(s.bin).parent_path().filename();
  const std::string cache = tmp + "/pipette-pg-template-" + version + "-" + std::to_string(owner);
  const std::string data = s.dir + "/data";
  auto usable = [&] { return OwnedBy(cache, owner) && OwnedBy(cache + "/data/PG_VERSION", owner); };
  if (!usable()) {
    auto aside = MakeDir(s, tmp, "pipette-pg-template-new-");
    if (aside.ok()) {
      std::error_code ec;
      if (InitDb(s, *aside + "/data").ok() && rename(aside->c_str(), cache.c_str()) == 0) {
        // made and in place
      } else {
        std::filesystem::remove_all(*aside, ec);  // failed, or another process was first
      }
    }
  }
  if (usable() && Run(s, {"/bin/cp", "-a", cache + "/data", data}).ok()) return Status::Ok();
  std::error_code ec;
  std::filesystem::remove_all(data, ec);
  return InitDb(s, data);
}

Status StartFirst() {
  auto s = std::make_unique<Server>();
  s->bin = FindBinDir();
  if (s->bin.empty())
    return MakeError(
        "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb); install the "
        "postgresql package (scripts/deps.sh --test)");
  if (geteuid() == 0) {
    // PostgreSQL refuses to run as root: use the user the Debian package creates.
    const passwd* pw = getpwnam("postgres");
    if (pw == nullptr)
      return MakeError(
          "test PostgreSQL: running as root and there is no 'postgres' user to run the server "
          "as; install the postgresql package (scripts/deps.sh --test) or run as another user");
    s->uid = pw->pw_uid;
    s->gid = pw->pw_gid;
  }
  const char* tmp_env = std::getenv("TMPDIR");
  const std::string tmp = tmp_env && *tmp_env ? tmp_env : "/tmp";
  auto dir = MakeDir(*s, tmp, "pipette-pg-");
  if (!dir.ok()) return dir.error();
  s->dir = *dir;
  server = s.release();
  std::atexit(StopAtExit);
  StartReaper(*server);

  Status st = MakeDataDir(*server, tmp);
  if (!st.ok()) return st;
  // A free port can be taken by someone else between our probe and the server's bind: retry.
  for (int attempt = 0; attempt < 5; ++attempt) {
    server->port = FreePort();
    if (server->port == 0) return MakeError("test PostgreSQL: no free TCP port on 127.0.0.1");
    st = StartLocked(*server);
    if (st.ok()) return st;
  }
  return st;
}

std::string UrlOf(const Server& s, const std::string& db) {
  return "postgresql://pipette@127.0.0.1:" + std::to_string(s.port) + "/" + db;
}

}  // namespace

Result<std::string> FreshPostgresDatabase() {
  std::lock_guard<std::mutex> lock(mu);
  if (start_error) return *start_error;
  if (server == nullptr) {
    Status st = StartFirst();
    if (!st.ok()) {
      start_error = st.error();
      return st.error();
    }
  }
  if (!server->running) {
    Status st = StartLocked(*server);
    if (!st.ok()) return st.error();
  }
  std::string name = "t";
  name += std::to_string(++server->databases);
  try {
    pqxx::connection c(UrlOf(*server, "postgres"));
    pqxx::nontransaction tx(c);
    tx.exec("CREATE DATABASE " + name);
  } catch (const std::exception& e) {
    std::string what = e.what();
    while (!what.empty() && (what.back() == '\n' || what.back() == ' ')) what.pop_back();
    return MakeError("test PostgreSQL: CREATE DATABASE " + name + " failed: " + what);
  }
  return UrlOf(*server, name);
}

Status StopTestPostgres() {
  std::lock_guard<std::mutex> lock(mu);
  if (server == nullptr)
    return MakeError("test PostgreSQL: not started; call FreshPostgresDatabase");
  if (!server->running) return Status::Ok();
  Status st = Run(*server, {server->bin + "/pg_ctl", "stop", "-w", "-m", "immediate", "-D",
                            server->dir + "/data"});
  if (st.ok()) server->running = false;
  return st;
}

Status StartTestPostgres() {
  std::lock_guard<std::mutex> lock(mu);
  if (server == nullptr)
    return MakeError("test PostgreSQL: not started; call FreshPostgresDatabase");
  if (server->running) return Status::Ok();
  return StartLocked(*server);
}

}  // namespace pipette::testing
