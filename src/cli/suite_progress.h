// Progress of a suite run: a bar with cells done/total and the estimated time left on a
// terminal, plain lines otherwise (DESIGN.md 6: "Long work shows a progress bar on a terminal and
// plain lines otherwise"); and the summary at the end.
#pragma once

#include <chrono>
#include <map>
#include <ostream>
#include <string>

#include "pipette/suite.h"

namespace pipette::cli {

// One line for a settled (or planned) cell, e.g. "[ 12/36] ok       stories260K-Q8_0.gguf
// decode_throughput_256_100 threads=1: 1602.3 tokens/s (2.1 s)", or after a readiness wait
// "... (1m12s, of which 1m05s waiting for the device to be ready): readiness held by other
// processes busy up to 0.85 > 0.30" (the reason is the outcome's note, set by RunSuite).
std::string CellLine(const SuiteCellOutcome& outcome, int total);

// "1h02m", "3m05s", "42s".
std::string Duration(double seconds);

// Not thread-safe: call from the thread that runs the suite.
class SuiteProgress {
 public:
  // `plan`: PlanSuite's outcomes; the time left is estimated over its cells "to run".
  // `bar`: redraw one status line (a terminal); otherwise one plain line per settled cell.
  // `quiet`: print nothing.
  SuiteProgress(const std::vector<SuiteCellOutcome>& plan, bool bar, bool quiet,
                std::ostream& out);

  void Start(const Suite& suite, const SuiteRunOptions& options);
  void CellStarted(const SuiteCell& cell);
  void CellProgress(const std::string& line);
  void CellFinished(const SuiteCellOutcome& outcome, int done);
  void Clear();  // erases the status line (terminal only)

  // Seconds left: the mean duration of the cells measured so far (of the same benchmark when
  // one ran, else of all) times each cell still to run; nullopt before any cell was measured.
  // Durations leave the readiness waits out (seconds - readiness_wait_s of each cell), so one
  // long wait does not inflate the estimate of every cell after it; shown as "3m05s left (not
  // counting waits)".
  std::optional<double> EstimateLeft() const;

 private:
  void Draw();

  int total_;
  bool bar_, quiet_;
  std::ostream& out_;
  int done_ = 0, measured_ = 0, ok_ = 0, failed_ = 0, skipped_ = 0;
  int planned_skipped_ = 0, planned_invalid_ = 0;
  std::string current_, detail_;
  std::string current_benchmark_;
  std::map<std::string, std::pair<double, int>> seconds_by_benchmark_;  // sum, count
  double seconds_ = 0;
  std::map<int, std::string> pending_;  // cells still to run: index -> benchmark id
  std::chrono::steady_clock::time_point cell_t0_;
};

// The end of a run: counts, then every failed, invalid and not-run cell with its reason and log.
void PrintSummary(const Suite& suite, const SuiteRun& run, const SuiteRunOptions& options,
                  std::ostream& out);

}  // namespace pipette::cli
