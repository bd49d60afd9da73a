// Suite progress and summary (see suite_progress.h).
#include "cli/suite_progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "pipette/store.h"

namespace pipette::cli {
namespace {

std::string Describe(const SuiteCell& c) {
  std::string settings;
  for (const auto& [k, v] : c.settings.items()) {
    settings += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  // The runtime is named when it is not the default one.
  const std::string runtime = c.runtime_label == "llamacpp" ? "" : " on " + c.runtime_label;
  return fmt::format("{} {}{}{}", std::filesystem::path(c.model_path).filename().string(),
                     c.benchmark_id, settings, runtime);
}

// A headline for a cell's line, in fixed notation with at least three significant digits:
// "1602.3 tokens/s", "12.50 MiB", "0.000000982 nats".
std::string Value(double v, const std::string& unit) {
  if (unit == "bytes") return fmt::format("{:.2f} MiB", v / (1 << 20));
  if (std::abs(v) >= 100 || v == 0 || !std::isfinite(v)) return fmt::format("{:.1f} {}", v, unit);
  const int decimals = 2 - static_cast<int>(std::floor(std::log10(std::abs(v))));
  return fmt::format("{:.{}f} {}", v, std::min(decimals, 12), unit);
}

// The estimate leaves readiness waits out (they depend on the machine, not on the cells).
std::string TimeLeft(double seconds) { return Duration(seconds) + " left (not counting waits)"; }

}  // namespace

std::string Duration(double seconds) {
  const auto s = static_cast<long>(std::llround(std::max(0.0, seconds)));
  if (s >= 3600) return fmt::format("{}h{:02d}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string CellLine(const SuiteCellOutcome& o, int total) {
  const int width = static_cast<int>(std::to_string(total).size());
  std::string line = fmt::format("[{:>{}}/{}] {:<8} {}", o.cell.index, width, total, o.status,
                                 Describe(o.cell));
  if (!o.cell.factor.empty()) line += " (" + o.cell.factor + ")";
  if (o.headline) line += ": " + Value(*o.headline, o.headline_unit);
  if (o.status == "skipped" && !o.result_id.empty()) {
    line += " (stored ok as " + o.result_id + ")";
  }
  if (o.seconds > 0) {
    line += " (" + Duration(o.seconds);
    if (o.readiness_wait_s >= 3 && o.readiness_wait_s >= 0.1 * o.seconds) {  // not the polls' own window
      line += ", of which " + Duration(o.readiness_wait_s) + " waiting for the device to be ready";
    }
    line += ")";
  }
  if (!o.reason.empty()) line += ": " + o.reason;
  return line;
}

SuiteProgress::SuiteProgress(const std::vector<SuiteCellOutcome>& plan, bool bar, bool quiet,
                             std::ostream& out)
    : total_(static_cast<int>(plan.size())), bar_(bar && !quiet), quiet_(quiet), out_(out) {
  for (const auto& o : plan) {
    if (o.status == "to run") pending_[o.cell.index] = o.cell.benchmark_id;
    planned_skipped_ += o.status == "skipped";
    planned_invalid_ += o.status == "invalid";
  }
}

void SuiteProgress::Start(const Suite& suite, const SuiteRunOptions& options) {
  if (quiet_) return;
  out_ << fmt::format("suite {}: {} cells, {} to run, {} already stored ok{}; logs in {}\n",
                      suite.name, total_, pending_.size(), planned_skipped_,
                      planned_invalid_ ? fmt::format(", {} invalid", planned_invalid_) : "",
                      options.logs_dir)
       << std::flush;
}

void SuiteProgress::CellStarted(const SuiteCell& cell) {
  current_ = fmt::format("[{}] {}", cell.index, Describe(cell));
  current_benchmark_ = cell.benchmark_id;
  detail_.clear();
  cell_t0_ = std::chrono::steady_clock::now();
  Draw();
}

void SuiteProgress::CellProgress(const std::string& line) {
  detail_ = line;
  Draw();
}

std::optional<double> SuiteProgress::EstimateLeft() const {
  if (measured_ == 0) return std::nullopt;
  const double mean = seconds_ / measured_;
  double left = 0;
  for (const auto& [index, benchmark] : pending_) {
    const auto it = seconds_by_benchmark_.find(benchmark);
    left += it != seconds_by_benchmark_.end() ? it->second.first / it->second.second : mean;
  }
  if (!current_.empty()) {  // the running cell is pending too; count only what remains of it
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                         cell_t0_).count();
    const auto it = seconds_by_benchmark_.find(current_benchmark_);
    const double expected = it != seconds_by_benchmark_.end() ? it->second.first / it->second.second
                                                              : mean;
    left -= std::min(elapsed, expected);
  }
  return std::max(0.0, left);
}

void SuiteProgress::CellFinished(const SuiteCellOutcome& o, int done) {
  done_ = done;
  pending_.erase(o.cell.index);
  if (o.status == "ok") ++ok_;
  if (o.status == "failed" || o.status == "invalid") ++failed_;
  if (o.status == "skipped") ++skipped_;
  if (o.seconds > 0) {
    // A readiness wait says how busy or hot the machine was, not how long the benchmark takes.
    const double working = std::max(0.0, o.seconds - o.readiness_wait_s);
    ++measured_;
    seconds_ += working;
    auto& [sum, count] = seconds_by_benchmark_[o.cell.benchmark_id];
    sum += working;
    ++count;
  }
  current_.clear();
  detail_.clear();
  if (quiet_) return;
  std::string line = CellLine(o, total_);
  if (!bar_) {
    if (auto left = EstimateLeft(); left && !pending_.empty()) line += "; " + TimeLeft(*left);
    out_ << line << "\n" << std::flush;
    return;
  }
  out_ << "\r\033[K" << line << "\n";
  Draw();
}

void SuiteProgress::Draw() {
  if (!bar_) return;
  constexpr int kWidth = 24;
  const int filled = total_ > 0 ? done_ * kWidth / total_ : kWidth;
  const auto left = EstimateLeft();
  std::string status = fmt::format("[{}{}] {}/{}  ok {}  failed {}  skipped {}  {}",
                                   std::string(filled, '#'), std::string(kWidth - filled, '.'),
                                   done_, total_, ok_, failed_, skipped_,
                                   left ? TimeLeft(*left) : "time left: after 1 cell");
  if (!current_.empty()) status += "  " + current_ + (detail_.empty() ? "" : ": " + detail_);
  if (status.size() > 200) status.resize(200);
  out_ << "\r\033[K" << status << std::flush;
}

void SuiteProgress::Clear() {
  if (bar_) out_ << "\r\033[K" << std::flush;
}

void PrintSummary(const Suite& suite, const SuiteRun& run, const SuiteRunOptions& options,
                  std::ostream& out) {
  const int total = static_cast<int>(run.outcomes.size());
  const int ok = run.Count("ok"), skipped = run.Count("skipped");
  out << fmt::format("suite {}: {} cells: {} ok ({} measured now, {} stored before), {} failed, "
                     "{} invalid, {} not run{}\n",
                     suite.name, total, ok + skipped, ok, skipped, run.Count("failed"),
                     run.Count("invalid"), run.Count("not run"),
                     run.interrupted ? " (interrupted)" : "");
  for (const char* status : {"failed", "invalid", "not run"}) {
    if (run.Count(status) == 0) continue;
    out << status << ":\n";
    for (const auto& o : run.outcomes) {
      if (o.status != status) continue;
      out << "  " << CellLine(o, total) << "\n";
      if (!o.log_path.empty()) out << "      log: " << o.log_path << "\n";
    }
  }
  const std::string flag =
      options.store_path == DefaultStorePath() ? "" : " --store " + options.store_path;
  out << "results in " << options.store_path << " (`pipette" << flag << " results list`, `pipette"
      << flag << " report -o report.html`)\n";
}

}  // namespace pipette::cli
