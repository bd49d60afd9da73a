// Noise advice, two clusters and the overhead-bound note: see noise.h.
#include "analysis/noise.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/record_fields.h"
#include "pipette/record.h"
#include "pipette/stats.h"

namespace pipette::analysis {
namespace {

using nlohmann::json;

constexpr double kOverheadBoundBelow = 0.10;  // decode_roofline_efficiency
constexpr double kBusyWorthSaying = 0.05;     // others' CPU share seen by the readiness gate

// A value in its unit for a sentence: "360 tokens/s", "12.1 MiB", "0.000779 nats".
std::string ValueWithUnit(double value, const std::string& unit) {
  if (unit == "bytes") return FormatBytes(value);
  const std::string number = FormatNumber(value, 3);
  return unit.empty() ? number : number + " " + unit;
}

// Every readiness observation the record kept: each wait's passing observation and the ones that
// held the gate (harness.readiness.waits[].observation and .held[]).
std::vector<json> ReadinessObservations(const json& record) {
  std::vector<json> out;
  const json* waits = record::Find(record, "/harness/readiness/waits");
  if (waits == nullptr || !waits->is_array()) return out;
  for (const json& wait : *waits) {
    if (!wait.is_object()) continue;
    if (wait.contains("observation") && wait["observation"].is_object()) {
      out.push_back(wait["observation"]);
    }
    if (!wait.contains("held") || !wait["held"].is_array()) continue;
    for (const json& o : wait["held"]) {
      if (o.is_object()) out.push_back(o);
    }
  }
  return out;
}

// The largest finite value of `field` over the observations.
std::optional<double> MaxObserved(const std::vector<json>& observations, const char* field) {
  std::optional<double> max;
  for (const json& o : observations) {
    if (!o.contains(field) || !o[field].is_number()) continue;
    const double v = o[field].get<double>();
    if (std::isfinite(v) && (!max || v > *max)) max = v;
  }
  return max;
}

// Whether the readiness policy waived `criterion` ("thermal", "load", "throttle").
bool Waived(const json& record, const char* criterion) {
  const json* waived = record::Find(record, "/harness/readiness/policy/waived");
  if (waived == nullptr || !waived->is_array()) return false;
  return std::find(waived->begin(), waived->end(), criterion) != waived->end();
}

// An eval's accuracy interval narrows as 1/sqrt(questions); repeats narrow it only as far as the
// attempts of one question disagree.
std::vector<std::string> EvalAdvice(const json& record) {
  const auto low = record::NumberAt(record, "/metrics/accuracy/ci95_low");
  const auto high = record::NumberAt(record, "/metrics/accuracy/ci95_high");
  const auto questions = record::NumberAt(record, "/metrics/accuracy/questions");
  const auto target = record::NumberAt(record, "/eval/accuracy_ci_target_pp");
  const auto in_dataset = record::NumberAt(record, "/eval/samples_in_dataset");
  const auto repeats = record::NumberAt(record, "/eval/repeats");
  std::vector<std::string> advice;
  if (!low || !high || !questions || !target || *questions <= 0 || *target <= 0) return advice;
  const double half = 100 * (*high - *low) / 2;
  const double needed = std::ceil(*questions * (half / *target) * (half / *target));
  if (!in_dataset || *questions < *in_dataset) {
    const double limit = in_dataset ? std::min(needed, *in_dataset) : needed;
    advice.push_back(fmt::format("more samples (limit about {:g}; this run had {:g}): the "
                                 "interval, +-{:.1f} pp, narrows as 1/sqrt(questions) toward the "
                                 "target +-{:g} pp",
                                 limit, *questions, half, *target));
  }
  // At temperature 0 every attempt of a question is the same greedy text: repeats add nothing.
  const auto temperature = record::NumberAt(record, "/eval/temperature");
  if (repeats && *repeats < 10 && (!temperature || *temperature > 0)) {
    advice.push_back(fmt::format("more repeats (repeats {:g}): they narrow it as far as the "
                                 "attempts of one question disagree",
                                 std::min(2 * *repeats, 10.0)));
  }
  return advice;
}

std::optional<std::string> MoreRepetitions(const json& record) {
  const auto reps = record::NumberAt(record, "/harness/reps");
  const auto max_reps = record::NumberAt(record, "/harness/max_reps");
  if (!reps || !max_reps || *reps < *max_reps) return std::nullopt;
  return fmt::format("more repetitions (max_reps {:g}; this run stopped at its max_reps {:g})",
                     2 * *max_reps, *max_reps);
}

// An imported result was measured by another tool: what narrows it is a new run of that tool
// (imported again), or pipette's own runtime for it, which repeats to a target behind its gate.
std::vector<std::string> ImportedAdvice(const json& record, const std::string& tool) {
  const auto reps = record::NumberAt(record, "/harness/reps");
  const double more = std::max(10.0, 2 * reps.value_or(5));
  return {fmt::format("rerunning {} with more repetitions and pinned to fixed CPUs, then importing "
                      "it again (taskset -c 0 {} ... -r {:g} -t 1; this run had {})",
                      tool, tool, more, reps ? fmt::format("{:g}", *reps) : "no samples"),
          "measuring it with pipette's llamacpp-stock runtime (the same llama.cpp build), which "
          "repeats to its target behind the readiness gate"};
}

// Whether a server command line already pins the server (a launcher that sets CPU affinity).
bool CommandPins(const std::string& command) {
  for (const char* launcher : {"taskset", "numactl"}) {
    for (size_t at = command.find(launcher); at != std::string::npos;
         at = command.find(launcher, at + 1)) {
      const size_t end = at + std::string(launcher).size();
      const bool starts = at == 0 || command[at - 1] == ' ' || command[at - 1] == '/';
      if (starts && (end == command.size() || command[end] == ' ')) return true;
    }
  }
  return false;
}

// Pinning, in the terms of the record's runtime. llamacpp and llamacpp-stock take the settings
// cpus and threads; openai takes neither: a server pipette started is pinned in its own command
// line (the server setting), and a server at a URL where it is started, outside pipette.
std::optional<std::string> PinCpus(const json& record) {
  if (record::StringAt(record, "/runtime/name") == "openai") {
    const std::string command = record::StringAt(record, "/runtime/settings/server");
    if (command.empty()) {
      const std::string url = record::StringAt(record, "/runtime/server/url");
      return fmt::format("pinning the server{} to fixed CPUs where it is started, e.g. taskset "
                         "-c 0 llama-server ... -t 1 (pipette only connects to it)",
                         url.empty() ? "" : " at " + url);
    }
    if (CommandPins(command)) return std::nullopt;
    return std::string("pinning the server to fixed CPUs in its command line (server = "
                       "[\"taskset\", \"-c\", \"0\", ...], with -t 1 for llama-server)");
  }
  if (!record::StringAt(record, "/runtime/settings/cpus").empty()) return std::nullopt;
  const int threads =
      static_cast<int>(record::NumberAt(record, "/runtime/settings/threads").value_or(1));
  if (threads <= 1) {
    return std::string("pinning the runtime to fixed CPUs (cpus, e.g. \"0\" with threads 1)");
  }
  return fmt::format("pinning the runtime to fixed CPUs (cpus, e.g. \"0-{}\" for its threads {})",
                     threads - 1, threads);
}

std::optional<std::string> CoolDown(const json& record) {
  const auto cooldown = record::NumberAt(record, "/harness/readiness/policy/cooldown_s");
  if (cooldown && *cooldown > 0) return std::nullopt;
  return std::string("a cool-down between cells (cooldown_s, e.g. 30)");
}

// What the readiness gate saw while a cell ran that calls for advice: the largest share of the
// CPUs other processes kept busy (from 5%), the hottest CPU above the gate's threshold.
std::optional<double> BusySeen(const json& record) {
  const auto busy = MaxObserved(ReadinessObservations(record), "busy_fraction");
  return busy && *busy >= kBusyWorthSaying ? busy : std::nullopt;
}

std::optional<double> HeatSeen(const json& record) {
  const auto celsius = MaxObserved(ReadinessObservations(record), "hottest_cpu_celsius");
  const auto max_celsius = record::NumberAt(record, "/harness/readiness/policy/max_cpu_celsius");
  return celsius && max_celsius && *celsius > *max_celsius ? celsius : std::nullopt;
}

// `of` is "" for one record's advice, or " in 8 of them" for several records' merged.
std::string BusyAdvice(double busy, const json& record, const std::string& of = "") {
  const double max_busy =
      record::NumberAt(record, "/harness/readiness/policy/max_busy_fraction").value_or(0.30);
  const std::string gate =
      Waived(record, "load")
          ? std::string("the load criterion was waived; without it the gate waits for them")
          : fmt::format("max_busy_fraction {:.2f}; a lower one waits for them", max_busy);
  return fmt::format(
      "stopping other processes: they kept up to {:.0f}% of the CPUs busy during the readiness "
      "checks{} ({})",
      100 * busy, of, gate);
}

std::string HeatAdvice(double celsius, const json& record, const std::string& of = "") {
  return fmt::format(
      "letting the CPU cool: it reached {:.0f} C during the readiness checks{} (max_cpu_celsius "
      "{:g})",
      celsius, of,
      record::NumberAt(record, "/harness/readiness/policy/max_cpu_celsius").value_or(0));
}

// What the readiness gate saw while this cell ran: other processes' load and the CPU's heat.
std::vector<std::string> ReadinessAdvice(const json& record) {
  std::vector<std::string> advice;
  if (const auto busy = BusySeen(record)) advice.push_back(BusyAdvice(*busy, record));
  if (const auto celsius = HeatSeen(record)) advice.push_back(HeatAdvice(*celsius, record));
  return advice;
}

}  // namespace

bool IsNoisy(const json& record) {
  if (!record.is_object() || record.value("status", "") != "ok") return false;
  const std::string type = BenchmarkTypeOf(record);
  if (type == "soak" || type == "kl_divergence") return false;
  const json* reached = record::Find(record, "/harness/ci_reached");
  if (reached == nullptr || !reached->is_boolean() || reached->get<bool>()) return false;
  return type != "eval" || !EvalAdvice(record).empty();
}

std::optional<std::string> TwoClustersNote(const json& record) {
  const std::string metric = HeadlineMetricOf(record);
  if (metric.empty() || !record.contains("samples") || !record["samples"].is_array()) {
    return std::nullopt;
  }
  std::vector<double> values;
  for (const json& s : record["samples"]) {
    if (!s.is_object() || !s.contains(metric) || !s[metric].is_number()) continue;
    const double v = s[metric].get<double>();
    if (std::isfinite(v)) values.push_back(v);
  }
  const auto c = FindTwoClusters(values);
  if (!c) return std::nullopt;
  const std::string unit = record::MetricUnit(record, metric);
  const std::string low =
      unit == "bytes" ? FormatBytes(c->low_center) : FormatNumber(c->low_center, 3);
  return fmt::format("two clusters: about {} and {} ({} and {} repetitions)", low,
                     ValueWithUnit(c->high_center, unit), c->low_count, c->high_count);
}

std::vector<std::string> NoiseAdvice(const json& record) {
  if (!IsNoisy(record)) return {};
  if (BenchmarkTypeOf(record) == "eval") return EvalAdvice(record);
  if (const json* tool = record::Find(record, "/imported/tool"); tool != nullptr) {
    return ImportedAdvice(record, tool->is_string() ? tool->get<std::string>() : "the tool");
  }
  std::vector<std::string> advice;
  const auto add = [&advice](std::optional<std::string> line) {
    if (line) advice.push_back(std::move(*line));
  };
  // Two clusters usually mean two speeds of CPU (or a frequency change): pinning comes first.
  if (TwoClustersNote(record)) add(PinCpus(record));
  add(MoreRepetitions(record));
  if (!TwoClustersNote(record)) add(PinCpus(record));
  add(CoolDown(record));
  for (std::string& line : ReadinessAdvice(record)) advice.push_back(std::move(line));
  return advice;
}

std::string JoinAdvice(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out.append(out.empty() ? "" : "; ").append(item);
  return out;
}

GroupedAdvice GroupNoiseAdvice(const std::vector<json>& records) {
  GroupedAdvice out;
  std::vector<std::vector<std::string>> all;
  for (const json& r : records) all.push_back(NoiseAdvice(r));
  // What the readiness gate saw differs in its number from cell to cell: seen in several, it is
  // said once with the largest value and how many saw it.
  std::vector<std::string> merged;
  for (const auto& [seen, advise] :
       {std::pair{&BusySeen, &BusyAdvice}, std::pair{&HeatSeen, &HeatAdvice}}) {
    size_t count = 0, worst = 0;
    double largest = 0;
    for (size_t i = 0; i < records.size(); ++i) {
      const auto v = IsNoisy(records[i]) ? seen(records[i]) : std::nullopt;
      if (!v) continue;
      if (count++ == 0 || *v > largest) largest = *v, worst = i;
    }
    if (count < 2) continue;
    for (size_t i = 0; i < records.size(); ++i) {
      const auto v = IsNoisy(records[i]) ? seen(records[i]) : std::nullopt;
      if (!v) continue;
      const std::string own = advise(*v, records[i], "");
      all[i].erase(std::remove(all[i].begin(), all[i].end(), own), all[i].end());
    }
    merged.push_back(advise(largest, records[worst],
                            count == records.size()
                                ? std::string()
                                : fmt::format(" of {} of them", count)));
  }
  if (!all.empty()) {
    for (const std::string& item : all.front()) {
      const bool everywhere = std::all_of(all.begin(), all.end(), [&](const auto& items) {
        return std::find(items.begin(), items.end(), item) != items.end();
      });
      if (everywhere) out.common.push_back(item);
    }
  }
  out.common.insert(out.common.end(), merged.begin(), merged.end());
  for (size_t i = 0; i < records.size(); ++i) {
    std::vector<std::string> own;
    if (auto clusters = TwoClustersNote(records[i])) own.push_back("(" + *clusters + ")");
    for (const std::string& item : all[i]) {
      if (std::find(out.common.begin(), out.common.end(), item) == out.common.end()) {
        own.push_back(item);
      }
    }
    out.own.push_back(std::move(own));
  }
  return out;
}

namespace {

constexpr double kMedianCi95 = 1.96 * 1.2533;

std::string Percent(double fraction) {
  return fraction < 0.001 ? std::string("under 0.1%") : fmt::format("{:.1f}%", 100 * fraction);
}

bool Pinned(const json& record) {
  const auto cpus = record::TextAt(record, "/runtime/settings/cpus");
  return !cpus.empty();
}

}  // namespace

std::vector<std::string> NoiseFloorNotes(const std::vector<json>& records,
                                         const std::string& local_device_id) {
  struct Device {
    std::string id, name;
    double pinned = 0, unpinned = 0;
    double memory = -1;  // the memory mode's spread; -1: not measured (an older probe)
    bool any_pinned = false, any_unpinned = false;
    bool any_memory_bound = false;  // decode or end-to-end results: they stream the weights
    double max_reps = 0, ci_target = 0;  // of its timed results: the most reps, the tightest target
  };
  std::vector<Device> devices;
  for (const json& r : records) {
    const auto pinned = record::NumberAt(r, "/device/noise_floor/pinned");
    const auto unpinned = record::NumberAt(r, "/device/noise_floor/unpinned");
    if (!pinned || !unpinned || *pinned < 0 || *unpinned < 0) continue;
    const std::string id = record::TextAt(r, "/device/id");
    auto it = std::find_if(devices.begin(), devices.end(),
                           [&](const Device& d) { return d.id == id; });
    if (it == devices.end()) {
      devices.push_back({id, record::TextAt(r, "/device/name"), *pinned, *unpinned});
      it = devices.end() - 1;
    }
    const auto memory = record::NumberAt(r, "/device/noise_floor/memory");
    if (memory && *memory >= 0) it->memory = *memory;
    (Pinned(r) ? it->any_pinned : it->any_unpinned) = true;
    const std::string type = record::TextAt(r, "/benchmark/type");
    if (type == "decode" || type == "end_to_end") it->any_memory_bound = true;
    const auto reps = record::NumberAt(r, "/harness/max_reps");
    const auto target = record::NumberAt(r, "/harness/ci_target");
    if (type != "eval" && type != "soak" && reps && target && *reps > 0 && *target > 0) {
      it->max_reps = std::max(it->max_reps, *reps);
      it->ci_target = it->ci_target > 0 ? std::min(it->ci_target, *target) : *target;
    }
  }
  std::vector<std::string> out;
  for (const Device& d : devices) {
    const std::string who = !local_device_id.empty() && d.id == local_device_id
                                ? "this machine's"
                                : "device " + (d.name.empty() ? d.id.substr(0, 8) : d.name) + "'s";
    std::string spread;
    if (d.any_pinned && d.any_unpinned) {
      spread = fmt::format("{} run to run (pinned to one CPU {}, unpinned {})",
                           Percent(std::max(d.pinned, d.unpinned)), Percent(d.pinned),
                           Percent(d.unpinned));
    } else if (d.any_pinned) {
      spread = Percent(d.pinned) + " run to run pinned to one CPU";
    } else {
      spread = Percent(d.unpinned) + " run to run";
      if (d.pinned <= 0.8 * d.unpinned) {
        spread += " (about " + Percent(d.pinned) +
                  " pinned to one CPU with the runtime's cpus setting)";
      }
    }
    double sd = d.any_unpinned ? d.unpinned : d.pinned;
    // Decode streams the weights: where the memory bandwidth a CPU gets varies more than its
    // arithmetic (a VM's neighbours), that is the floor of decode results.
    if (d.any_memory_bound && d.memory > 1.25 * sd) {
      spread += " (" + Percent(d.memory) + " for memory-bound work such as decode)";
      sd = d.memory;
    }
    std::string line = who + " timing varies by about " + spread +
                       "; differences smaller than that cannot be resolved here";
    // The 95% interval of a median of n normal values is about 1.96 x 1.2533 x sd / sqrt(n).
    const double half_width = kMedianCi95 * sd / std::sqrt(std::max(1.0, d.max_reps));
    if (d.max_reps > 0 && half_width > d.ci_target) {
      line += fmt::format(
          ", and the 95% CI of a median of {:.0f} repetitions is about +-{:.1f}% here, wider than "
          "the +-{:.0f}% target: about {:.0f} repetitions would reach it",
          d.max_reps, 100 * half_width, 100 * d.ci_target,
          std::ceil(std::pow(kMedianCi95 * sd / d.ci_target, 2)));
    }
    out.push_back(std::move(line));
  }
  return out;
}

std::optional<std::string> OverheadBoundNote(const json& record) {
  const auto efficiency = record::MetricValue(record, "decode_roofline_efficiency");
  const auto throughput = record::MetricValue(record, "decode_throughput");
  if (!efficiency || !throughput || *efficiency >= kOverheadBoundBelow || *efficiency <= 0 ||
      *throughput <= 0) {
    return std::nullopt;
  }
  const double per_token_ms = 1000 / *throughput;
  double weights_ms = *efficiency * per_token_ms;  // by the efficiency's definition
  const auto bytes = record::NumberAt(record, "/model/tensor_bytes").has_value()
                         ? record::NumberAt(record, "/model/tensor_bytes")
                         : record::NumberAt(record, "/model/size_bytes");
  const auto bandwidth = record::NumberAt(record, "/device/memory_bandwidth_bytes_per_s");
  if (bytes && bandwidth && *bytes > 0 && *bandwidth > 0) {
    weights_ms = std::min(per_token_ms, 1000 * *bytes / *bandwidth);
  }
  return fmt::format(
      "overhead-bound: decode runs at {}% of the memory-bandwidth limit; of {} ms per token "
      "about {} ms is fixed per-token cost, so a smaller quantization will not make it faster",
      FormatNumber(100 * *efficiency, 2), FormatNumber(per_token_ms, 3),
      FormatNumber(per_token_ms - weights_ms, 3));
}

}  // namespace pipette::analysis
