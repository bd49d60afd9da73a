// Reading a decision file: a suite plus [decision] (pipette/decide.h, docs/deciding.md).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "analysis/byte_size.h"
#include "pipette/benchmark.h"
#include "pipette/decide.h"

namespace pipette {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json ToJson(const toml::table& t) {
  std::ostringstream out;
  out << toml::json_formatter{t};
  return json::parse(out.str());
}

// The types of benchmark that measure each judged quantity.
struct Needs {
  std::string what;                  // "decision.limits.max_ttft_ms"
  std::set<BenchmarkType> types;     // any of
  std::string eval;                  // accuracy: the data set or benchmark id
  std::string which;                 // for the message: "max_memory_usage_<P>"
};

bool IsEvalBenchmarkOf(const std::string& id, const std::string& eval) {
  return id == eval || id.rfind("eval_" + eval + "_", 0) == 0;
}

class DecisionReader {
 public:
  DecisionReader(std::string source) : source_(std::move(source)) {}

  Error Fail(const std::string& key, const std::string& message) const {
    return MakeError(fmt::format("{}: decision.{}: {}", source_, key, message));
  }

  Result<double> Number(const toml::node& node, const std::string& key, const std::string& what) {
    std::optional<double> v;
    if (const auto* i = node.as_integer()) v = static_cast<double>(i->get());
    if (const auto* f = node.as_floating_point()) v = f->get();
    if (!v || !std::isfinite(*v) || *v < 0) {
      return Fail(key, "expected a finite number >= 0 (" + what + ")");
    }
    return *v;
  }

  Result<int> Count(const toml::table& t, const std::string& key, const std::string& name,
                    int fallback, int lo, int hi) {
    const toml::node* n = t.get(name);
    if (!n) return fallback;
    const auto* i = n->as_integer();
    if (!i || i->get() < lo || i->get() > hi) {
      return Fail(key, fmt::format("expected an integer from {} to {}", lo, hi));
    }
    return static_cast<int>(i->get());
  }

  Status OnlyKeys(const toml::table& t, const std::string& where,
                  const std::vector<std::string>& known) const {
    for (const auto& [k, v] : t) {
      if (std::find(known.begin(), known.end(), std::string(k.str())) != known.end()) continue;
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      return Fail(where.empty() ? std::string(k.str()) : where + "." + std::string(k.str()),
                  "unknown key; expected one of " + list);
    }
    return {};
  }

 private:
  std::string source_;
};

}  // namespace

Result<DecisionFile> ParseDecisionToml(const std::string& text, const std::string& base_dir,
                                       const std::string& source_name) {
  auto suite = ParseSuiteToml(text, base_dir, source_name, {"decision"});
  if (!suite) return suite.error();
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    return MakeError(source_name + ": not valid TOML: " + std::string(e.description()));
  }
  DecisionReader r(source_name);
  DecisionFile out;
  out.suite = std::move(*suite);
  const toml::table* table = root["decision"].as_table();
  if (!table) {
    return MakeError(source_name + ": no [decision] table: a decision file is a suite plus "
                                   "[decision] with limits and objectives (see docs/deciding.md)");
  }
  if (auto s = r.OnlyKeys(*table, "", {"objectives", "alpha", "budget_minutes", "limits",
                                       "screen", "measure", "stabilize"});
      !s) {
    return s.error();
  }
  Decision& d = out.decision;

  // Objectives.
  if (const toml::node* n = table->get("objectives")) {
    const auto* a = n->as_array();
    if (!a) return r.Fail("objectives", "expected a list such as [\"decode\", \"memory\", \"quality\"]");
    for (const auto& e : *a) {
      const auto* s = e.as_string();
      const std::string v = s ? s->get() : "";
      FunnelObjective o;
      if (v == "decode") {
        o = FunnelObjective::kDecode;
      } else if (v == "memory") {
        o = FunnelObjective::kMemory;
      } else if (v == "quality") {
        o = FunnelObjective::kQuality;
      } else {
        return r.Fail("objectives", "'" + v + "' is not an objective; use decode, memory or quality");
      }
      if (std::find(d.objectives.begin(), d.objectives.end(), o) != d.objectives.end()) {
        return r.Fail("objectives", "'" + v + "' is listed twice");
      }
      d.objectives.push_back(o);
    }
  }
  if (const toml::node* n = table->get("alpha")) {
    auto a = r.Number(*n, "alpha", "a rate such as 0.05");
    if (!a) return a.error();
    if (*a <= 0 || *a >= 0.5) return r.Fail("alpha", "expected a rate above 0 and below 0.5, e.g. 0.05");
    d.alpha = *a;
  }
  if (const toml::node* n = table->get("budget_minutes")) {
    auto b = r.Number(*n, "budget_minutes", "minutes of device time");
    if (!b) return b.error();
    if (*b <= 0) return r.Fail("budget_minutes", "must be above 0 minutes");
    d.budget_minutes = *b;
  }

  // Limits.
  std::vector<Needs> needs;
  if (const toml::node* n = table->get("limits")) {
    const auto* limits = n->as_table();
    if (!limits) return r.Fail("limits", "expected a table ([decision.limits])");
    if (auto s = r.OnlyKeys(*limits, "limits",
                            {"max_memory", "min_decode_throughput", "max_ttft_ms",
                             "max_latency_ms", "max_power_w", "max_energy_per_token_mj",
                             "max_quality_drop_pp", "min_accuracy", "max_accuracy_drop_pp"});
        !s) {
      return s.error();
    }
    Limits& l = d.limits;
    for (const auto& [k, v] : *limits) {
      const std::string key(k.str());
      const std::string where = "limits." + key;
      if (key == "max_memory") {
        const auto* s = v.as_string();
        if (!s) return r.Fail(where, "expected a size with a unit, e.g. \"12.5MiB\"");
        auto bytes = analysis::ParseByteSize(s->get());
        if (!bytes) return r.Fail(where, bytes.error().message);
        l.max_memory_bytes = *bytes;
        needs.push_back({"decision." + where, {BenchmarkType::kMemory}, "", "max_memory_usage_<P>"});
        continue;
      }
      if (key == "min_accuracy" || key == "max_accuracy_drop_pp") {
        const auto* t = v.as_table();
        if (!t || t->empty()) {
          return r.Fail(where, "expected a table of EVAL = VALUE, e.g. { math_500 = 0.4 }");
        }
        for (const auto& [ek, ev] : *t) {
          auto x = r.Number(ev, where + "." + std::string(ek.str()),
                            key == "min_accuracy" ? "a fraction in [0, 1]" : "percentage points");
          if (!x) return x.error();
          if (key == "min_accuracy" && *x > 1) {
            return r.Fail(where + "." + std::string(ek.str()), "expected a fraction in [0, 1], e.g. 0.4");
          }
          Limits::Accuracy a{std::string(ek.str()), *x};
          (key == "min_accuracy" ? l.min_accuracy : l.max_accuracy_drop).push_back(a);
          needs.push_back({"decision." + where + "." + a.eval, {BenchmarkType::kEval}, a.eval,
                           "eval_" + a.eval + "_<version>"});
        }
        continue;
      }
      auto x = r.Number(v, where, key == "min_decode_throughput" ? "tokens/s" : "the limit's unit");
      if (!x) return x.error();
      const std::string what = "decision." + where;
      if (key == "min_decode_throughput") {
        l.min_decode_throughput = *x;
        needs.push_back({what, {BenchmarkType::kDecode}, "", "decode_throughput_<P>_<D>"});
      } else if (key == "max_ttft_ms") {
        l.max_ttft_ms = *x;
        needs.push_back({what, {BenchmarkType::kPrefill, BenchmarkType::kEndToEnd}, "",
                         "prefill_throughput_<P> or end_to_end_latency_<P>_<D>"});
      } else if (key == "max_latency_ms") {
        l.max_latency_ms = *x;
        needs.push_back({what, {BenchmarkType::kEndToEnd}, "", "end_to_end_latency_<P>_<D>"});
      } else if (key == "max_power_w" || key == "max_energy_per_token_mj") {
        (key == "max_power_w" ? l.max_power_w : l.max_energy_per_token_mj) = *x;
        needs.push_back({what,
                         {BenchmarkType::kPrefill, BenchmarkType::kDecode, BenchmarkType::kEndToEnd},
                         "", "a prefill, decode or end-to-end benchmark"});
      } else if (key == "max_quality_drop_pp") {
        l.max_quality_drop = *x;
        needs.push_back({what, {BenchmarkType::kKlDivergence}, "",
                         "kl_divergence_<ctx> (with a reference model)"});
      }
    }
  }
  for (FunnelObjective o : d.objectives) {
    const std::string what = std::string("decision.objectives ") + FunnelObjectiveName(o);
    if (o == FunnelObjective::kDecode) {
      needs.push_back({what, {BenchmarkType::kDecode}, "", "decode_throughput_<P>_<D>"});
    } else if (o == FunnelObjective::kMemory) {
      needs.push_back({what, {BenchmarkType::kMemory}, "", "max_memory_usage_<P>"});
    } else {
      needs.push_back({what, {BenchmarkType::kKlDivergence, BenchmarkType::kEval}, "",
                       "kl_divergence_<ctx> or an eval"});
    }
  }
  if (!d.limits.any() && d.objectives.empty()) {
    return MakeError(source_name + ": [decision] has no limit and no objective: nothing to decide "
                                   "on; add [decision.limits] (e.g. max_memory = \"12.5MiB\") or "
                                   "objectives = [\"decode\", \"memory\", \"quality\"]");
  }

  // Each limit and objective needs a benchmark of the suite that measures it.
  BenchmarkCatalog catalog = BenchmarkCatalog::BuiltIn();
  if (!out.suite.benchmarks_dir.empty()) {
    if (auto s = catalog.AddDirectory(out.suite.benchmarks_dir); !s) return s.error();
  } else if (std::error_code ec; fs::is_directory(DefaultUserBenchmarkDir(), ec)) {
    (void)catalog.AddDirectory(DefaultUserBenchmarkDir());
  }
  std::vector<std::pair<std::string, BenchmarkType>> types;
  for (const std::string& id : out.suite.benchmarks) {
    auto b = catalog.Find(id);
    if (!b) return b.error().Wrap(source_name);
    types.emplace_back(id, b->type);
  }
  for (const Needs& n : needs) {
    bool found = false;
    for (const auto& [id, type] : types) {
      if (!n.types.count(type)) continue;
      if (!n.eval.empty() && !IsEvalBenchmarkOf(id, n.eval)) continue;
      found = true;
    }
    if (!found) {
      return MakeError(fmt::format("{}: {}: no benchmark of the suite measures it; add {} to "
                                   "benchmarks, or drop it",
                                   source_name, n.what, n.which));
    }
  }

  // Stages.
  for (const char* stage : {"screen", "measure", "stabilize"}) {
    const toml::node* n = table->get(stage);
    if (n && !n->is_table()) return r.Fail(stage, "expected a table ([decision." + std::string(stage) + "])");
  }
  if (const auto* t = table->get_as<toml::table>("screen")) {
    if (auto s = r.OnlyKeys(*t, "screen", {"repetitions"}); !s) return s.error();
    auto reps = r.Count(*t, "screen.repetitions", "repetitions", 0, 0, 1000);
    if (!reps) return reps.error();
    d.screen_repetitions = *reps;
  }
  if (const auto* t = table->get_as<toml::table>("measure")) {
    if (auto s = r.OnlyKeys(*t, "measure", {"rounds"}); !s) return s.error();
    auto rounds = r.Count(*t, "measure.rounds", "rounds", 2, 0, 20);
    if (!rounds) return rounds.error();
    d.measure_rounds = *rounds;
  }
  if (const auto* t = table->get_as<toml::table>("stabilize")) {
    if (auto s = r.OnlyKeys(*t, "stabilize", {"finalists", "soak"}); !s) return s.error();
    auto finalists = r.Count(*t, "stabilize.finalists", "finalists", 2, 0, 20);
    if (!finalists) return finalists.error();
    d.finalists = *finalists;
    if (const toml::node* s = t->get("soak")) {
      const auto* str = s->as_string();
      if (!str) return r.Fail("stabilize.soak", "expected a soak benchmark id, e.g. \"soak_varied_256_256_10\"");
      d.soak = str->get();
    }
  }
  if (d.soak.empty()) d.finalists = std::min(d.finalists, 0);
  if (!d.soak.empty()) {
    auto b = catalog.Find(d.soak);
    if (!b || b->type != BenchmarkType::kSoak) {
      return r.Fail("stabilize.soak", "'" + d.soak + "' is not a soak benchmark; give "
                                      "soak_varied_<P>_<D>_<minutes> (varied lengths) or "
                                      "soak_<P>_<D>_<minutes>, e.g. soak_varied_256_256_10");
    }
    d.soak_minutes = b->minutes;
    if (d.budget_minutes && d.finalists * d.soak_minutes > *d.budget_minutes) {
      return r.Fail("stabilize",
                    fmt::format("{} finalists x {} ({:g} min) = {:g} min of soak, more than "
                                "decision.budget_minutes = {:g}; shorten the soak, soak fewer "
                                "finalists or raise the budget",
                                d.finalists, d.soak, d.soak_minutes, d.finalists * d.soak_minutes,
                                *d.budget_minutes));
    }
  }

  json whole = ToJson(root);
  out.decision_json = whole["decision"];
  out.limits_json = out.decision_json.value("limits", json::object());
  out.decision_json.erase("limits");
  whole.erase("decision");
  out.suite_json = std::move(whole);
  return out;
}

Result<DecisionFile> ParseDecisionFile(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec) || !fs::exists(path, ec)) {
    return MakeError(path + ": no such decision file; give the path to a TOML file with a suite "
                            "and [decision] (see docs/deciding.md)");
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return MakeError(path + ": cannot read the decision file");
  return ParseDecisionToml(text.str(), fs::absolute(path).parent_path().string(), path);
}

}  // namespace pipette
