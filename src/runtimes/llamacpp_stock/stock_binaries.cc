#include "runtimes/llamacpp_stock/stock_binaries.h"

#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "platform/process.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::seconds kProbeTimeout{30};

const char kMustBe[] =
    "must be the bin folder of a llama.cpp build with llama-bench and "
    "llama-server (cmake --build build --target llama-bench llama-server)";

bool IsExecutableFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

// Runs `argv` to completion within kProbeTimeout, capturing stdout and stderr separately.
Result<ProbeOutput> Probe(const std::vector<std::string>& argv) {
  char tmpl[] = "/tmp/pipette-stock-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0)
    return MakeError(fmt::format("cannot create a temporary file in /tmp: {}", strerror(errno)));
  close(fd);
  const std::string err_path = tmpl;
  auto child = ChildProcess::Start(argv, err_path);
  if (!child.ok()) {
    unlink(err_path.c_str());
    return child.error();
  }
  child->CloseStdin();
  ProbeOutput result;
  const auto deadline = std::chrono::steady_clock::now() + kProbeTimeout;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    auto line = child->ReadLine(std::max(left, std::chrono::milliseconds(1)));
    if (!line) {
      timed_out = child->TimedOut();
      break;
    }
    result.out += *line + "\n";
  }
  if (timed_out) child->Kill(SIGKILL);
  result.exit = *child->Wait();
  std::ifstream err(err_path);
  std::stringstream ss;
  ss << err.rdbuf();
  result.err = ss.str();
  unlink(err_path.c_str());
  if (timed_out) {
    return MakeError(fmt::format("{} {} did not finish within {} s; killed it", argv[0],
                                 argv.size() > 1 ? argv[1] : "", kProbeTimeout.count()));
  }
  return result;
}

std::string FindTaskset() {
  std::vector<std::string> dirs = {"/usr/bin", "/bin", "/usr/local/bin"};
  if (const char* path = getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');) {
      if (!dir.empty()) dirs.push_back(dir);
    }
  }
  for (const auto& dir : dirs) {
    const std::string candidate = dir + "/taskset";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

Result<LlamaBenchSyntax> ParseLlamaBenchHelp(const std::string& help_text) {
  const auto has = [&](const char* option) { return help_text.find(option) != std::string::npos; };
  if (!has("--n-prompt") || !has("json")) {
    return MakeError(
        "this is not llama-bench's help text (no --n-prompt option or no json output format)");
  }
  LlamaBenchSyntax s;
  s.load_mode = has("--load-mode");
  s.mmap = has("--mmap");
  s.depth = has("--n-depth");
  s.no_warmup = has("--no-warmup");
  s.poll = has("--poll");
  s.prompt_gen = has("-pg ");
  const size_t fa = help_text.find("--flash-attn");
  s.flash_attn = fa != std::string::npos;
  if (s.flash_attn) {
    const size_t eol = help_text.find('\n', fa);
    s.flash_attn_auto =
        help_text.substr(fa, eol == std::string::npos ? eol : eol - fa).find("auto") !=
        std::string::npos;
  } else {
    s.flash_attn_auto = false;
  }
  return s;
}

Result<StockBinaries> FindStockBinaries(const std::string& dir) {
  if (dir.empty())
    return MakeError(fmt::format("the runtime directory is not set; it {}", kMustBe));
  std::error_code ec;
  const fs::path root = fs::absolute(dir, ec).lexically_normal();
  if (ec || !fs::exists(root, ec)) {
    return MakeError(fmt::format("the runtime directory {} does not exist; it {}", dir, kMustBe));
  }
  if (!fs::is_directory(root, ec)) {
    return MakeError(fmt::format("the runtime directory {} is not a folder; it {}", dir, kMustBe));
  }
  fs::path bin;
  for (const fs::path& candidate : {root, root / "bin"}) {
    if (IsExecutableFile(candidate / "llama-bench")) {
      bin = candidate;
      break;
    }
    if (fs::exists(candidate / "llama-bench", ec)) {
      return MakeError(
          fmt::format("{} is not an executable file; make it one (chmod +x) or rebuild it",
                      (candidate / "llama-bench").string()));
    }
  }
  if (bin.empty()) {
    return MakeError(
        fmt::format("the runtime directory {} has no llama-bench; it {}", dir, kMustBe));
  }
  if (bin.filename().empty()) bin = bin.parent_path();  // "dir/" -> "dir"
  StockBinaries b;
  b.bin_dir = bin.string();
  b.llama_bench = (bin / "llama-bench").string();
  if (IsExecutableFile(bin / "llama-server")) b.llama_server = (bin / "llama-server").string();

  auto help = Probe({b.llama_bench, "--help"});
  if (!help.ok()) return help.error().Wrap("reading llama-bench's options");
  if (!help->exit.exited || help->exit.code != 0) {
    const std::string last = LastLine(help->err);
    return MakeError(
        fmt::format("{} --help failed ({}{}{}); check that the build is complete and "
                    "runs on this machine",
                    b.llama_bench, help->exit.Describe(), last.empty() ? "" : ": ", last));
  }
  auto syntax = ParseLlamaBenchHelp(help->out);
  if (!syntax.ok()) {
    return MakeError(
        fmt::format("{} does not answer --help like llama-bench ({}); the runtime "
                    "directory {}",
                    b.llama_bench, syntax.error().message, kMustBe));
  }
  b.bench_syntax = *syntax;
  return b;
}

Result<StockBuild> ParseStockVersion(const std::string& text) {
  static const std::regex kNewer(R"(version:\s*(\S+)\s*\(build\s+(\d+),\s*commit\s+([^)\s]+)\))");
  static const std::regex kOlder(R"(version:\s*(\d+)\s*\(([^)\s]+)\))");
  StockBuild build;
  bool found = false;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch m;
    if (!found && std::regex_search(line, m, kNewer)) {
      build.version = m[1];
      build.build_number = std::stoi(m[2]);
      build.commit = m[3];
      found = true;
    } else if (!found && std::regex_search(line, m, kOlder)) {
      build.build_number = std::stoi(m[1]);
      build.commit = m[2];
      found = true;
    } else if (line.rfind("built with ", 0) == 0) {
      const std::string rest = line.substr(11);
      const size_t for_at = rest.rfind(" for ");
      build.compiler = rest.substr(0, for_at);
      if (for_at != std::string::npos) build.target = rest.substr(for_at + 5);
    }
  }
  if (!found) {
    return MakeError(
        "no version line (\"version: 0.4.0 (build 1, commit 80fb11a)\" or "
        "\"version: 4589 (80fb11a)\") in the output");
  }
  return build;
}

Result<StockBuild> ReadStockBuild(const StockBinaries& binaries) {
  std::string tool = binaries.llama_server;
  const fs::path cli = fs::path(binaries.bin_dir) / "llama-cli";
  if (tool.empty() && IsExecutableFile(cli)) tool = cli.string();
  if (tool.empty()) {
    return MakeError(fmt::format(
        "cannot read the build identity of {}: it has neither llama-server nor llama-cli "
        "(llama-bench has no --version); build llama-server, or take the commit from a "
        "llama-bench run",
        binaries.bin_dir));
  }
  auto out = Probe({tool, "--version"});
  if (!out.ok()) return out.error().Wrap("reading the build identity");
  auto build = ParseStockVersion(out->out + out->err);
  if (!build.ok()) {
    const std::string last = LastLine(out->err.empty() ? out->out : out->err);
    return MakeError(
        fmt::format("{} --version printed no version line ({}{}{}); is it a "
                    "llama.cpp build?",
                    tool, out->exit.Describe(), last.empty() ? "" : ": ", last));
  }
  return build;
}

}  // namespace pipette
