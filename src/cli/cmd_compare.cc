#include "cli/number_range.h"
#include "cli/cmd_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "analysis/group_filter.h"
#include "analysis/noise.h"
#include "cli/compare_metrics.h"
#include "cli/limit_options.h"
#include "cli/noise_notes.h"
#include "cli/result_source.h"
#include "cli/store_reading.h"
#include "pipette/analysis.h"
#include "pipette/gguf.h"
#include "pipette/record.h"
#include "pipette/store.h"
#include "platform/device_names.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

struct CompareArgs {
  std::string a, b;              // result ids (or unique prefixes)
  std::string group_a, group_b;  // --a / --b filters
  CompareOptions options;
  bool newest = false;
  ResultFilter common;  // the reading commands' filters, applied to both groups
};

Result<json> Load(ResultSource& store, const std::string& id) {
  auto r = store.Get(id);
  if (!r) return r.error();
  if (!r->has_value()) {
    return MakeError("no result '" + id + "' in " + store.where() + "; `pipette results list` shows them");
  }
  if ((**r).value("status", "") != "ok") {
    return MakeError("result " + id + " failed; only ok results have measurements to compare");
  }
  return **r;
}

std::string Describe(const json& r) {
  const json none = json::object();
  const json& settings =
      r.contains("runtime") && r["runtime"].is_object() ? r["runtime"].value("settings", none) : none;
  return fmt::format("{} {} {} threads={}", r.value("benchmark", none).value("id", ""),
                     r.value("model", none).value("file_name", ""),
                     QuantLabel(r.value("model", none)),
                     settings.is_object() ? settings.value("threads", 0) : 0);
}

// What compare says beside its table on stderr (notes and warnings), kept while the table is made
// and written when this goes out of scope, after stdout is flushed: each on its own line after
// the table and its footnote, so that none lands inside a line of them however the two streams
// are buffered and merged (issue 27: "B/A outside 1 +- 0.02note: ...").
class SideNotes {
 public:
  SideNotes() = default;
  SideNotes(const SideNotes&) = delete;
  SideNotes& operator=(const SideNotes&) = delete;
  ~SideNotes() {
    std::cout.flush();
    for (const std::string& line : lines_) std::cerr << line << "\n";
  }
  void Add(std::string line) { lines_.push_back(std::move(line)); }

 private:
  std::vector<std::string> lines_;
};

// Comparing a result with itself is a sanity check (no difference), but A and B ending up as the
// same result by accident (one id twice, or group filters that overlap) would read as "no
// change": say so.
void NoteSameResult(const json& a, const json& b, const char* why, SideNotes& notes) {
  if (a["result_id"] != b["result_id"]) return;
  const json none = json::object();
  notes.Add("note: A and B are the same result " + a["result_id"].get<std::string>() + " for " +
            a.value("benchmark", none).value("id", "") + "; " + why);
}

// A noisy result (the ! of `results list`, analysis::IsNoisy) makes any verdict on it weak: say
// so, naming the side; what to try is said once for all of them (NoteNoiseFloorAndAdvice).
void NoteNoisy(const json& r, const char* side, SideNotes& notes,
               std::vector<std::pair<std::string, json>>& noisy) {
  if (!analysis::IsNoisy(r)) return;
  const json none = json::object();
  const std::string id = r.contains("pooled") && r["pooled"].value("results", 0) > 1
                             ? fmt::format("{} pooled results", r["pooled"].value("results", 0))
                             : r["result_id"].get<std::string>();
  notes.Add(fmt::format("note: {} ({}, {}) is noisy: its 95% CI stayed wider than the target, so "
                        "a verdict on it is weak",
                        side, id, r.value("benchmark", none).value("id", "")));
  noisy.emplace_back(fmt::format("{} ({})", side, id), r);
}

// The noise floor of the compared results' devices (when measured, or when a side is noisy),
// then what to try for the noisy sides, once.
void NoteNoiseFloorAndAdvice(const std::vector<json>& compared,
                             const std::vector<std::pair<std::string, json>>& noisy,
                             SideNotes& notes) {
  for (const std::string& line : NoiseFloorLines(compared, !noisy.empty())) {
    notes.Add("note: " + line);
  }
  for (const std::string& line : AdviceLines(noisy)) notes.Add("  " + line);
}

// A pooled side that left a result out (a mean-only import: PoolResults) says which and why.
void NoteLeftOut(const json& r, const char* side, SideNotes& notes) {
  const json* left_out = record::Find(r, "/pooled/left_out");
  if (left_out == nullptr || !left_out->is_array()) return;
  for (const json& l : *left_out) {
    notes.Add(fmt::format("note: {} leaves result {} out of its pool: {}", side,
                          l.value("result_id", std::string("?")),
                          l.value("reason", std::string())));
  }
}

// A side measured under an emulator (device.emulated): its speeds are not the hardware's. Said
// once per side.
void NoteEmulated(const std::vector<json>& side, const char* name, SideNotes& notes) {
  for (const json& r : side) {
    const json d = r.value("device", json::object());
    if (!d.value("emulated", false)) continue;
    notes.Add(fmt::format("note: {} ran under an emulator ({} on a {} kernel): its speeds are not "
                          "the hardware's",
                          name, d["os"].value("arch", "?"),
                          d.value("emulated_on", std::string("?"))));
    return;
  }
}

int ComparePair(const CompareArgs& a, ResultSource& store, CliContext& ctx) {
  auto ra = Load(store, a.a);
  if (!ra) return ReportError(ctx, ra.error());
  auto rb = Load(store, a.b);
  if (!rb) return ReportError(ctx, rb.error());
  SideNotes notes;
  NoteSameResult(*ra, *rb, "both ids name it", notes);
  std::vector<std::pair<std::string, json>> noisy;
  NoteNoisy(*ra, "A", notes, noisy);
  NoteNoisy(*rb, "B", notes, noisy);
  NoteNoiseFloorAndAdvice({*ra, *rb}, noisy, notes);
  NoteEmulated({*ra}, "A", notes);
  NoteEmulated({*rb}, "B", notes);
  const json rows = CompareMetrics(*ra, *rb, a.options);
  if (ctx.json) {
    std::cout << json{{"a", (*ra)["result_id"]}, {"b", (*rb)["result_id"]},
                      {"alpha", a.options.alpha}, {"noise", a.options.noise}, {"metrics", rows}}
                     .dump(2)
              << std::endl;
    return kExitOk;
  }
  std::cout << "A  " << (*ra)["result_id"].get<std::string>() << "  " << Describe(*ra) << "\n"
            << "B  " << (*rb)["result_id"].get<std::string>() << "  " << Describe(*rb) << "\n";
  PrintCompareTable(rows, false, std::cout);
  PrintCompareFootnote(a.options, std::cout);
  PrintPairedAccuracy(rows, std::cout);
  if ((*ra)["benchmark"]["id"] != (*rb)["benchmark"]["id"]) {
    notes.Add("pipette: warning: A and B ran different benchmarks");
  }
  return kExitOk;
}

// The ok results a group filter selects, narrowed in the store where its filter can.
Result<std::vector<json>> GroupRecords(ResultSource& store, const analysis::GroupFilter& group,
                                       const ResultFilter& common) {
  const ResultFilter f = analysis::ToResultFilter(group, common);
  auto records = store.Records(f);
  if (!records) return records.error();
  std::vector<json> out;
  for (json& r : *records) {
    if (analysis::Matches(group, r)) out.push_back(std::move(r));
  }
  return out;
}

// How many configurations (ConfigurationKey) the results of one side come from.
size_t ConfigurationCount(const std::vector<json>& side) {
  std::set<std::string> keys;
  for (const json& r : side) keys.insert(ConfigurationKey(r));
  return keys.size();
}

// The key a group term and a filter common to both groups would both set; "" when none. Both
// at once would leave one of them unused (ToResultFilter replaces the common one).
std::string Collision(const analysis::GroupFilter& group, const ResultFilter& common) {
  for (const auto& [key, value] : group.terms) {
    const bool in_common = (key == "quant" && !common.quants.empty()) ||
                           (key == "model" && !common.models.empty()) ||
                           (key == "benchmark" && !common.benchmarks.empty()) ||
                           (key == "runtime" && !common.runtimes.empty()) ||
                           (key == "device" && !common.devices.empty()) ||
                           (key == "label" && !common.labels.empty()) ||
                           std::any_of(common.settings.begin(), common.settings.end(),
                                       [&](const std::string& s) { return s.rfind(key + "=", 0) == 0; });
    if (in_common) return key;
  }
  return "";
}

int CompareGroups(const CompareArgs& a, ResultSource& store, CliContext& ctx) {
  auto fa = analysis::ParseGroupFilter(a.group_a);
  if (!fa) return ReportError(ctx, fa.error().Wrap("--a"));
  auto fb = analysis::ParseGroupFilter(a.group_b);
  if (!fb) return ReportError(ctx, fb.error().Wrap("--b"));
  // device=NAME: a name given on this host stands for its device's id, so that results measured
  // before the device was named are found too.
  const std::map<std::string, std::string> names = ReadDeviceNames();
  for (analysis::GroupFilter* group : {&*fa, &*fb}) {
    const auto term = group->terms.find("device");
    if (term == group->terms.end()) continue;
    for (const auto& [id, name] : names) {
      if (name == term->second) term->second = id;
    }
  }
  for (const auto& [flag, group] : {std::pair{"--a", &*fa}, std::pair{"--b", &*fb}}) {
    if (const std::string key = Collision(*group, a.common); !key.empty()) {
      return ReportError(ctx, MakeError(std::string(flag) + " " + group->text + " sets " + key +
                                        ", and a filter for both groups sets it too; give " + key +
                                        " in one place"));
    }
  }
  auto ga = GroupRecords(store, *fa, a.common);
  if (!ga) return ReportError(ctx, ga.error(), kExitFailure);
  auto gb = GroupRecords(store, *fb, a.common);
  if (!gb) return ReportError(ctx, gb.error(), kExitFailure);
  for (const auto& [flag, filter, group] :
       {std::tuple{"--a", &a.group_a, &*ga}, std::tuple{"--b", &a.group_b, &*gb}}) {
    if (group->empty()) {
      return ReportError(ctx, MakeError(fmt::format("{} {} selects no ok result in {}; `pipette "
                                                    "results list` shows what is stored",
                                                    flag, *filter, store.where())));
    }
  }
  SideNotes notes;
  NoteEmulated(*ga, "A", notes);
  NoteEmulated(*gb, "B", notes);
  const analysis::GroupPairs pairs =
      analysis::PairByBenchmark(*ga, *gb, a.newest ? Repeats::kNewest : Repeats::kPool);
  json out_pairs = json::array(), rows = json::array();
  size_t pooled = 0;
  std::vector<std::pair<std::string, json>> noisy;
  std::vector<json> compared;
  for (const auto& p : pairs.pairs) {
    compared.push_back(p.a);
    compared.push_back(p.b);
    pooled += p.a.contains("pooled") || p.b.contains("pooled") ? 1 : 0;
    NoteSameResult(p.a, p.b, "the filters overlap", notes);
    NoteNoisy(p.a, "A", notes, noisy);
    NoteNoisy(p.b, "B", notes, noisy);
    NoteLeftOut(p.a, "A", notes);
    NoteLeftOut(p.b, "B", notes);
    json metrics = CompareMetrics(p.a, p.b, a.options);
    for (json& m : metrics) {
      json row = m;
      row["benchmark_id"] = p.benchmark_id;
      rows.push_back(row);
    }
    out_pairs.push_back({{"benchmark_id", p.benchmark_id},
                         {"a", p.a.contains("pooled") ? p.a["pooled"]["result_ids"]
                                                        : p.a["result_id"]},
                         {"b", p.b.contains("pooled") ? p.b["pooled"]["result_ids"]
                                                        : p.b["result_id"]},
                         {"metrics", metrics}});
  }
  const auto warn_mixed = [&](const char* flag, const std::string& filter,
                              const std::vector<json>& side) {
    const size_t configs = ConfigurationCount(side);
    if (configs > 1) {
      notes.Add(fmt::format(
          "pipette: warning: {} {} holds {} configurations; each benchmark uses the results of "
          "its newest configuration only (narrow the filter, e.g. with threads= or model=)",
          flag, filter, configs));
    }
  };
  warn_mixed("--a", a.group_a, *ga);
  warn_mixed("--b", a.group_b, *gb);
  NoteNoiseFloorAndAdvice(compared, noisy, notes);
  std::set<std::string> ids_a;
  for (const json& r : *ga) ids_a.insert(r.value("result_id", ""));
  size_t shared = 0;
  for (const json& r : *gb) shared += ids_a.count(r.value("result_id", ""));
  if (shared > 0) {
    notes.Add(fmt::format("note: {} result{} belong to both groups; the filters overlap", shared,
                          shared == 1 ? "" : "s"));
  }
  if (ctx.json) {
    std::cout << json{{"a", {{"filter", a.group_a}, {"results", ga->size()}}},
                      {"b", {{"filter", a.group_b}, {"results", gb->size()}}},
                      {"alpha", a.options.alpha},
                      {"noise", a.options.noise},
                      {"pairs", out_pairs},
                      {"only_a", pairs.only_a},
                      {"only_b", pairs.only_b}}
                     .dump(2)
              << std::endl;
    return kExitOk;
  }
  const auto results = [](size_t n) { return fmt::format("{} ok result{}", n, n == 1 ? "" : "s"); };
  std::cout << fmt::format("A  {}  ({})\nB  {}  ({})\n", a.group_a, results(ga->size()),
                           a.group_b, results(gb->size()));
  if (pairs.pairs.empty()) {
    std::cout << "no benchmark was measured in both groups\n";
  } else {
    std::cout << fmt::format(
        "{} benchmark{} in both, {}:\n", pairs.pairs.size(), pairs.pairs.size() == 1 ? "" : "s",
        a.newest   ? "the newest result of each"
        : pooled ? fmt::format("the repetitions of all ok results of each pooled ({} pooled from "
                               "several; --newest for the newest alone)",
                               pooled)
                 : "one ok result of each");
    PrintCompareTable(rows, true, std::cout);
    PrintCompareFootnote(a.options, std::cout);
    PrintPairedAccuracy(rows, std::cout);
  }
  const auto unpaired = [](const char* side, const std::vector<std::string>& ids) {
    if (ids.empty()) return;
    std::cout << "unpaired, only in " << side << ":";
    for (const std::string& id : ids) std::cout << " " << id;
    std::cout << "\n";
  };
  unpaired("A", pairs.only_a);
  unpaired("B", pairs.only_b);
  return kExitOk;
}

int Compare(const CompareArgs& a, CliContext& ctx) {
  const bool by_id = !a.a.empty() || !a.b.empty();
  const bool by_group = !a.group_a.empty() || !a.group_b.empty();
  if (by_id == by_group || (by_id && (a.a.empty() || a.b.empty())) ||
      (by_group && (a.group_a.empty() || a.group_b.empty()))) {
    return ReportError(ctx, MakeError("compare takes two result ids (compare A B) or two groups "
                                      "(compare --a quant=F32 --b quant=Q4_0), and not a mix"));
  }
  if (by_id && !FilterText(a.common).empty()) {
    return ReportError(ctx, MakeError("filters (" + FilterText(a.common) +
                                      ") narrow the groups of --a/--b; compare A B takes two "
                                      "result ids as they are"));
  }
  auto store = OpenSourceToRead(ctx);
  if (!store) return ctx.exit_code;
  return by_id ? ComparePair(a, *store, ctx) : CompareGroups(a, *store, ctx);
}

}  // namespace

void AddCompareCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Compare two results, or two groups of results paired by benchmark, metric by "
                 "metric, with a Mann-Whitney U test on their raw samples");
  cmd->add_option("A", args->a, "result id (or unique prefix) of the baseline");
  cmd->add_option("B", args->b, "result id (or unique prefix) compared with it");
  cmd->add_option("--a", args->group_a,
                  "baseline group: key=value[,key=value], keys quant, model, benchmark, runtime, "
                  "device, label and settings such as threads, cpus, n_batch (ok results only; "
                  "the filters below apply to both groups)");
  cmd->add_option("--b", args->group_b, "group compared with it, same syntax");
  AddConfigurationFilters(cmd, args->common);
  AddServerOption(cmd, ctx);
  cmd->add_option("--alpha", args->options.alpha, "significance level")->capture_default_str()
      ->check(NumberIn(1e-9, 0.5));
  AddRepeatsOption(cmd, args->newest);
  cmd->add_option("--noise", args->options.noise,
                  "relative noise band: smaller changes are not reported")
      ->capture_default_str()->check(NumberIn(0.0, 1.0));
  cmd->callback([args, &ctx, cmd] {
    if (CheckSince(*cmd, args->common, ctx)) Compare(*args, ctx);
  });
}

}  // namespace pipette::cli
