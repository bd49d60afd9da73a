// Suite expansion (see suite.h: ExpandSuite): matrix and one-factor modes, run order.
#include <algorithm>
#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "pipette/suite.h"
#include "pipette/runtimes.h"

namespace pipette {
namespace {

using nlohmann::json;

// One configuration: a model, a runtime, one value per setting.
struct Config {
  size_t model = 0;    // index into Suite::models
  size_t runtime = 0;  // index into Suite::runtimes
  std::vector<size_t> choice;  // per setting of the runtime: index into its values
  std::string factor;
};

// Every combination of setting values, the first setting varying slowest.
std::vector<std::vector<size_t>> CrossProduct(const SuiteRuntime& rt) {
  std::vector<std::vector<size_t>> out = {{}};
  for (const auto& [name, values] : rt.settings) {
    std::vector<std::vector<size_t>> next;
    for (const auto& prefix : out) {
      for (size_t v = 0; v < values.size(); ++v) {
        auto c = prefix;
        c.push_back(v);
        next.push_back(std::move(c));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::string FileName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// The one-factor plan: the baseline, then one dimension at a time. The baseline's setting values
// are added to their lists when the lists lack them.
Result<std::vector<Config>> OneFactor(const Suite& suite, SuiteRuntime& rt, size_t runtime) {
  const SuiteBaseline& b = suite.baseline;
  size_t model = 0;
  if (!b.model.empty()) {
    auto it = std::find(suite.models.begin(), suite.models.end(), b.model);
    if (it == suite.models.end()) {
      return MakeError(suite.path + ": baseline.model: " + b.model +
                       " is not one of the [[models]]; list it there too");
    }
    model = static_cast<size_t>(it - suite.models.begin());
  }
  if (!rt.cpus_by_threads.empty()) {
    // The CPU list follows threads there, so the baseline picks it through threads alone.
    const std::string table = fmt::format("runtimes[{}].settings.cpus", runtime + 1);
    if (b.settings.contains("cpus")) {
      return MakeError(suite.path + ": baseline.settings.cpus: " + table + " gives a CPU list "
                       "per threads value; set the baseline's threads instead");
    }
    const json threads = b.settings.value("threads", json());
    if (threads.is_number_integer() && !rt.cpus_by_threads.contains(threads.get<int64_t>())) {
      return MakeError(suite.path + ": baseline.settings.threads: no CPU list for threads = " +
                       threads.dump() + " in " + table + "; add " + threads.dump() +
                       " = \"...\" there");
    }
  }
  std::vector<size_t> base(rt.settings.size(), 0);
  for (const auto& [name, value] : b.settings.items()) {
    size_t i = 0;
    while (i < rt.settings.size() && rt.settings[i].first != name) ++i;
    if (i == rt.settings.size()) {
      rt.settings.emplace_back(name, std::vector<json>{value});
      base.push_back(0);
      continue;
    }
    auto& values = rt.settings[i].second;
    auto it = std::find(values.begin(), values.end(), value);
    if (it == values.end()) {
      values.insert(values.begin(), value);
      base[i] = 0;
    } else {
      base[i] = static_cast<size_t>(it - values.begin());
    }
  }
  std::vector<Config> configs = {{model, runtime, base, "baseline"}};
  for (size_t m = 0; m < suite.models.size(); ++m) {
    if (m != model) configs.push_back({m, runtime, base, "model=" + FileName(suite.models[m])});
  }
  for (size_t i = 0; i < rt.settings.size(); ++i) {
    for (size_t v = 0; v < rt.settings[i].second.size(); ++v) {
      if (v == base[i]) continue;
      auto choice = base;
      choice[i] = v;
      configs.push_back({model, runtime, choice,
                         rt.settings[i].first + "=" + rt.settings[i].second[v].dump()});
    }
  }
  return configs;
}

// The size of the full cross product, checked before it is built: a typo such as threads =
// [1, ..., 1024] must fail in a moment with the factors named, not fill the memory.
Status CheckMatrixSize(const Suite& suite, const std::vector<SuiteRuntime>& runtimes) {
  double settings = 0;
  std::string factors;
  for (const SuiteRuntime& rt : runtimes) {
    double product = 1;
    for (const auto& [name, values] : rt.settings) {
      product *= static_cast<double>(values.size());
      if (values.size() > 1) factors += fmt::format(" x {} {}", values.size(), name);
    }
    settings += product;
  }
  const double cells = static_cast<double>(suite.models.size()) * settings *
                       static_cast<double>(suite.benchmarks.size());
  if (cells <= kMaxSuiteCells) return {};
  return MakeError(fmt::format("{}: the matrix has {:.0f} cells ({} models x {} benchmarks{}), "
                               "more than {}; shorten the lists or use mode = \"one-factor\"",
                               suite.path, cells, suite.models.size(), suite.benchmarks.size(),
                               factors, kMaxSuiteCells));
}

}  // namespace

Result<std::vector<SuiteCell>> ExpandSuite(const Suite& suite) {
  std::vector<SuiteRuntime> runtimes = suite.runtimes;
  if (runtimes.empty()) runtimes.push_back({RuntimeChoice{}, {}, "llamacpp", {}});
  std::vector<Config> configs;
  if (suite.mode == SuiteMode::kMatrix) {
    if (auto s = CheckMatrixSize(suite, runtimes); !s) return s.error();
    for (size_t m = 0; m < suite.models.size(); ++m) {
      for (size_t r = 0; r < runtimes.size(); ++r) {
        for (auto& choice : CrossProduct(runtimes[r])) configs.push_back({m, r, choice, ""});
      }
    }
  } else {
    size_t runtime = 0;
    if (!suite.baseline.runtime.empty()) {
      const auto named = std::count_if(runtimes.begin(), runtimes.end(), [&](const SuiteRuntime& r) {
        return r.choice.name == suite.baseline.runtime;
      });
      if (named > 1) {
        return MakeError(suite.path + ": baseline.runtime: '" + suite.baseline.runtime +
                         "' is listed more than once in [[runtimes]]; a one-factor suite varies "
                         "one runtime entry");
      }
      while (runtime < runtimes.size() && runtimes[runtime].choice.name != suite.baseline.runtime) {
        ++runtime;
      }
      if (runtime == runtimes.size()) {
        return MakeError(suite.path + ": baseline.runtime: '" + suite.baseline.runtime +
                         "' is not one of the [[runtimes]]");
      }
    }
    auto plan = OneFactor(suite, runtimes[runtime], runtime);
    if (!plan) return plan.error();
    configs = std::move(*plan);
    // Run order: each model's configurations together (a stable sort keeps the baseline first).
    std::stable_sort(configs.begin(), configs.end(),
                     [](const Config& a, const Config& b) { return a.model < b.model; });
  }

  std::vector<SuiteCell> cells;
  std::set<std::string> seen;
  for (const Config& c : configs) {
    const SuiteRuntime& rt = runtimes[c.runtime];
    SuiteCell base;
    base.model_path = suite.models[c.model];
    base.runtime = c.runtime;
    base.runtime_label = rt.label;
    for (size_t i = 0; i < rt.settings.size(); ++i) {
      const auto& [name, values] = rt.settings[i];
      base.settings[name] = values[c.choice[i]];
    }
    if (!rt.cpus_by_threads.empty() && base.settings.value("threads", json()).is_number_integer()) {
      const int64_t threads = base.settings["threads"].get<int64_t>();
      const auto it = rt.cpus_by_threads.find(threads);
      if (it == rt.cpus_by_threads.end()) {
        return MakeError(fmt::format("{}: runtimes[{}].settings.cpus: no CPU list for threads = "
                                     "{}; add {} = \"...\"",
                                     suite.path, c.runtime + 1, threads, threads));
      }
      base.settings["cpus"] = it->second;
    }
    auto defs = RuntimeSettingDefs(rt.choice.name);
    if (!defs) return defs.error().Wrap(suite.path);
    if (auto s = CheckSettings(rt.choice.name, *defs, base.settings); !s) {
      return s.error().Wrap(suite.path + ": " + rt.label);
    }
    base.factor = c.factor;
    const std::string key =
        base.model_path + "\n" + std::to_string(c.runtime) + "\n" + base.settings.dump();
    if (!seen.insert(key).second) continue;
    for (const std::string& id : suite.benchmarks) {
      SuiteCell cell = base;
      cell.benchmark_id = id;
      cells.push_back(std::move(cell));
    }
  }
  if (suite.interleave) {
    // Per model (cells of a model are contiguous), benchmark by benchmark across configurations.
    const auto bench_index = [&](const SuiteCell& c) {
      return std::find(suite.benchmarks.begin(), suite.benchmarks.end(), c.benchmark_id) -
             suite.benchmarks.begin();
    };
    for (auto run = cells.begin(); run != cells.end();) {
      const auto end = std::find_if(run, cells.end(), [&](const SuiteCell& c) {
        return c.model_path != run->model_path;
      });
      std::stable_sort(run, end, [&](const SuiteCell& x, const SuiteCell& y) {
        return bench_index(x) < bench_index(y);
      });
      run = end;
    }
  }
  if (!suite.devices.empty()) {
    const size_t total = cells.size() * suite.devices.size();
    if (total > static_cast<size_t>(kMaxSuiteCells)) {
      return MakeError(fmt::format("{}: {} cells on {} devices make {}, more than {}; shorten the "
                                   "lists", suite.path, cells.size(), suite.devices.size(), total,
                                   kMaxSuiteCells));
    }
    std::vector<SuiteCell> on_devices;
    for (const SuiteCell& c : cells) {
      for (size_t d = 0; d < suite.devices.size(); ++d) {
        SuiteCell cell = c;
        cell.device = d;
        cell.device_uri = suite.devices[d];
        if (cell.device_uri != "local") cell.runtime_label += " on " + cell.device_uri;
        on_devices.push_back(std::move(cell));
      }
    }
    cells = std::move(on_devices);
  }
  for (size_t i = 0; i < cells.size(); ++i) cells[i].index = static_cast<int>(i) + 1;
  return cells;
}

}  // namespace pipette
