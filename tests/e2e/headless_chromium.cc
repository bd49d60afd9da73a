#include "headless_chromium.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "platform/process.h"

namespace pipette::testing_browser {

namespace fs = std::filesystem;

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

BrowserRun Browse(const std::string& chromium, const std::string& action, const std::string& url,
                  const std::string& work_dir, const std::string& window,
                  const std::vector<std::string>& extra) {
  static int counter = 0;
  const std::string err_path = work_dir + "/chromium-" + std::to_string(counter++) + ".txt";
  BrowserRun run;
  std::vector<std::string> argv = {chromium,        "--headless",
                                   "--no-sandbox",  "--disable-gpu",
                                   "--enable-logging=stderr", "--v=0",
                                   "--no-first-run", "--user-data-dir=" + work_dir + "/chromium-profile",
                                   "--window-size=" + window};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(action);
  argv.push_back(url);
  auto child = ChildProcess::Start(argv, err_path);
  if (!child.ok()) {
    run.err = child.error().message;
    return run;
  }
  child->CloseStdin();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline) {
    auto line = child->ReadLine(std::chrono::milliseconds(1000));
    if (line) {
      run.out += *line + "\n";
    } else if (!child->TimedOut()) {
      break;  // end of output
    }
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  auto exit = child->Wait(std::chrono::milliseconds(std::max<long>(1, left.count())));
  if (!exit) {
    child->Kill(SIGKILL);
    child->Wait();
  }
  run.finished = exit.has_value() && exit->exited && exit->code == 0;
  std::ifstream in(err_path);
  std::stringstream ss;
  ss << in.rdbuf();
  run.err = ss.str();
  return run;
}

nlohmann::json ProbeFacts(const std::string& dom) {
  const size_t start = dom.find("<pre id=\"probe\">");
  if (start == std::string::npos) return {};
  const size_t from = start + 16;
  std::string text = dom.substr(from, dom.find("</pre>", from) - from);
  for (const auto& [entity, c] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}}) {
    for (size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1)) {
      text.replace(at, entity.size(), c);
    }
  }
  return nlohmann::json::parse(text, nullptr, false);
}

size_t Count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + needle.size())) {
    ++n;
  }
  return n;
}

}  // namespace pipette::testing_browser
