// Suite files (docs/suites.md): TOML -> Suite, with one-line errors naming the file and the key.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

#include "pipette/suite.h"
#include "platform/transport.h"
#include "pipette/build_info.h"
#include "pipette/runtimes.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Errors found while reading one file; the first one is reported.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  Error Fail(const std::string& key, const std::string& what) const {
    return MakeError(source_ + ": " + key + ": " + what);
  }

  // Rejects keys this format does not define (a typo must not be ignored silently).
  Status OnlyKeys(const toml::table& t, const std::string& where,
                  std::initializer_list<std::string_view> known) const {
    return OnlyKeys(t, where, std::vector<std::string_view>(known));
  }
  Status OnlyKeys(const toml::table& t, const std::string& where,
                  const std::vector<std::string>& known) const {
    return OnlyKeys(t, where, std::vector<std::string_view>(known.begin(), known.end()));
  }
  Status OnlyKeys(const toml::table& t, const std::string& where,
                  const std::vector<std::string_view>& known) const {
    for (const auto& [k, v] : t) {
      bool ok = false;
      for (auto n : known) ok = ok || k.str() == n;
      if (!ok) {
        std::string list;
        for (auto n : known) list += (list.empty() ? "" : ", ") + std::string(n);
        return Fail(where.empty() ? std::string(k.str()) : where + "." + std::string(k.str()),
                    "unknown key; expected one of " + list);
      }
    }
    return {};
  }

  Result<std::string> String(const toml::table& t, std::string_view key, const std::string& where,
                             bool required) const {
    const toml::node* n = t.get(key);
    const std::string name = where.empty() ? std::string(key) : where + "." + std::string(key);
    if (n == nullptr) {
      if (required) return Fail(name, "missing; add it");
      return std::string();
    }
    if (!n->is_string()) return Fail(name, "expected a string");
    return n->as_string()->get();
  }

 private:
  std::string source_;
};

// A TOML value as JSON (scalars only; settings hold scalars).
std::optional<json> Scalar(const toml::node& n) {
  if (n.is_integer()) return json(n.as_integer()->get());
  if (n.is_floating_point()) return json(n.as_floating_point()->get());
  if (n.is_boolean()) return json(n.as_boolean()->get());
  if (n.is_string()) return json(n.as_string()->get());
  return std::nullopt;
}

std::string Absolute(const std::string& path, const std::string& base_dir) {
  fs::path p(path);
  if (p.is_relative()) p = fs::path(base_dir) / p;
  return p.lexically_normal().string();
}

// A model file named in the suite: absolute, existing, a regular file.
Result<std::string> ModelFile(const std::string& path, const std::string& base_dir,
                              const std::string& key, const Reader& r) {
  if (path.empty()) return r.Fail(key, "is empty; give the path to a GGUF file");
  if (path.starts_with(kDeviceModelPrefix)) {  // on each device of the suite: checked there
    if (path.size() == kDeviceModelPrefix.size() || path[kDeviceModelPrefix.size()] != '/') {
      return r.Fail(key, path + " is not an absolute path; give device:/full/path/on/the/device");
    }
    return path;
  }
  const std::string abs = Absolute(path, base_dir);
  std::error_code ec;
  const auto status = fs::status(abs, ec);
  if (!fs::exists(status)) {
    return r.Fail(key, abs + ": no such file; fix the path (relative paths start at the suite "
                             "file's folder)");
  }
  if (!fs::is_regular_file(status)) return r.Fail(key, abs + " is not a file; give a GGUF file");
  return abs;
}

Result<std::vector<json>> SettingValues(const toml::node& n, const std::string& name,
                                        const std::vector<SettingDef>& defs,
                                        const std::string& runtime, const Reader& r) {
  const std::string setting = name.substr(name.rfind('.') + 1);
  const SettingDef* def = FindSetting(defs, setting);
  if (def == nullptr) {
    return r.Fail(name, CheckSettings(runtime, defs, json{{setting, 0}}).error().message);
  }
  std::vector<json> values;
  if (const toml::array* a = n.as_array()) {
    if (a->empty()) return r.Fail(name, "an empty list; give at least one value");
    for (const toml::node& e : *a) {
      auto v = Scalar(e);
      if (!v) return r.Fail(name, "list items must be numbers, booleans or strings");
      values.push_back(*v);
    }
  } else {
    auto v = Scalar(n);
    if (!v) return r.Fail(name, "expected a value or a list of values");
    values.push_back(*v);
  }
  std::set<std::string> seen;
  for (const json& v : values) {
    if (!seen.insert(v.dump()).second) return r.Fail(name, "lists " + v.dump() + " twice");
    if (auto s = CheckSetting(*def, v); !s) {
      // The key already names the setting: "runtimes[1].settings.threads: expected ...".
      std::string message = s.error().message;
      if (message.starts_with(setting + ": ")) message = message.substr(setting.size() + 2);
      return r.Fail(name, message);
    }
  }
  return values;
}

// `cpus` as a table keyed by the threads values (docs/suites.md): threads value -> CPU list.
// Every threads value needs a list and every key must be a threads value: a gap or a stray key
// is almost surely a typo, and a guessed CPU list would measure other cores than meant.
Result<std::map<int64_t, std::string>> CpusByThreads(const toml::table& table,
                                                     const SuiteRuntime& rt,
                                                     const std::vector<SettingDef>& defs,
                                                     const std::string& name, const Reader& r) {
  const SettingDef* def = FindSetting(defs, "cpus");
  if (def == nullptr) {
    return r.Fail(name, CheckSettings(rt.choice.name, defs, json{{"cpus", "0"}}).error().message);
  }
  const auto threads = std::find_if(rt.settings.begin(), rt.settings.end(),
                                    [](const auto& s) { return s.first == "threads"; });
  if (threads == rt.settings.end()) {
    return r.Fail(name, "a table of CPU lists by threads value needs threads; add threads = "
                        "[...] with its values as the keys, or give cpus one CPU list");
  }
  const std::vector<json>& counts = threads->second;
  std::string listed;
  for (const json& v : counts) listed += (listed.empty() ? "" : ", ") + v.dump();
  std::map<int64_t, std::string> out;
  for (const auto& [k, v] : table) {
    const std::string key(k.str());
    const std::string entry = name + "." + key;
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), n);
    if (ec != std::errc() || end != key.data() + key.size() || n < 1 || key != std::to_string(n)) {
      return r.Fail(entry, "a key must be a threads value (a positive integer), e.g. 4 = \"4-7\"");
    }
    if (std::find(counts.begin(), counts.end(), json(n)) == counts.end()) {
      return r.Fail(entry, key + " is not one of the threads values (" + listed +
                               "); remove it or add " + key + " to threads");
    }
    const std::optional<json> value = Scalar(v);
    if (!value) return r.Fail(entry, "expected a CPU list such as \"4-7\"");
    if (auto s = CheckSetting(*def, *value); !s) {
      std::string message = s.error().message;  // "cpus: ...", and the key already says cpus
      if (message.starts_with("cpus: ")) message = message.substr(6);
      return r.Fail(entry, message);
    }
    out[n] = value->get<std::string>();
  }
  for (const json& v : counts) {
    if (!out.contains(v.get<int64_t>())) {
      return r.Fail(name, "no CPU list for threads = " + v.dump() + "; add " + v.dump() +
                              " = \"...\"");
    }
  }
  return out;
}

// "${NAME}" in a runtime's dir, url and server replaced by the environment variable's value;
// PIPETTE_LLAMA_BIN defaults to the bin folder of the llama.cpp build pipette was built with.
// Errors: a variable that is not set, an unclosed "${".
Result<std::string> ExpandVariables(const std::string& text, const std::string& key,
                                    const Reader& r) {
  std::string out;
  size_t at = 0;
  while (true) {
    const size_t open = text.find("${", at);
    if (open == std::string::npos) break;
    const size_t close = text.find('}', open);
    if (close == std::string::npos) return r.Fail(key, "has an unclosed ${ in " + text);
    const std::string name = text.substr(open + 2, close - open - 2);
    if (name.empty()) return r.Fail(key, "has an empty ${} in " + text + "; name a variable");
    const char* value = std::getenv(name.c_str());
    std::string v = value ? value : "";
    if (!value && name == "PIPETTE_LLAMA_BIN") v = std::string(build_info::kLlamaPrefix) + "/bin";
    if (!value && v.empty()) {
      return r.Fail(key, "${" + name + "} is not set; export " + name + " or write the path");
    }
    out += text.substr(at, open - at) + v;
    at = close + 1;
  }
  return out + text.substr(at);
}

// One [[runtimes]] entry: name (required), where the runtime lives (dir for llamacpp-stock;
// url, server, api_model for openai), and settings checked against the runtime's definitions.
Result<SuiteRuntime> ReadRuntime(const toml::table& t, const std::string& key,
                                 const std::string& base_dir, const Reader& r) {
  auto name = r.String(t, "name", key, true);
  if (!name) return name.error();
  auto defs = RuntimeSettingDefs(*name);
  if (!defs) return r.Fail(key + ".name", defs.error().message);
  SuiteRuntime rt;
  rt.choice.name = *name;
  rt.label = *name;
  auto dir = r.String(t, "dir", key, false);
  if (!dir) return dir.error();
  dir = ExpandVariables(*dir, key + ".dir", r);
  if (!dir) return dir.error();
  if (!dir->empty()) rt.choice.dir = Absolute(*dir, base_dir);
  auto url = r.String(t, "url", key, false);
  if (!url) return url.error();
  url = ExpandVariables(*url, key + ".url", r);
  if (!url) return url.error();
  rt.choice.url = *url;
  auto api_model = r.String(t, "api_model", key, false);
  if (!api_model) return api_model.error();
  rt.choice.api_model = *api_model;
  if (const toml::node* n = t.get("server")) {
    const toml::array* a = n->as_array();
    if (a == nullptr || a->empty()) {
      return r.Fail(key + ".server", "expected the server's command line as a list of strings, "
                                     "e.g. [\"/opt/llama/bin/llama-server\", \"-m\", \"m.gguf\"]");
    }
    for (const toml::node& e : *a) {
      if (!e.is_string()) return r.Fail(key + ".server", "list items must be strings");
      auto arg = ExpandVariables(e.as_string()->get(), key + ".server", r);
      if (!arg) return arg.error();
      rt.choice.server_command.push_back(*arg);
    }
  }
  if (auto s = CheckRuntimeChoice(rt.choice); !s) return r.Fail(key, s.error().message);
  if (const toml::node* n = t.get("settings")) {
    const toml::table* st = n->as_table();
    if (st == nullptr) return r.Fail(key + ".settings", "expected a table");
    const toml::table* cpus_by_threads = nullptr;  // read once threads is known
    for (const auto& [k, v] : *st) {
      if (k.str() == "cpus" && v.is_table()) {
        cpus_by_threads = v.as_table();
        continue;
      }
      const std::string name = key + ".settings." + std::string(k.str());
      auto values = SettingValues(v, name, *defs, rt.choice.name, r);
      if (!values) return values.error();
      rt.settings.emplace_back(std::string(k.str()), std::move(*values));
    }
    if (cpus_by_threads != nullptr) {
      auto cpus = CpusByThreads(*cpus_by_threads, rt, *defs, key + ".settings.cpus", r);
      if (!cpus) return cpus.error();
      rt.cpus_by_threads = std::move(*cpus);
    }
  }
  return rt;
}

Status ReadHarness(const toml::table& t, HarnessPolicy& p, const Reader& r) {
  if (auto s = r.OnlyKeys(t, "harness", {"warmup_runs", "min_reps", "max_reps", "ci_target",
                                         "request_timeout_s", "spin_up_ms"});
      !s) {
    return s;
  }
  const auto integer = [&](std::string_view key, int& out, int lo, int hi) -> Status {
    const toml::node* n = t.get(key);
    if (n == nullptr) return {};
    const std::string name = "harness." + std::string(key);
    if (!n->is_integer()) return r.Fail(name, "expected an integer");
    const int64_t v = n->as_integer()->get();
    if (v < lo || v > hi) {
      return r.Fail(name, std::to_string(v) + " is out of range " + std::to_string(lo) + ".." +
                              std::to_string(hi));
    }
    out = static_cast<int>(v);
    return {};
  };
  if (auto s = integer("warmup_runs", p.warmup_runs, 0, 100); !s) return s;
  if (auto s = integer("min_reps", p.min_reps, 1, 10000); !s) return s;
  if (auto s = integer("max_reps", p.max_reps, 1, 10000); !s) return s;
  if (auto s = integer("request_timeout_s", p.request_timeout_s, 1, 7 * 24 * 3600); !s) return s;
  if (auto s = integer("spin_up_ms", p.spin_up_ms, 0, 60000); !s) return s;
  if (const toml::node* n = t.get("ci_target")) {
    auto v = n->value<double>();
    if (!v || !(*v >= 0.0001 && *v <= 1)) {
      return r.Fail("harness.ci_target", "expected a number between 0.0001 and 1");
    }
    p.ci_target = *v;
  }
  if (p.min_reps > p.max_reps) {
    return r.Fail("harness.min_reps", std::to_string(p.min_reps) + " is above max_reps " +
                                          std::to_string(p.max_reps));
  }
  return {};
}

// [eval]: how the suite's eval benchmarks generate (pipette run's --data-dir, --limit, ...).
Status ReadEval(const toml::table& t, const std::string& base_dir, EvalOptions& o,
                const Reader& r) {
  if (auto s = r.OnlyKeys(t, "eval", {"data_dir", "limit", "repeats", "temperature", "seed",
                                      "max_tokens", "parallel", "doom_loop", "checkpoint_dir"});
      !s) {
    return s;
  }
  const auto integer = [&](std::string_view key, int64_t lo, int64_t hi) -> Result<int64_t> {
    const toml::node* n = t.get(key);
    const std::string name = "eval." + std::string(key);
    if (!n->is_integer()) return r.Fail(name, "expected an integer");
    const int64_t v = n->as_integer()->get();
    if (v < lo || v > hi) {
      return r.Fail(name, std::to_string(v) + " is out of range " + std::to_string(lo) + ".." +
                              std::to_string(hi));
    }
    return v;
  };
  const auto path = [&](std::string_view key, std::string& out) -> Status {
    if (!t.get(key)) return {};
    const std::string name = "eval." + std::string(key);
    if (!t.get(key)->is_string()) return r.Fail(name, "expected a path");
    auto v = ExpandVariables(t.get(key)->as_string()->get(), name, r);
    if (!v) return v.error();
    out = fs::path(*v).is_absolute() ? *v : (fs::path(base_dir) / *v).lexically_normal().string();
    return {};
  };
  if (auto s = path("data_dir", o.data_dir); !s) return s;
  if (auto s = path("checkpoint_dir", o.checkpoint_dir); !s) return s;
  const std::pair<const char*, std::pair<int*, std::pair<int64_t, int64_t>>> ints[] = {
      {"limit", {&o.limit, {0, 1000000}}},
      {"repeats", {&o.repeats, {1, 1000}}},
      {"max_tokens", {&o.max_tokens, {1, 1 << 24}}},
      {"parallel", {&o.parallel, {1, kMaxEvalParallel}}}};
  for (const auto& [key, target] : ints) {
    if (!t.get(key)) continue;
    auto v = integer(key, target.second.first, target.second.second);
    if (!v) return v.error();
    *target.first = static_cast<int>(*v);
  }
  if (t.get("seed")) {
    auto v = integer("seed", 0, INT64_MAX);
    if (!v) return v.error();
    o.seed = static_cast<uint64_t>(*v);
  }
  if (const toml::node* n = t.get("temperature")) {
    auto v = n->value<double>();
    if (!v || !(*v >= 0 && *v <= 10)) return r.Fail("eval.temperature", "expected a number in 0..10");
    o.temperature = *v;
  }
  if (const toml::node* n = t.get("doom_loop")) {
    if (!n->is_table()) {
      return r.Fail("eval.doom_loop", "expected a table, e.g. { min_bytes = 256, line_cycle = \"off\" }");
    }
    for (const auto& [k, v] : *n->as_table()) {
      std::string value;
      if (v.is_integer()) {
        value = std::to_string(v.as_integer()->get());
      } else if (v.is_string()) {
        value = v.as_string()->get();
      } else if (v.is_boolean()) {
        value = v.as_boolean()->get() ? "on" : "off";
      } else {
        return r.Fail("eval.doom_loop." + std::string(k.str()), "expected an integer, on or off");
      }
      if (auto s = SetDoomLoopOption(o.doom_loop, std::string(k.str()) + "=" + value); !s) {
        return r.Fail("eval.doom_loop." + std::string(k.str()), s.error().message);
      }
    }
  }
  return {};
}

Status ReadReadiness(const toml::table& t, ReadinessPolicy& g, const Reader& r) {
  if (auto s = r.OnlyKeys(t, "readiness", {"max_cpu_celsius", "max_busy_fraction",
                                           "poll_interval_s", "deadline_s", "cooldown_s",
                                           "waive"});
      !s) {
    return s;
  }
  const auto number = [&](std::string_view key, double& out, double lo, double hi) -> Status {
    const toml::node* n = t.get(key);
    if (n == nullptr) return {};
    auto v = n->value<double>();
    if (!v || !(*v >= lo && *v <= hi)) {
      return r.Fail("readiness." + std::string(key),
                    "expected a number between " + json(lo).dump() + " and " + json(hi).dump());
    }
    out = *v;
    return {};
  };
  if (auto s = number("max_cpu_celsius", g.max_cpu_celsius, 0, 150); !s) return s;
  if (auto s = number("max_busy_fraction", g.max_busy_fraction, 0, 1); !s) return s;
  if (auto s = number("poll_interval_s", g.poll_interval_s, 0.01, 3600); !s) return s;
  if (auto s = number("deadline_s", g.deadline_s, 0, 86400); !s) return s;
  if (auto s = number("cooldown_s", g.cooldown_s, 0, 86400); !s) return s;
  if (const toml::node* n = t.get("waive")) {
    const toml::array* a = n->as_array();
    if (a == nullptr) return r.Fail("readiness.waive", "expected a list, e.g. [\"load\"]");
    for (const toml::node& e : *a) {
      const auto v = e.value<std::string>();
      if (v == "thermal") {
        g.waive_thermal = true;
      } else if (v == "load") {
        g.waive_load = true;
      } else if (v == "throttle") {
        g.waive_throttle = true;
      } else {
        return r.Fail("readiness.waive", "expected \"thermal\", \"load\" or \"throttle\"");
      }
    }
  }
  return {};
}

}  // namespace

Result<Suite> ParseSuiteToml(const std::string& text, const std::string& base_dir,
                             const std::string& source_name,
                             const std::vector<std::string>& other_tables) {
  const Reader r(source_name);
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    std::ostringstream where;
    where << e.source().begin;
    return MakeError(source_name + ": not valid TOML at " + where.str() + ": " +
                     std::string(e.description()));
  }
  std::vector<std::string> keys = {"name", "mode", "benchmarks", "benchmarks_dir", "models",
                                   "runtimes", "baseline", "harness", "readiness", "eval", "label",
                                   "stop_on_failure", "allow_context_overflow", "interleave",
                                   "devices"};
  keys.insert(keys.end(), other_tables.begin(), other_tables.end());
  if (auto s = r.OnlyKeys(root, "", keys); !s) {
    return s.error();
  }
  Suite suite;
  suite.path = source_name;
  auto name = r.String(root, "name", "", true);
  if (!name) return name.error();
  suite.name = *name;
  if (suite.name.empty()) return r.Fail("name", "is empty; name the suite");
  auto mode = r.String(root, "mode", "", false);
  if (!mode) return mode.error();
  if (!root.contains("mode") || *mode == "matrix") {
    suite.mode = SuiteMode::kMatrix;
  } else if (*mode == "one-factor") {
    suite.mode = SuiteMode::kOneFactor;
  } else {
    return r.Fail("mode", "'" + *mode + "' is not a mode; use \"matrix\" or \"one-factor\"");
  }
  auto label = r.String(root, "label", "", false);
  if (!label) return label.error();
  suite.label = *label;
  auto dir = r.String(root, "benchmarks_dir", "", false);
  if (!dir) return dir.error();
  if (!dir->empty()) suite.benchmarks_dir = Absolute(*dir, base_dir);
  for (auto [key, flag] : {std::pair<const char*, bool*>{"stop_on_failure", &suite.stop_on_failure},
                           {"allow_context_overflow", &suite.allow_context_overflow},
                           {"interleave", &suite.interleave}}) {
    if (const toml::node* n = root.get(key)) {
      if (!n->is_boolean()) return r.Fail(key, "expected true or false");
      *flag = n->as_boolean()->get();
    }
  }

  if (root.contains("benchmarks") && !root.get("benchmarks")->is_array()) {
    return r.Fail("benchmarks", "expected a list of benchmark ids, e.g. "
                                "[\"decode_throughput_256_100\"]");
  }
  const toml::array* benchmarks = root.get_as<toml::array>("benchmarks");
  if (benchmarks == nullptr || benchmarks->empty()) {
    return r.Fail("benchmarks", "missing or empty; list benchmark ids, e.g. "
                                "[\"decode_throughput_256_100\"] (`pipette benchmarks list`)");
  }
  std::set<std::string> seen_benchmarks;
  for (size_t i = 0; i < benchmarks->size(); ++i) {
    const auto id = (*benchmarks)[i].value<std::string>();
    const std::string key = "benchmarks[" + std::to_string(i + 1) + "]";
    if (!id || id->empty()) return r.Fail(key, "expected a benchmark id (a string)");
    if (!seen_benchmarks.insert(*id).second) return r.Fail(key, *id + " is listed twice");
    suite.benchmarks.push_back(*id);
  }

  const toml::array* models = root.get_as<toml::array>("models");
  if (models == nullptr || models->empty()) {
    return r.Fail("models", "missing; add [[models]] tables with a path to a GGUF file");
  }
  std::set<std::string> seen_models;
  for (size_t i = 0; i < models->size(); ++i) {
    const std::string key = "models[" + std::to_string(i + 1) + "]";
    const toml::table* m = (*models)[i].as_table();
    if (m == nullptr) return r.Fail(key, "expected a table ([[models]] with path = \"...\")");
    if (auto s = r.OnlyKeys(*m, key, {"path", "reference"}); !s) return s.error();
    auto path = r.String(*m, "path", key, true);
    if (!path) return path.error();
    auto abs = ModelFile(*path, base_dir, key + ".path", r);
    if (!abs) return abs.error();
    // One file under two names (a symlink, "a/../b") would run every cell twice.
    std::error_code ec;
    const std::string canonical = fs::canonical(*abs, ec).string();
    if (!seen_models.insert(ec ? *abs : canonical).second) {
      return r.Fail(key, *abs + " is listed twice (perhaps under another name)");
    }
    suite.models.push_back(*abs);
    auto reference = r.String(*m, "reference", key, false);
    if (!reference) return reference.error();
    if (m->contains("reference")) {
      auto ref = ModelFile(*reference, base_dir, key + ".reference", r);
      if (!ref) return ref.error();
      suite.references[*abs] = *ref;
    }
  }

  const toml::array* runtimes = root.get_as<toml::array>("runtimes");
  if (root.contains("runtimes") && (runtimes == nullptr || runtimes->empty())) {
    return r.Fail("runtimes", runtimes == nullptr
                                  ? "expected [[runtimes]] tables, one per runtime"
                                  : "an empty list; give at least one [[runtimes]] or leave it out");
  }
  if (runtimes == nullptr) {
    suite.runtimes.push_back({RuntimeChoice{}, {}, "llamacpp", {}});
  } else {
    std::set<std::string> seen_runtimes;
    for (size_t i = 0; i < runtimes->size(); ++i) {
      const std::string key = "runtimes[" + std::to_string(i + 1) + "]";
      const toml::table* t = (*runtimes)[i].as_table();
      if (t == nullptr) return r.Fail(key, "expected a table ([[runtimes]])");
      if (auto s = r.OnlyKeys(*t, key, {"name", "settings", "dir", "url", "server", "api_model"});
          !s) {
        return s.error();
      }
      auto rt = ReadRuntime(*t, key, base_dir, r);
      if (!rt) return rt.error();
      const RuntimeChoice& c = rt->choice;
      const std::string where = c.dir + c.url + fmt::format("{}", fmt::join(c.server_command, " "));
      if (!seen_runtimes.insert(c.name + "\n" + where).second) {
        return r.Fail(key, c.name + (where.empty() ? "" : " (" + where + ")") +
                               " is listed twice; put every value of a setting in one list "
                               "instead");
      }
      suite.runtimes.push_back(std::move(*rt));
    }
    // Entries of one runtime name are told apart by where they live: the folder, the URL, or
    // the server command's program; by their position when even that is the same.
    for (size_t i = 0; i < suite.runtimes.size(); ++i) {
      SuiteRuntime& rt = suite.runtimes[i];
      const auto same = std::count_if(suite.runtimes.begin(), suite.runtimes.end(),
                                      [&](const SuiteRuntime& o) { return o.choice.name == rt.choice.name; });
      if (same > 1) {
        const RuntimeChoice& c = rt.choice;
        const std::string where = !c.dir.empty()   ? c.dir
                                  : !c.url.empty() ? c.url
                                                   : c.server_command.front();
        rt.label += " (" + where + ")";
      }
    }
    for (size_t i = 0; i < suite.runtimes.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (suite.runtimes[j].label == suite.runtimes[i].label) {
          suite.runtimes[i].label += " #" + std::to_string(i + 1);
          break;
        }
      }
    }
  }

  if (const toml::node* n = root.get("devices")) {
    const toml::array* devices = n->as_array();
    if (devices == nullptr || devices->empty()) {
      return r.Fail("devices", "expected [[devices]] tables with a uri each, e.g. uri = "
                               "\"ssh://pi@board\" (or leave it out: this machine)");
    }
    std::set<std::string> seen_devices;
    for (size_t i = 0; i < devices->size(); ++i) {
      const std::string key = "devices[" + std::to_string(i + 1) + "]";
      const toml::table* t = (*devices)[i].as_table();
      if (t == nullptr) return r.Fail(key, "expected a table ([[devices]])");
      if (auto s = r.OnlyKeys(*t, key, {"uri", "driver"}); !s) return s.error();
      auto uri = r.String(*t, "uri", key, true);
      if (!uri) return uri.error();
      auto address = ParseDeviceAddress(*uri);
      if (!address) return r.Fail(key + ".uri", address.error().message);
      if (!seen_devices.insert(address->Uri()).second) {
        return r.Fail(key + ".uri", address->Uri() + " is listed twice");
      }
      suite.devices.push_back(address->Uri());
      auto driver = r.String(*t, "driver", key, false);
      if (!driver) return driver.error();
      if (!driver->empty()) {
        if (address->kind == TransportKind::kLocal) {
          return r.Fail(key + ".driver", "is for another device; this machine runs the driver "
                                         "built beside pipette");
        }
        const std::string path = Absolute(*driver, base_dir);
        if (access(path.c_str(), R_OK) != 0) {
          return r.Fail(key + ".driver", path + ": no such file; build it with "
                                                "scripts/build-device.sh");
        }
        suite.device_drivers[address->Uri()] = path;
      }
    }
  }

  if (const toml::node* n = root.get("baseline")) {
    if (suite.mode != SuiteMode::kOneFactor) {
      return r.Fail("baseline", "only mode = \"one-factor\" uses a baseline; set that mode or "
                                "remove [baseline]");
    }
    const toml::table* b = n->as_table();
    if (b == nullptr) return r.Fail("baseline", "expected a table");
    if (auto s = r.OnlyKeys(*b, "baseline", {"model", "runtime", "settings"}); !s) return s.error();
    auto model = r.String(*b, "model", "baseline", false);
    if (!model) return model.error();
    if (!model->empty()) suite.baseline.model = Absolute(*model, base_dir);
    auto runtime = r.String(*b, "runtime", "baseline", false);
    if (!runtime) return runtime.error();
    suite.baseline.runtime = *runtime;
    if (const toml::node* sn = b->get("settings")) {
      const toml::table* st = sn->as_table();
      if (st == nullptr) return r.Fail("baseline.settings", "expected a table");
      for (const auto& [k, v] : *st) {
        const std::string name = "baseline.settings." + std::string(k.str());
        auto value = Scalar(v);
        if (!value) return r.Fail(name, "expected one value (not a list or table)");
        suite.baseline.settings[std::string(k.str())] = *value;
      }
    }
  }

  if (const toml::node* n = root.get("harness")) {
    if (!n->is_table()) return r.Fail("harness", "expected a table");
    if (auto s = ReadHarness(*n->as_table(), suite.policy, r); !s) return s.error();
  }
  if (const toml::node* n = root.get("readiness")) {
    if (!n->is_table()) return r.Fail("readiness", "expected a table");
    if (auto s = ReadReadiness(*n->as_table(), suite.readiness, r); !s) return s.error();
  }
  suite.eval.max_tokens = 0;  // the benchmark's own unless given
  if (const toml::node* n = root.get("eval")) {
    if (!n->is_table()) return r.Fail("eval", "expected a table");
    if (auto s = ReadEval(*n->as_table(), base_dir, suite.eval, r); !s) return s.error();
  }
  return suite;
}

Result<Suite> ParseSuiteFile(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return MakeError(path + " is a folder; give the path to a suite TOML file (see docs/suites.md)");
  }
  if (!fs::exists(path, ec)) {
    return MakeError(path + ": no such suite file; give the path to a suite TOML file "
                            "(see docs/suites.md)");
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return MakeError(path + ": cannot read the suite file");
  const std::string base = fs::absolute(path).parent_path().string();
  // A decision file is a suite plus [decision] (pipette/decide.h): `suite run` measures its
  // whole matrix, which is how a funnel's choice is checked against the full matrix.
  return ParseSuiteToml(text.str(), base, path, {"decision"});
}

}  // namespace pipette
