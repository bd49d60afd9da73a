// Test and benchmark support: the shared scorer corpus (DataDir()/evals/scoring/*.jsonl.gz,
// one JSON object per line: sample_id, completion_id, completion, verdicts). Never used by
// pipette itself. Header-only; link ZLIB::ZLIB.
#pragma once

#include <zlib.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/test_data.h"

namespace pipette::testing {

// The folder of the corpus files.
inline std::string ScoringDir() { return DataDir() + "/evals/scoring"; }

// The records of ScoringDir()/`file`; empty when the file is absent or unreadable.
inline std::vector<nlohmann::json> ReadScoringCorpus(const std::string& file) {
  std::vector<nlohmann::json> records;
  gzFile in = gzopen((ScoringDir() + "/" + file).c_str(), "rb");
  if (in == nullptr) return records;
  std::string data;
  char buf[65536];
  int n;
  while ((n = gzread(in, buf, sizeof buf)) > 0) data.append(buf, static_cast<size_t>(n));
  gzclose_r(in);
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    if (end > start) records.push_back(nlohmann::json::parse(data.substr(start, end - start)));
    start = end + 1;
  }
  return records;
}

}  // namespace pipette::testing
