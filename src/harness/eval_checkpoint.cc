#include "harness/eval_checkpoint.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "base/json_depth.h"

namespace pipette {

Result<std::unique_ptr<EvalCheckpoint>> EvalCheckpoint::Open(const std::string& dir,
                                                             const std::string& digest) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::unique_ptr<EvalCheckpoint> c(new EvalCheckpoint);
  c->path_ = (std::filesystem::path(dir) / (digest + ".jsonl")).string();
  std::vector<std::string> lines;
  {
    std::ifstream in(c->path_, std::ios::binary);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  // A crash mid-write leaves at most the last line cut short; it is dropped, and the file is
  // rewritten without it so that the next append starts on a line of its own.
  bool rewrite = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    auto j = ParseBoundedJson(lines[i]);
    if (j.is_discarded() || !j.is_object() || !j.contains("key") || !j["key"].is_string()) {
      if (i + 1 == lines.size()) {
        ++c->torn_;
        rewrite = true;
        lines.pop_back();
        break;
      }
      return MakeError(c->path_ + ":" + std::to_string(i + 1) +
                       ": not a checkpointed attempt; delete the file to start the cell afresh");
    }
    const std::string key = j["key"].get<std::string>();
    c->done_[key] = std::move(j);
  }
  if (rewrite) {
    std::ofstream out(c->path_, std::ios::binary | std::ios::trunc);
    for (const auto& l : lines) out << l << '\n';
    if (!out) return MakeError("cannot rewrite the checkpoint " + c->path_);
  }
  c->file_ = std::fopen(c->path_.c_str(), "ab");
  if (!c->file_) {
    return MakeError("cannot write the checkpoint " + c->path_ +
                     "; choose a writable checkpoint folder");
  }
  return c;
}

EvalCheckpoint::~EvalCheckpoint() {
  if (file_) std::fclose(file_);
}

Status EvalCheckpoint::Append(const nlohmann::json& attempt) {
  const std::string line =
      attempt.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0 ||
      fsync(fileno(file_)) != 0) {
    return MakeError("cannot append to the checkpoint " + path_ + " (disk full?)", "checkpoint");
  }
  done_[attempt["key"].get<std::string>()] = attempt;
  return Status::Ok();
}

}  // namespace pipette
