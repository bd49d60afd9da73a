// Suite cells as JobSpecs and back (pipette/fleet_plan.h).
#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "pipette/benchmark.h"
#include "pipette/doom_loop.h"
#include "pipette/evals.h"
#include "pipette/fleet_plan.h"
#include "pipette/runtime.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Error SpecError(const std::string& message) {
  return MakeError("job spec: " + message, kJobStageSpec);
}
Error DeviceError(const std::string& message) {
  return MakeError("job spec: " + message, kJobStageDevice);
}

// Copies j[key] into `out` when present, checking its JSON type; `what` names the field.
template <typename T>
Status Take(const json& j, const char* key, T& out, const std::string& what) {
  if (!j.contains(key)) return Status::Ok();
  const json& v = j[key];
  try {
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) throw std::invalid_argument("");
    } else if constexpr (std::is_arithmetic_v<T>) {
      if (!v.is_number()) throw std::invalid_argument("");
      if constexpr (std::is_integral_v<T>) {
        if (!v.is_number_integer()) throw std::invalid_argument("");
      }
    } else {
      if (!v.is_string()) throw std::invalid_argument("");
    }
    out = v.get<T>();
  } catch (const std::exception&) {
    return SpecError(fmt::format("{}.{}: unexpected value {}", what, key, v.dump()));
  }
  return Status::Ok();
}

Status CheckKeys(const json& j, const std::set<std::string>& known, const std::string& what) {
  if (!j.is_object()) return SpecError(what + ": expected an object, not " + j.dump());
  for (const auto& [k, v] : j.items()) {
    if (!known.count(k)) return SpecError(fmt::format("{}: unknown key '{}'", what, k));
  }
  return Status::Ok();
}

json EvalToJson(const EvalOptions& e) {
  json j = {{"limit", e.limit}, {"repeats", e.repeats},       {"temperature", e.temperature},
            {"seed", e.seed},   {"max_tokens", e.max_tokens}, {"doom_loop", ToJson(e.doom_loop)}};
  // Only when set: a worker of a build before it reads every other job as before.
  if (e.parallel > 1) j["parallel"] = e.parallel;
  return j;
}

Result<EvalOptions> EvalFromJson(const json& j) {
  EvalOptions e;
  if (auto s = CheckKeys(j, {"limit", "repeats", "temperature", "seed", "max_tokens", "parallel",
                             "doom_loop"},
                         "eval");
      !s) {
    return s.error();
  }
  for (Status s : {Take(j, "limit", e.limit, "eval"), Take(j, "repeats", e.repeats, "eval"),
                   Take(j, "temperature", e.temperature, "eval"), Take(j, "seed", e.seed, "eval"),
                   Take(j, "max_tokens", e.max_tokens, "eval"),
                   Take(j, "parallel", e.parallel, "eval")}) {
    if (!s) return s.error();
  }
  if (j.contains("doom_loop")) {
    const json& d = j["doom_loop"];
    if (!d.is_object()) return SpecError("eval.doom_loop: expected an object");
    for (const auto& [k, v] : d.items()) {
      std::string setting;
      if (k == "detectors" && v.is_object()) {
        for (const auto& [name, on] : v.items()) {
          if (!on.is_boolean())
            return SpecError("eval.doom_loop.detectors." + name + ": expected true or false");
          if (auto s = SetDoomLoopOption(e.doom_loop, name + (on.get<bool>() ? "=on" : "=off"));
              !s) {
            return SpecError("eval.doom_loop: " + s.error().message);
          }
        }
        continue;
      }
      if (!v.is_number_integer()) return SpecError("eval.doom_loop." + k + ": expected an integer");
      if (auto s = SetDoomLoopOption(e.doom_loop, k + "=" + std::to_string(v.get<int64_t>())); !s) {
        return SpecError("eval.doom_loop: " + s.error().message);
      }
    }
  }
  return e;
}

json ModelRef(const std::string& path, const std::string& sha256) {
  return {{"sha256", sha256}, {"file_name", fs::path(path).filename().string()}};
}

// The model of `j[key]` ({sha256, file_name}) as a local path.
Result<std::string> LocalModel(const json& spec, const char* key, const JobContext& context) {
  // A server's job: every member is checked before it is read (a missing one is not an object).
  const json& m = spec.contains(key) ? spec[key] : json::object();
  if (!m.is_object() || !m.contains("sha256") || !m["sha256"].is_string()) {
    return SpecError(fmt::format("{}: expected {{\"sha256\": HEX64, \"file_name\": NAME}}", key));
  }
  const std::string sha = m["sha256"].get<std::string>();
  const auto it = context.models.find(sha);
  if (it == context.models.end()) {
    const json& name = m.contains("file_name") ? m["file_name"] : json();
    return DeviceError(fmt::format("{} {} ({}) is not in this worker's model folders", key,
                                   sha.substr(0, 12), name.is_string() ? name.get<std::string>()
                                                                       : std::string("?")));
  }
  return it->second;
}

}  // namespace

json HarnessToJson(const HarnessPolicy& p) {
  return {{"warmup_runs", p.warmup_runs},
          {"min_reps", p.min_reps},
          {"max_reps", p.max_reps},
          {"ci_target", p.ci_target},
          {"request_timeout_s", p.request_timeout_s},
          {"spin_up_ms", p.spin_up_ms}};
}

Result<HarnessPolicy> HarnessFromJson(const json& j) {
  HarnessPolicy p;
  if (auto s = CheckKeys(
          j,
          {"warmup_runs", "min_reps", "max_reps", "ci_target", "request_timeout_s", "spin_up_ms"},
          "harness");
      !s) {
    return s.error();
  }
  for (Status s :
       {Take(j, "warmup_runs", p.warmup_runs, "harness"),
        Take(j, "min_reps", p.min_reps, "harness"), Take(j, "max_reps", p.max_reps, "harness"),
        Take(j, "ci_target", p.ci_target, "harness"),
        Take(j, "request_timeout_s", p.request_timeout_s, "harness"),
        Take(j, "spin_up_ms", p.spin_up_ms, "harness")}) {
    if (!s) return s.error();
  }
  if (p.min_reps < 1 || p.max_reps < p.min_reps || p.warmup_runs < 0 || p.request_timeout_s < 1) {
    return SpecError("harness: " + j.dump() + " is out of range");
  }
  return p;
}

json ReadinessToJson(const ReadinessPolicy& g) {
  json waive = json::array();
  if (g.waive_thermal) waive.push_back("thermal");
  if (g.waive_load) waive.push_back("load");
  if (g.waive_throttle) waive.push_back("throttle");
  return {{"max_cpu_celsius", g.max_cpu_celsius},
          {"max_busy_fraction", g.max_busy_fraction},
          {"poll_interval_s", g.poll_interval_s},
          {"deadline_s", g.deadline_s},
          {"sample_window_s", g.sample_window_s},
          {"cooldown_s", g.cooldown_s},
          {"waive", waive}};
}

Result<ReadinessPolicy> ReadinessFromJson(const json& j) {
  ReadinessPolicy g;
  if (auto s = CheckKeys(j,
                         {"max_cpu_celsius", "max_busy_fraction", "poll_interval_s", "deadline_s",
                          "sample_window_s", "cooldown_s", "waive"},
                         "readiness");
      !s) {
    return s.error();
  }
  for (Status s : {Take(j, "max_cpu_celsius", g.max_cpu_celsius, "readiness"),
                   Take(j, "max_busy_fraction", g.max_busy_fraction, "readiness"),
                   Take(j, "poll_interval_s", g.poll_interval_s, "readiness"),
                   Take(j, "deadline_s", g.deadline_s, "readiness"),
                   Take(j, "sample_window_s", g.sample_window_s, "readiness"),
                   Take(j, "cooldown_s", g.cooldown_s, "readiness")}) {
    if (!s) return s.error();
  }
  if (j.contains("waive")) {
    if (!j["waive"].is_array()) return SpecError("readiness.waive: expected a list");
    for (const json& w : j["waive"]) {
      const std::string what = w.is_string() ? w.get<std::string>() : w.dump();
      if (what == "thermal") {
        g.waive_thermal = true;
      } else if (what == "load") {
        g.waive_load = true;
      } else if (what == "throttle") {
        g.waive_throttle = true;
      } else {
        return SpecError("readiness.waive: '" + what + "' is not thermal, load or throttle");
      }
    }
  }
  return g;
}

Result<std::vector<json>> JobSpecsFromSuite(const Suite& suite, const std::vector<SuiteCell>& cells,
                                            const HashFileFn& hash_file,
                                            const JobRequirements& defaults) {
  // A suite lists few model files but many cells: hash each once.
  std::map<std::string, std::string> hashes;
  auto sha_of = [&](const std::string& path) -> Result<std::string> {
    if (path.starts_with(kDeviceModelPrefix)) {
      return MakeError(suite.path + ": " + path +
                       " is a file on one device, but a fleet plan sends workers the model by "
                       "its digest; give the host's file");
    }
    if (auto it = hashes.find(path); it != hashes.end()) return it->second;
    auto h = hash_file(path);
    if (!h) return h.error();
    hashes[path] = *h;
    return *h;
  };
  BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  std::error_code ec;
  const std::string dir =
      suite.benchmarks_dir.empty() ? DefaultUserBenchmarkDir() : suite.benchmarks_dir;
  if (!dir.empty() && fs::is_directory(dir, ec)) {
    if (auto s = catalog.AddDirectory(dir); !s) return s.error().Wrap(suite.path);
  }
  std::vector<json> specs;
  specs.reserve(cells.size());
  for (const SuiteCell& cell : cells) {
    if (cell.runtime >= suite.runtimes.size()) {
      return MakeError(fmt::format("{}: cell {}: no such runtime entry", suite.path, cell.index));
    }
    auto bench = catalog.Find(cell.benchmark_id);
    if (!bench) return bench.error().Wrap(fmt::format("{}: cell {}", suite.path, cell.index));
    auto sha = sha_of(cell.model_path);
    if (!sha) return sha.error();
    const RuntimeChoice& choice = suite.runtimes[cell.runtime].choice;
    json j = {{"benchmark", cell.benchmark_id},
              {"model", ModelRef(cell.model_path, *sha)},
              {"runtime", choice.name},
              {"settings", cell.settings},
              {"harness", HarnessToJson(suite.policy)},
              {"readiness", ReadinessToJson(suite.readiness)},
              {"label_note", suite.label},
              {"cell", {{"index", cell.index}, {"factor", cell.factor}}},
              {"allow_context_overflow", suite.allow_context_overflow}};
    // A user-defined benchmark is not in a worker's catalog: its definition travels along.
    if (bench->source != "built-in" && bench->source != "pattern") {
      j["benchmark_definition"] = ToJson(*bench);
    }
    json runtime_options = json::object();
    if (!choice.dir.empty()) runtime_options["dir"] = choice.dir;
    if (!choice.url.empty()) runtime_options["url"] = choice.url;
    if (!choice.server_command.empty()) runtime_options["server_command"] = choice.server_command;
    if (!choice.api_model.empty()) runtime_options["api_model"] = choice.api_model;
    if (!runtime_options.empty()) j["runtime_options"] = runtime_options;
    json models = json::array({*sha});
    if (const auto it = suite.references.find(cell.model_path);
        it != suite.references.end() && bench->type == BenchmarkType::kKlDivergence) {
      auto ref = sha_of(it->second);
      if (!ref) return ref.error();
      j["reference_model"] = ModelRef(it->second, *ref);
      models.push_back(*ref);
    }
    if (bench->type == BenchmarkType::kEval) j["eval"] = EvalToJson(suite.eval);
    j["requires"] = {{"labels", defaults.labels},
                     {"arch", defaults.arch},
                     {"min_memory_bytes", defaults.min_memory_bytes},
                     {"runtimes", json::array({choice.name})},
                     {"models", models}};
    specs.push_back(std::move(j));
  }
  return specs;
}

Result<CellSpec> CellSpecFromJob(const json& spec, const JobContext& context) {
  if (!spec.is_object()) return SpecError("expected an object");
  for (const char* key : {"benchmark", "runtime"}) {
    if (!spec.contains(key) || !spec[key].is_string()) {
      return SpecError(fmt::format("{}: expected a string", key));
    }
  }
  CellSpec cell;
  // The benchmark: its definition when the plan carried one, else the worker's catalog.
  BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  const std::string dir =
      context.benchmarks_dir.empty() ? DefaultUserBenchmarkDir() : context.benchmarks_dir;
  std::error_code ec;
  if (!dir.empty() && fs::is_directory(dir, ec)) (void)catalog.AddDirectory(dir);
  const std::string id = spec["benchmark"].get<std::string>();
  auto bench = catalog.Find(id);
  if (!bench) return SpecError(bench.error().message);
  if (spec.contains("benchmark_definition")) {
    // Ids encode their parameters; a definition that contradicts its id is refused by Validate.
    const json& d = spec["benchmark_definition"];
    if (!d.is_object()) return SpecError("benchmark_definition: expected an object");
    BenchmarkSpec b = *bench;
    b.id = id;
    for (Status s : {Take(d, "description", b.description, "benchmark_definition"),
                     Take(d, "max_tokens", b.max_tokens, "benchmark_definition")}) {
      if (!s) return s.error();
    }
    if (auto s = Validate(b); !s) return SpecError("benchmark_definition: " + s.error().message);
    bench = b;
  }
  cell.benchmark = *bench;

  auto model = LocalModel(spec, "model", context);
  if (!model) return model.error();
  cell.model_path = *model;
  if (cell.benchmark.type == BenchmarkType::kKlDivergence) {
    if (!spec.contains("reference_model")) {
      return SpecError(id + " needs reference_model: the model it is compared with");
    }
    auto ref = LocalModel(spec, "reference_model", context);
    if (!ref) return ref.error();
    cell.reference_model_path = *ref;
  }

  const json settings = spec.value("settings", json::object());
  if (!settings.is_object()) return SpecError("settings: expected an object");
  cell.settings = settings;
  if (spec.contains("harness")) {
    auto p = HarnessFromJson(spec["harness"]);
    if (!p) return p.error();
    cell.policy = *p;
  }
  if (spec.contains("readiness")) {
    auto g = ReadinessFromJson(spec["readiness"]);
    if (!g) return g.error();
    cell.readiness = *g;
  }
  if (auto s = Take(spec, "allow_context_overflow", cell.allow_context_overflow, "job"); !s) {
    return s.error();
  }
  std::string label_note;
  if (auto s = Take(spec, "label_note", label_note, "job"); !s) return s.error();
  cell.label = label_note.empty() ? context.label : label_note;
  if (cell.benchmark.type == BenchmarkType::kEval) {
    auto e = EvalFromJson(spec.value("eval", json::object()));
    if (!e) return e.error();
    cell.eval = *e;
    if (cell.eval.max_tokens == 0) {
      cell.eval.max_tokens = cell.benchmark.max_tokens > 0 ? cell.benchmark.max_tokens : 8192;
    }
    cell.eval.data_dir = EvalDataDir(context.eval_data_dir);
    cell.eval.checkpoint_dir = context.checkpoint_dir;
  }

  RuntimeChoice choice;
  choice.name = spec["runtime"].get<std::string>();
  if (spec.contains("runtime_options")) {
    const json& o = spec["runtime_options"];
    if (auto s = CheckKeys(o, {"dir", "url", "server_command", "api_model"}, "runtime_options");
        !s) {
      return s.error();
    }
    for (Status s : {Take(o, "dir", choice.dir, "runtime_options"),
                     Take(o, "url", choice.url, "runtime_options"),
                     Take(o, "api_model", choice.api_model, "runtime_options")}) {
      if (!s) return s.error();
    }
    if (o.contains("server_command")) {
      const json& c = o["server_command"];
      if (!c.is_array()) return SpecError("runtime_options.server_command: expected a list");
      for (const json& w : c) {
        if (!w.is_string()) return SpecError("runtime_options.server_command: expected strings");
        choice.server_command.push_back(w.get<std::string>());
      }
    }
  }
  if (auto s = CheckRuntimeChoice(choice); !s) return SpecError(s.error().message);
  // The settings must be ones this runtime takes: no device could run the cell otherwise.
  auto defs = RuntimeSettingDefs(choice.name);
  if (!defs) return SpecError(defs.error().message);
  for (const auto& [k, v] : settings.items()) {
    if (FindSetting(*defs, k) == nullptr) {
      return SpecError(
          fmt::format("settings.{}: runtime {} does not take this setting", k, choice.name));
    }
  }
  if (!context.open_runtime) return DeviceError("this worker cannot open runtimes");
  auto runtime = context.open_runtime(choice);
  // Opening fails on this device (a missing build folder, a server not running here): another
  // device may have it.
  if (!runtime) return DeviceError("runtime " + choice.name + ": " + runtime.error().message);
  cell.runtime = *runtime;
  return cell;
}

}  // namespace pipette
