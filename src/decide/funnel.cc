// Running the decision funnel: screen, measure, stabilize (pipette/decide.h).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "base/ids.h"
#include "decide/fleet_cells.h"
#include "pipette/benchmark.h"
#include "pipette/decide.h"
#include "pipette/store.h"
#include "platform/interrupt.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSchema = "pipette.funnel/1";

// Which metrics the decision reads from a benchmark of each type.
std::vector<std::string> JudgedMetrics(BenchmarkType type, const Decision& d) {
  const Limits& l = d.limits;
  auto objective = [&](FunnelObjective o) {
    return std::find(d.objectives.begin(), d.objectives.end(), o) != d.objectives.end();
  };
  std::vector<std::string> out;
  auto power = [&] {
    if (l.max_power_w) out.push_back("average_power");
    if (l.max_energy_per_token_mj) out.push_back("energy_per_token");
  };
  switch (type) {
    case BenchmarkType::kMemory:
      if (l.max_memory_bytes || objective(FunnelObjective::kMemory)) out.push_back("max_host_usage");
      break;
    case BenchmarkType::kDecode:
      if (l.min_decode_throughput || objective(FunnelObjective::kDecode)) {
        out.push_back("decode_throughput");
      }
      power();
      break;
    case BenchmarkType::kPrefill:
      if (l.max_ttft_ms) out.push_back("ttft");
      power();
      break;
    case BenchmarkType::kEndToEnd:
      if (l.max_latency_ms) out.push_back("end_to_end_latency");
      if (l.max_ttft_ms) out.push_back("ttft");
      power();
      break;
    case BenchmarkType::kKlDivergence:
      if (l.max_quality_drop || objective(FunnelObjective::kQuality)) out.push_back("quality");
      break;
    case BenchmarkType::kEval:
      if (!l.min_accuracy.empty() || !l.max_accuracy_drop.empty() ||
          objective(FunnelObjective::kQuality)) {
        out.push_back("accuracy");
      }
      break;
    case BenchmarkType::kSoak:
      break;
  }
  return out;
}

// A cell's cost in prefill-token equivalents, to order cells cheapest first: a decoded token
// costs about ten prefilled ones on a CPU (prefill is batched); timed benchmarks run min_reps
// repetitions plus the warm-up, kl_divergence runs the model and its reference over the context
// once, an eval generates up to max_tokens for each of its questions (hours: always last).
double CellCost(const BenchmarkSpec& b, const HarnessPolicy& policy) {
  const double once = b.prefill_tokens + 10.0 * b.decode_tokens;
  switch (b.type) {
    case BenchmarkType::kKlDivergence:
      return 2.0 * b.prefill_tokens;
    case BenchmarkType::kEval:
      return 1e12;
    case BenchmarkType::kSoak:
      return 1e11;
    default:
      return (policy.min_reps + policy.warmup_runs) * (once + 1);
  }
}

bool Repeatable(BenchmarkType t) {
  return t == BenchmarkType::kMemory || t == BenchmarkType::kDecode ||
         t == BenchmarkType::kPrefill || t == BenchmarkType::kEndToEnd;
}

struct DecisionBenchmark {
  std::string id;
  BenchmarkSpec spec;
  std::vector<std::string> metrics;
};

struct Config {
  FunnelConfiguration view;
  std::map<std::string, SuiteCell> cells;  // benchmark id -> its cell
  std::vector<std::string> benchmarks;     // the decision benchmarks that apply, suite order
  std::vector<std::string> screen;         // the screen's benchmarks, cheapest first
  bool is_reference = false;               // the reference of a kl_divergence model
};

std::string ConfigKey(const SuiteCell& c) {
  return c.model_path + "|" + c.runtime_label + "|" + c.settings.dump() + "|" + c.device_uri;
}

std::string CellKey(const std::string& stage, int round, const std::string& config,
                    const std::string& benchmark) {
  return fmt::format("{}/{}/{}/{}", stage, round, benchmark, config);
}

// "stories260K-Q8_0 threads=2": the model file's stem, then the settings and device that differ.
void NameConfigs(std::vector<Config>& configs) {
  std::map<std::string, std::set<std::string>> values;
  std::set<std::string> devices, runtimes;
  for (const Config& c : configs) {
    for (const auto& [k, v] : c.view.settings.items()) values[k].insert(v.dump());
    devices.insert(c.view.device_uri);
    runtimes.insert(c.cells.begin()->second.runtime_label);
  }
  for (Config& c : configs) {
    std::string name = fs::path(c.view.model_path).stem().string();
    if (runtimes.size() > 1) name += " " + c.cells.begin()->second.runtime_label;
    for (const auto& [k, v] : c.view.settings.items()) {
      if (values[k].size() > 1) name += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    if (devices.size() > 1) name += " @" + c.view.device_uri;
    c.view.name = name;
  }
}

std::vector<std::string> ChangedPaths(const json& before, const json& after) {
  std::vector<std::string> out;
  for (const json& op : json::diff(before, after)) {
    std::string path = op.value("path", "");
    std::replace(path.begin(), path.end(), '/', '.');
    if (!path.empty() && path[0] == '.') path.erase(0, 1);
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
  return out;
}

std::string JoinList(const std::vector<std::string>& v, size_t most = 6) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < most; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > most) s += fmt::format(" and {} more", v.size() - most);
  return s;
}

Status WriteJson(const std::string& path, const json& j) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out.good()) return MakeError(tmp + ": cannot write the funnel's state; check the folder");
  }
  fs::rename(tmp, path, ec);
  if (ec) return MakeError(path + ": cannot write the funnel's state (" + ec.message() + ")");
  return {};
}

std::string DefaultStatePath(const DecisionFile& file, const DecideOptions& options);

class Funnel {
 public:
  Funnel(const DecisionFile& file, const DecideOptions& options, const DecideHooks& hooks)
      : file_(file), d_(file.decision), options_(options), hooks_(hooks) {}

  Result<FunnelVerdict> Run();

 private:
  Status Setup();
  Status LoadState();
  Status Save();
  // Cells the funnel may run at once: (configuration index, benchmark).
  using Batch = std::vector<std::pair<size_t, std::string>>;
  SuiteCell CellFor(const Config& c, const std::string& benchmark) const;
  bool Ran(const std::string& cell_key) const;
  double SecondsLeft(const std::string& stage, int index, int planned) const;
  // Records a cell's outcome in the state (and saves it).
  Status Note(const std::string& stage, int round, const Config& c, const std::string& benchmark,
              const SuiteCellOutcome& o);
  Status RunCell(const std::string& stage, int round, Config& c, const std::string& benchmark,
                 const HarnessPolicy& policy, int index, int planned);
  // On this machine: one cell after another, judged after each (a configuration that leaves
  // runs no more). On a fleet: one plan of them all, judged when it is done.
  // `budget_spent` (optional): no cell starts once the budget is spent, and it is set then.
  Status RunBatch(const std::string& stage, int round, const Batch& batch,
                  const HarnessPolicy& policy, int planned, bool* budget_spent = nullptr);
  const json* Record(const std::string& id);
  std::vector<const json*> OkResults(const Config& c, const std::string& benchmark);
  bool Measured(const Config& c, const std::string& benchmark);
  FunnelCandidate Candidate(const Config& c);
  FunnelJudgement Judge();
  double Spent() const;
  bool OverBudget() const;
  double StageSeconds(const std::string& stage, int* cells) const;
  FunnelVerdict Provisional();
  json VerdictJson(const FunnelVerdict& v) const;

  const DecisionFile& file_;
  const Decision& d_;
  DecideOptions options_;
  const DecideHooks& hooks_;
  std::unique_ptr<ResultStore> store_;
  std::vector<Config> configs_;
  std::vector<DecisionBenchmark> benchmarks_;
  std::vector<std::string> skipped_;
  FunnelRule rule_;
  int screen_reps_ = 0;
  std::string stage_ = "screen";
  json state_;
  std::map<std::string, json> records_;
  std::vector<std::string> notes_;
  std::unique_ptr<FleetCells> fleet_;  // set: cells run as plans (DecideOptions::fleet)
  int stage_index_ = 0;                // cells of the current stage considered so far
  bool interrupted_ = false;
  bool final_ = false;  // the verdict is the run's last word (not a provisional one)
  FunnelJudgement last_;
};

Status Funnel::Setup() {
  const Suite& suite = file_.suite;
  if (options_.store_path.empty()) options_.store_path = DefaultStorePath();
  const fs::path dir = fs::absolute(options_.store_path).parent_path() / "decide";
  if (options_.state_path.empty()) options_.state_path = DefaultStatePath(file_, options_);
  if (options_.logs_dir.empty()) options_.logs_dir = (dir / suite.name / "logs").string();
  auto store = ResultStore::Open(options_.store_path);
  if (!store) return store.error();
  store_ = std::move(*store);
  if (options_.fleet) {
    if (!suite.devices.empty()) {
      return MakeError(suite.path + ": [[devices]] are measured from this machine, but on a fleet "
                                    "each worker measures its own device: remove [[devices]], "
                                    "or require the workers you want by label");
    }
    fleet_ = std::make_unique<FleetCells>(*options_.fleet);
  }

  BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  if (!suite.benchmarks_dir.empty()) {
    if (auto s = catalog.AddDirectory(suite.benchmarks_dir); !s) return s.error();
  } else if (std::error_code ec; fs::is_directory(DefaultUserBenchmarkDir(), ec)) {
    (void)catalog.AddDirectory(DefaultUserBenchmarkDir());
  }
  int measures = 0;
  for (const std::string& id : suite.benchmarks) {
    auto spec = catalog.Find(id);
    if (!spec) return spec.error();
    DecisionBenchmark b{id, *spec, JudgedMetrics(spec->type, d_)};
    if (b.metrics.empty()) {
      skipped_.push_back(id);
      continue;
    }
    measures += static_cast<int>(b.metrics.size());
    benchmarks_.push_back(std::move(b));
  }
  auto cells = ExpandSuite(suite);
  if (!cells) return cells.error();
  std::set<std::string> references;
  for (const auto& [model, ref] : suite.references) references.insert(ref);
  std::map<std::string, size_t> index;
  for (const SuiteCell& cell : *cells) {
    const std::string key = ConfigKey(cell);
    auto [it, added] = index.emplace(key, configs_.size());
    if (added) {
      Config c;
      c.view.key = key;
      c.view.model_path = cell.model_path;
      c.view.device_uri = cell.device_uri;
      c.view.settings = cell.settings;
      c.view.stage = "screen";
      c.is_reference = references.count(cell.model_path) > 0;
      configs_.push_back(std::move(c));
    }
    configs_[it->second].cells[cell.benchmark_id] = cell;
  }
  for (Config& c : configs_) {
    const bool has_reference = suite.references.count(c.view.model_path) > 0;
    std::map<std::string, const DecisionBenchmark*> cheapest;  // metric -> benchmark
    for (const DecisionBenchmark& b : benchmarks_) {
      if (!c.cells.count(b.id)) continue;
      if (b.spec.type == BenchmarkType::kKlDivergence && !has_reference) continue;
      c.benchmarks.push_back(b.id);
      // Evals take minutes to hours: never in the screen.
      if (b.spec.type == BenchmarkType::kEval) continue;
      for (const std::string& m : b.metrics) {
        const DecisionBenchmark*& best = cheapest[m];
        if (!best || CellCost(b.spec, file_.suite.policy) < CellCost(best->spec, file_.suite.policy)) {
          best = &b;
        }
      }
    }
    for (const auto& [m, b] : cheapest) {
      if (std::find(c.screen.begin(), c.screen.end(), b->id) == c.screen.end()) {
        c.screen.push_back(b->id);
      }
    }
  }
  // Cheapest first, in the screen and in the measure: a configuration that fails on a cheap
  // benchmark leaves before its expensive cells run.
  auto cheaper = [&](const std::string& a, const std::string& b) {
    auto spec = [&](const std::string& id) -> const BenchmarkSpec& {
      return std::find_if(benchmarks_.begin(), benchmarks_.end(),
                          [&](const auto& x) { return x.id == id; })->spec;
    };
    return CellCost(spec(a), file_.suite.policy) < CellCost(spec(b), file_.suite.policy);
  };
  for (Config& c : configs_) {
    std::stable_sort(c.screen.begin(), c.screen.end(), cheaper);
    std::stable_sort(c.benchmarks.begin(), c.benchmarks.end(), cheaper);
  }
  NameConfigs(configs_);
  rule_.limits = d_.limits;
  rule_.objectives = d_.objectives;
  rule_.alpha = d_.alpha;
  rule_.looks = 2 + d_.measure_rounds;
  rule_.measures_per_candidate = std::max(measures, 1);
  const double confidence = FunnelConfidence(rule_, configs_.size());
  screen_reps_ = d_.screen_repetitions > 0 ? d_.screen_repetitions
                                           : FunnelMinRepetitions(confidence) + 3;
  return LoadState();
}

// What changed in `file` since the funnel of `old` started: the paths of the suite and of the
// decision (limits aside); empty when it may be resumed.
std::vector<std::string> ChangedSince(const json& old, const DecisionFile& file) {
  const json& was = old["file"];
  std::vector<std::string> changed;
  for (const std::string& p : ChangedPaths(was.value("suite", json()), file.suite_json)) {
    changed.push_back(p);
  }
  for (const std::string& p : ChangedPaths(was.value("decision", json()), file.decision_json)) {
    changed.push_back("decision." + p);
  }
  return changed;
}

Result<json> ReadState(const std::string& path) {
  std::ifstream in(path);
  json old = json::parse(in, nullptr, false);
  if (old.is_discarded() || !old.is_object() || old.value("schema", "") != kSchema ||
      !old.contains("file") || !old.contains("cells")) {
    return MakeError(path + ": not a funnel state file; pass --restart to start the funnel "
                            "again, or --state FILE for another");
  }
  return old;
}

Status Mismatch(const DecisionFile& file, const std::vector<std::string>& changed) {
  return MakeError(fmt::format(
      "{}: the decision file changed since this funnel started ({}); only [decision.limits] "
      "may change on a resume: pass --restart to start again, or --state FILE to keep both",
      file.suite.path, JoinList(changed)));
}

Status Funnel::LoadState() {
  json fresh = {{"schema", kSchema},
                {"decision_file", fs::absolute(file_.suite.path).string()},
                {"name", file_.suite.name},
                {"store", fs::absolute(options_.store_path).string()},
                {"started_at", NowRfc3339()},
                {"file", {{"suite", file_.suite_json}, {"decision", file_.decision_json},
                          {"limits", file_.limits_json}}},
                {"cells", json::array()},
                {"plans", json::array()},
                {"left", json::object()}};
  std::error_code ec;
  if (!fs::exists(options_.state_path, ec)) {
    state_ = std::move(fresh);
    return Save();
  }
  if (options_.restart) {
    // --restart replaces a funnel's state, never another file a mistyped --state names.
    if (auto old = ReadState(options_.state_path); !old) {
      return MakeError(options_.state_path + ": not a funnel state file, so --restart leaves it "
                                             "alone; give --state a new file");
    }
    state_ = std::move(fresh);
    return Save();
  }
  auto old = ReadState(options_.state_path);
  if (!old) return old.error();
  const json was = (*old)["file"];
  if (const auto changed = ChangedSince(*old, file_); !changed.empty()) {
    return Mismatch(file_, changed);
  }
  state_ = std::move(*old);
  if (was.value("limits", json()) != file_.limits_json) {
    const auto paths = ChangedPaths(was.value("limits", json()), file_.limits_json);
    std::vector<std::string> named;
    for (const auto& p : paths) named.push_back("limits." + p);
    notes_.push_back("the limits changed since the funnel started (" + JoinList(named) +
                     "): every configuration was judged again on what was measured");
    state_["left"] = json::object();
    state_["file"]["limits"] = file_.limits_json;
    return Save();
  }
  return {};
}

Status Funnel::Save() {
  state_["updated_at"] = NowRfc3339();
  // While it runs (or after an interrupt), the verdict so far: who left where, the time spent.
  if (!final_ && !configs_.empty()) state_["verdict"] = VerdictJson(Provisional());
  return WriteJson(options_.state_path, state_);
}

const json* Funnel::Record(const std::string& id) {
  if (auto it = records_.find(id); it != records_.end()) return &it->second;
  auto r = store_->Get(id);
  if (!r || !r->has_value()) return nullptr;
  return &(records_[id] = std::move(**r));
}

std::vector<const json*> Funnel::OkResults(const Config& c, const std::string& benchmark) {
  std::vector<const json*> out;
  for (const json& cell : state_["cells"]) {
    if (cell.value("config", "") != c.view.key || cell.value("benchmark", "") != benchmark ||
        cell.value("status", "") != "ok") {
      continue;
    }
    if (const json* r = Record(cell.value("result_id", ""))) out.push_back(r);
  }
  return out;
}

bool Funnel::Measured(const Config& c, const std::string& benchmark) {
  for (const json& cell : state_["cells"]) {
    if (cell.value("config", "") == c.view.key && cell.value("benchmark", "") == benchmark) {
      return true;
    }
  }
  return false;
}

FunnelCandidate Funnel::Candidate(const Config& c) {
  FunnelCandidate out;
  out.name = c.view.name;
  std::string stem = fs::path(c.view.model_path).stem().string();
  if (const auto dash = stem.find_last_of("-._"); dash != std::string::npos) stem.resize(dash);
  out.family = stem;
  out.complete = true;
  for (const std::string& id : c.benchmarks) {
    const DecisionBenchmark& b = *std::find_if(benchmarks_.begin(), benchmarks_.end(),
                                               [&](const auto& x) { return x.id == id; });
    const auto results = OkResults(c, id);
    if (results.empty()) out.complete = false;
    for (const std::string& metric : b.metrics) {
      FunnelMeasure m;
      m.benchmark_id = id;
      m.metric = metric;
      if (Repeatable(b.spec.type)) {
        for (const json* r : results) {
          for (const json& s : r->value("samples", json::array())) {
            if (s.contains(metric) && s[metric].is_number()) m.samples.push_back(s[metric].get<double>());
          }
        }
        if (results.empty()) continue;
        out.measures.push_back(std::move(m));
      } else if (!results.empty() && metric == "quality") {
        const json& t = results.back()->at("metrics").value("top1_agreement", json::object());
        m.kind = FunnelMeasure::Kind::kProportion;
        m.trials = t.value("n", 0LL);
        m.successes = std::llround(t.value("median", 0.0) * static_cast<double>(m.trials));
        out.measures.push_back(std::move(m));
      } else if (!results.empty() && metric == "accuracy") {
        const json& r = *results.back();
        m.kind = FunnelMeasure::Kind::kClusters;
        m.dataset = r.value("eval", json::object()).value("dataset", "");
        std::map<std::string, std::pair<int, int>> questions;
        for (const json& a : r.value("completions", json::array())) {
          auto& q = questions[a.value("id", "")];
          q.first += a.value("correct", false) ? 1 : 0;
          q.second += 1;
        }
        for (const auto& [id, q] : questions) m.clusters.push_back(q);
        out.measures.push_back(std::move(m));
      }
    }
  }
  // A reference model agrees with itself: quality 100 on every kl_divergence benchmark.
  if (c.is_reference) {
    for (const DecisionBenchmark& b : benchmarks_) {
      if (b.spec.type != BenchmarkType::kKlDivergence || !c.cells.count(b.id)) continue;
      FunnelMeasure m;
      m.benchmark_id = b.id;
      m.metric = "quality";
      m.kind = FunnelMeasure::Kind::kExact;
      m.value = 100;
      out.measures.push_back(std::move(m));
    }
  }
  return out;
}

FunnelJudgement Funnel::Judge() {
  std::vector<FunnelCandidate> candidates;
  for (const Config& c : configs_) candidates.push_back(Candidate(c));
  last_ = JudgeFunnel(candidates, rule_);
  json& left = state_["left"];
  for (size_t i = 0; i < configs_.size(); ++i) {
    Config& c = configs_[i];
    const FunnelStanding& s = last_.standings[i];
    c.view.open_limits = s.open_limits;
    if (left.contains(c.view.key)) continue;
    // A failed cell takes the configuration out: it cannot be shipped if it cannot run.
    std::string failure;
    for (const json& cell : state_["cells"]) {
      if (cell.value("config", "") == c.view.key && cell.value("status", "") != "ok") {
        failure = fmt::format("{} did not measure: {}", cell.value("benchmark", ""),
                              cell.value("reason", ""));
      }
    }
    if (!s.out && failure.empty()) continue;
    left[c.view.key] = {{"stage", stage_}, {"reason", failure.empty() ? s.reason : failure}};
  }
  for (Config& c : configs_) {
    if (!left.contains(c.view.key)) continue;
    const bool was_out = c.view.out;
    c.view.out = true;
    c.view.stage = left[c.view.key].value("stage", "");
    c.view.reason = left[c.view.key].value("reason", "");
    if (!was_out && hooks_.left) hooks_.left(c.view);
  }
  return last_;
}

double Funnel::StageSeconds(const std::string& stage, int* cells) const {
  double s = 0;
  int n = 0;
  for (const json& cell : state_["cells"]) {
    if (!stage.empty() && cell.value("stage", "") != stage) continue;
    s += cell.value("seconds", 0.0);
    ++n;
  }
  if (cells) *cells = n;
  return s;
}

double Funnel::Spent() const { return StageSeconds("", nullptr); }

bool Funnel::OverBudget() const {
  return d_.budget_minutes && Spent() >= *d_.budget_minutes * 60;
}

SuiteCell Funnel::CellFor(const Config& c, const std::string& benchmark) const {
  if (auto it = c.cells.find(benchmark); it != c.cells.end()) return it->second;
  SuiteCell cell = c.cells.begin()->second;  // the soak, which the suite's matrix does not list
  cell.benchmark_id = benchmark;
  return cell;
}

bool Funnel::Ran(const std::string& key) const {
  for (const json& cell : state_["cells"]) {
    if (cell.value("key", "") == key) return true;
  }
  return false;
}

Status Funnel::Note(const std::string& stage, int round, const Config& c,
                    const std::string& benchmark, const SuiteCellOutcome& o) {
  if (hooks_.cell_finished) hooks_.cell_finished(stage, o);
  state_["cells"].push_back({{"key", CellKey(stage, round, c.view.key, benchmark)},
                             {"stage", stage},
                             {"round", round},
                             {"config", c.view.key},
                             {"configuration", c.view.name},
                             {"benchmark", benchmark},
                             {"status", o.status},
                             {"result_id", o.result_id},
                             {"config_id", o.config_id},
                             {"reason", o.reason},
                             {"seconds", o.seconds}});
  return Save();
}

double Funnel::SecondsLeft(const std::string& stage, int index, int planned) const {
  int done = 0;
  const double seconds = StageSeconds(stage, &done);
  return done > 0 ? seconds / done * (planned - index + 1) : -1;
}

Status Funnel::RunCell(const std::string& stage, int round, Config& c, const std::string& benchmark,
                       const HarnessPolicy& policy, int index, int planned) {
  if (Ran(CellKey(stage, round, c.view.key, benchmark))) return {};  // before an interrupt
  const SuiteCell cell = CellFor(c, benchmark);
  Suite suite = file_.suite;
  suite.policy = policy;
  SuiteRunOptions run_options;
  run_options.store_path = options_.store_path;
  run_options.logs_dir = options_.logs_dir;
  run_options.driver_path = options_.driver_path;
  run_options.run_stored = true;
  if (hooks_.cell_started) {
    hooks_.cell_started(stage, cell, index, planned, SecondsLeft(stage, index, planned));
  }
  SuiteHooks suite_hooks;
  suite_hooks.cell_progress = hooks_.cell_progress;
  auto run = RunSuite(suite, {cell}, run_options, suite_hooks);
  if (!run) return run.error();
  if (run->interrupted) {
    interrupted_ = true;
    return {};
  }
  return Note(stage, round, c, benchmark, run->outcomes.at(0));
}

Status Funnel::RunBatch(const std::string& stage, int round, const Batch& batch,
                        const HarnessPolicy& policy, int planned, bool* budget_spent) {
  auto over_budget = [&] {
    if (!budget_spent || !OverBudget()) return false;
    *budget_spent = true;
    return true;
  };
  if (!fleet_) {
    for (const auto& [i, b] : batch) {
      if (configs_[i].view.out || interrupted_) continue;
      if (!Ran(CellKey(stage, round, configs_[i].view.key, b)) && over_budget()) break;
      ++stage_index_;
      if (auto s = RunCell(stage, round, configs_[i], b, policy, stage_index_, planned); !s) {
        return s;
      }
      Judge();
    }
    return {};
  }
  Batch todo;
  std::vector<SuiteCell> cells;
  json keys = json::array();
  for (const auto& [i, b] : batch) {
    const std::string key = CellKey(stage, round, configs_[i].view.key, b);
    if (configs_[i].view.out || Ran(key)) continue;
    todo.emplace_back(i, b);
    cells.push_back(CellFor(configs_[i], b));
    keys.push_back(key);
  }
  if (todo.empty() || interrupted_) return {};
  if (over_budget()) return {};
  // A plan submitted for these very cells before an interrupt: wait for it, do not submit again.
  std::string plan_id;
  for (const json& p : state_["plans"]) {
    if (p.value("keys", json()) == keys) plan_id = p.value("plan_id", "");
  }
  Suite suite = file_.suite;
  suite.policy = policy;
  if (plan_id.empty()) {
    std::vector<std::string> unassignable;
    auto id = fleet_->Submit(suite, cells,
                             fmt::format("{}: decide {} {}", file_.suite.name, stage,
                                         state_["plans"].size() + 1),
                             *store_, &unassignable);
    if (!id) return id.error();
    plan_id = *id;
    state_["plans"].push_back(
        {{"plan_id", plan_id}, {"stage", stage}, {"round", round}, {"keys", keys}});
    if (auto s = Save(); !s) return s;
    if (hooks_.plan_progress) {
      hooks_.plan_progress(fmt::format("{}: plan {} of {} cells on {}", stage, plan_id,
                                       cells.size(), options_.fleet->server_url));
      for (const std::string& line : unassignable) hooks_.plan_progress(line);
    }
  }
  bool interrupted = false;
  auto outcomes = fleet_->Await(plan_id, cells, *store_, hooks_.plan_progress, &interrupted);
  if (!outcomes) return outcomes.error();
  if (interrupted) {
    interrupted_ = true;
    return {};
  }
  for (size_t k = 0; k < todo.size(); ++k) {
    ++stage_index_;
    if (hooks_.cell_started) hooks_.cell_started(stage, cells[k], stage_index_, planned, -1);
    if (auto s = Note(stage, round, configs_[todo[k].first], todo[k].second, (*outcomes)[k]); !s) {
      return s;
    }
  }
  Judge();
  return {};
}

Result<FunnelVerdict> Funnel::Run() {
  if (auto s = Setup(); !s) return s.error();
  InstallInterruptHandler();
  HarnessPolicy screen_policy = file_.suite.policy;
  screen_policy.min_reps = screen_policy.max_reps = screen_reps_;
  const HarnessPolicy& policy = file_.suite.policy;

  // Screen: on this machine each configuration's screen cells together, cheapest first (it
  // leaves at its first failure); on a fleet the k-th screen cell of every configuration at once.
  stage_ = "screen";
  stage_index_ = 0;
  Judge();
  int planned = 0;
  size_t widest = 0;
  for (const Config& c : configs_) {
    planned += static_cast<int>(c.screen.size());
    widest = std::max(widest, c.screen.size());
  }
  std::vector<Batch> screen;
  if (!fleet_) {
    for (size_t i = 0; i < configs_.size(); ++i) {
      for (const std::string& b : configs_[i].screen) screen.push_back({{i, b}});
    }
  } else {
    for (size_t k = 0; k < widest; ++k) {
      Batch batch;
      for (size_t i = 0; i < configs_.size(); ++i) {
        if (k < configs_[i].screen.size()) batch.emplace_back(i, configs_[i].screen[k]);
      }
      screen.push_back(std::move(batch));
    }
  }
  for (const Batch& batch : screen) {
    if (interrupted_) break;
    if (auto s = RunBatch("screen", 0, batch, screen_policy, planned); !s) return s.error();
  }

  // Measure: every benchmark of the decision once, then rounds where it is undecided.
  stage_ = "measure";
  stage_index_ = 0;
  planned = 0;
  for (const Config& c : configs_) {
    if (c.view.out) continue;
    for (const std::string& b : c.benchmarks) planned += !Measured(c, b);
  }
  // Cheapest cells of every survivor first, so that whoever fails on one leaves before the
  // expensive cells of anyone run; on a fleet, the cells of one cost form a plan.
  std::vector<std::pair<size_t, std::string>> first;
  for (size_t i = 0; i < configs_.size(); ++i) {
    for (const std::string& b : configs_[i].benchmarks) {
      if (!Measured(configs_[i], b)) first.emplace_back(i, b);
    }
  }
  auto cost = [&](const std::string& id) {
    return CellCost(std::find_if(benchmarks_.begin(), benchmarks_.end(),
                                 [&](const auto& d) { return d.id == id; })->spec,
                    policy);
  };
  std::stable_sort(first.begin(), first.end(),
                   [&](const auto& x, const auto& y) { return cost(x.second) < cost(y.second); });
  for (size_t k = 0; k < first.size() && !interrupted_;) {
    size_t end = k + 1;
    while (fleet_ && end < first.size() && cost(first[end].second) == cost(first[k].second)) ++end;
    const Batch batch(first.begin() + k, first.begin() + end);
    if (auto s = RunBatch("measure", 0, batch, policy, planned); !s) return s.error();
    k = end;
  }
  bool budget_spent = false;
  for (int round = 1; round <= d_.measure_rounds && !interrupted_ && !budget_spent; ++round) {
    const FunnelJudgement j = Judge();
    Batch todo;
    for (size_t i = 0; i < configs_.size(); ++i) {
      if (configs_[i].view.out) continue;
      for (const std::string& b : j.standings[i].undecided) {
        const auto* spec = &std::find_if(benchmarks_.begin(), benchmarks_.end(),
                                         [&](const auto& x) { return x.id == b; })->spec;
        // kl_divergence and evals are deterministic here: another result repeats the first.
        if (Repeatable(spec->type)) todo.emplace_back(i, b);
      }
    }
    if (todo.empty()) break;
    stage_index_ = 0;
    if (auto s = RunBatch("measure", round, todo, policy, static_cast<int>(todo.size()),
                          &budget_spent);
        !s) {
      return s.error();
    }
  }

  FunnelVerdict v;  // its choice; the rest is filled from the funnel's state at the end
  if (!interrupted_) {
    // `select` on the survivors' results: the ranking the finalists come from.
    std::vector<json> records;
    std::map<std::string, size_t> owner;  // result_id -> config
    for (size_t i = 0; i < configs_.size(); ++i) {
      if (configs_[i].view.out) continue;
      configs_[i].view.stage = "in";
      for (const std::string& b : configs_[i].benchmarks) {
        for (const json* r : OkResults(configs_[i], b)) {
          records.push_back(*r);
          owner[r->value("result_id", "")] = i;
        }
      }
    }
    const auto grouped = GroupConfigurations(records);
    Limits limits = d_.limits;
    const SelectResult selected = Select(grouped, limits);
    std::vector<size_t> ranked;
    for (const pipette::Candidate& cand : selected.candidates) {
      if (cand.verdict == Verdict::kFail || cand.config->results.empty()) continue;
      const auto it = owner.find(cand.config->results.front().value("result_id", ""));
      if (it == owner.end()) continue;
      ranked.push_back(it->second);
      configs_[it->second].view.on_front = cand.on_front;
    }
    for (const pipette::Candidate& cand : selected.candidates) {
      if (cand.verdict != Verdict::kFail || cand.config->results.empty()) continue;
      const auto it = owner.find(cand.config->results.front().value("result_id", ""));
      if (it == owner.end() || configs_[it->second].view.out) continue;
      // `select` fails what the funnel's wider intervals could not yet: left at measure.
      Config& c = configs_[it->second];
      std::string why;
      for (const auto& e : cand.excluded_because) why += (why.empty() ? "" : "; ") + e;
      state_["left"][c.view.key] = {{"stage", "measure"}, {"reason", "select: " + why}};
      c.view.out = true;
      c.view.stage = "measure";
      c.view.reason = "select: " + why;
      if (hooks_.left) hooks_.left(c.view);
    }

    // Stabilize.
    stage_ = "stabilize";
    std::vector<size_t> finalists(ranked.begin(),
                                  ranked.begin() + std::min<size_t>(ranked.size(), d_.finalists));
    std::vector<size_t> stable, unstable;
    Batch soaks;
    for (size_t i : finalists) {
      configs_[i].view.stage = "finalist";
      soaks.emplace_back(i, d_.soak);
    }
    stage_index_ = 0;
    if (!finalists.empty()) {
      if (auto s = RunBatch("stabilize", 0, soaks, policy, static_cast<int>(finalists.size()),
                            &budget_spent);
          !s) {
        return s.error();
      }
    }
    for (size_t k = 0; k < finalists.size() && !interrupted_; ++k) {
      Config& c = configs_[finalists[k]];
      if (!Measured(c, d_.soak)) break;  // the budget ran out before its soak
      std::string evidence;
      bool ok = false;
      for (const json& cell : state_["cells"]) {
        if (cell.value("config", "") != c.view.key || cell.value("stage", "") != "stabilize") continue;
        if (cell.value("status", "") != "ok") {
          evidence = "did not hold up in " + d_.soak + ": " + cell.value("reason", "");
          continue;
        }
        const json* r = Record(cell.value("result_id", ""));
        const json soak = r ? r->value("soak", json::object()) : json::object();
        std::vector<std::string> flags;
        if (soak.value("drift_flagged", false)) {
          flags.push_back(fmt::format("decode throughput drifted {:+.1f}% from the first tenth to the last{}",
                                      100 * soak.value("drift", 0.0),
                                      soak.contains("shapes") ? " (each shape against its own start)" : ""));
        }
        if (soak.value("growth_flagged", false)) {
          flags.push_back(fmt::format("peak memory grew {:.1f} MiB",
                                      soak.value("memory_growth_bytes", 0.0) / (1024.0 * 1024.0)));
        }
        ok = flags.empty();
        const size_t shapes = soak.value("shapes", json::array()).size();
        evidence = fmt::format("{}: {} requests{} in {:.0f} s, drift {:+.1f}%, memory growth {:.2f} MiB{}",
                               d_.soak, soak.value("requests", 0),
                               shapes > 1 ? fmt::format(" of {} shapes", shapes) : "",
                               soak.value("duration_s", 0.0), 100 * soak.value("drift", 0.0),
                               soak.value("memory_growth_bytes", 0.0) / (1024.0 * 1024.0),
                               flags.empty() ? "" : ": " + JoinList(flags));
      }
      c.view.reason = evidence;
      (ok ? stable : unstable).push_back(finalists[k]);
    }
    if (!interrupted_) {
      if (finalists.empty() && !ranked.empty()) {
        v.chosen = configs_[ranked.front()].view.name;
        configs_[ranked.front()].view.stage = "chosen";
      } else if (!stable.empty()) {
        v.chosen = configs_[stable.front()].view.name;
        configs_[stable.front()].view.stage = "chosen";
      } else if (!finalists.empty() && !budget_spent) {
        v.why_none = "no finalist held up under " + d_.soak;
      }
      if (ranked.empty()) v.why_none = "no configuration meets the limits";
      if (v.chosen.empty() && v.why_none.empty() && budget_spent) {
        v.why_none = "the device-time budget ran out before the finalists were soaked";
      }
    }
  }
  FunnelVerdict out = Provisional();
  out.state_path = options_.state_path;
  out.chosen = v.chosen;
  out.why_none = v.why_none;
  out.budget_spent = budget_spent;
  final_ = true;
  state_["verdict"] = VerdictJson(out);
  if (auto s = Save(); !s) return s.error();
  return out;
}

FunnelVerdict Funnel::Provisional() {
  FunnelVerdict v;
  v.confidence = FunnelConfidence(rule_, configs_.size());
  v.screen_repetitions = screen_reps_;
  v.notes = notes_;
  for (const auto& b : benchmarks_) v.benchmarks.push_back(b.id);
  v.benchmarks_skipped = skipped_;
  v.interrupted = interrupted_;
  for (const char* stage : {"screen", "measure", "stabilize"}) {
    FunnelStageTime t;
    t.stage = stage;
    t.seconds = StageSeconds(stage, &t.cells);
    v.stages.push_back(t);
  }
  for (const Config& c : configs_) v.configurations.push_back(c.view);
  return v;
}

json Funnel::VerdictJson(const FunnelVerdict& v) const {
  const bool done = final_ && !v.interrupted;
  json verdict = {{"final", done},  // false while it runs and after an interrupt
                  {"stage", done ? "done" : stage_},
                  {"alpha", d_.alpha},
                  {"chosen", v.chosen},
                  {"why_none", v.why_none},
                  {"interrupted", v.interrupted},
                  {"budget_spent", v.budget_spent},
                  {"confidence", v.confidence},
                  {"screen_repetitions", v.screen_repetitions},
                  {"benchmarks", v.benchmarks},
                  {"benchmarks_skipped", v.benchmarks_skipped},
                  {"notes", v.notes},
                  {"configurations", json::array()},
                  {"stages", json::array()}};
  for (const auto& c : v.configurations) {
    verdict["configurations"].push_back({{"name", c.name},
                                         {"key", c.key},
                                         {"model", c.model_path},
                                         {"device", c.device_uri},
                                         {"settings", c.settings},
                                         {"stage", c.stage},
                                         {"out", c.out},
                                         {"reason", c.reason},
                                         {"open_limits", c.open_limits},
                                         {"on_front", c.on_front}});
  }
  for (const auto& t : v.stages) {
    verdict["stages"].push_back({{"stage", t.stage}, {"cells", t.cells}, {"seconds", t.seconds}});
  }
  return verdict;
}

std::string DefaultStatePath(const DecisionFile& file, const DecideOptions& options) {
  const std::string store = options.store_path.empty() ? DefaultStorePath() : options.store_path;
  return (fs::absolute(store).parent_path() / "decide" / (file.suite.name + ".json")).string();
}

}  // namespace

Status CheckFunnelState(const DecisionFile& file, const DecideOptions& options) {
  const std::string path =
      options.state_path.empty() ? DefaultStatePath(file, options) : options.state_path;
  std::error_code ec;
  if (!fs::exists(path, ec)) return {};
  auto old = ReadState(path);
  if (!old && options.restart) {
    return MakeError(path + ": not a funnel state file, so --restart leaves it alone; give --state "
                            "a new file");
  }
  if (!old) return old.error();
  if (options.restart) return {};
  if (const auto changed = ChangedSince(*old, file); !changed.empty()) return Mismatch(file, changed);
  return {};
}

Result<FunnelVerdict> RunFunnel(const DecisionFile& file, const DecideOptions& options,
                                const DecideHooks& hooks) {
  Funnel funnel(file, options, hooks);
  return funnel.Run();
}

}  // namespace pipette
