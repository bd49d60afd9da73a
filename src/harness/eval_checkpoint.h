// The per-sample checkpoint of an eval cell (../shared/docs/evals.md 2): one JSON Lines file per
// cell digest (configuration + eval options), one finished attempt per line, flushed and synced
// when the attempt ends, so an interrupted or crashed cell resumes with nothing redone.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "pipette/status.h"

namespace pipette {

class EvalCheckpoint {
 public:
  // Opens (creating the folder and file when missing) `dir`/<digest>.jsonl and reads the attempts
  // already there, keyed by "id#attempt". A last line cut short by a crash is ignored (and
  // counted); any other unreadable line is an error naming the file and line.
  static Result<std::unique_ptr<EvalCheckpoint>> Open(const std::string& dir,
                                                      const std::string& digest);
  ~EvalCheckpoint();

  const std::string& path() const { return path_; }
  const std::map<std::string, nlohmann::json>& done() const { return done_; }
  int torn_lines() const { return torn_; }

  // Appends one finished attempt (needs "key"), flushed to the disk before returning.
  Status Append(const nlohmann::json& attempt);

 private:
  EvalCheckpoint() = default;
  std::string path_;
  std::FILE* file_ = nullptr;
  std::map<std::string, nlohmann::json> done_;
  int torn_ = 0;
};

}  // namespace pipette
