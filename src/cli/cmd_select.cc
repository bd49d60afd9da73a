// `pipette select`: hard limits first, then the Pareto front of what passed (DESIGN.md 6).
#include "cli/cmd_select.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "analysis/byte_size.h"
#include "cli/store_reading.h"
#include "cli/text_table.h"
#include "pipette/analysis.h"
#include "pipette/store.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

// A limit as typed; checked (and converted) before anything is read.
struct LimitOption {
  LimitOption(const char* flag_, const char* what_) : flag(flag_), what(what_) {}
  const char* flag;
  const char* what;  // what to give, for the error message
  std::string text;
  CLI::Option* option = nullptr;
  bool given() const { return option != nullptr && option->count() > 0; }
};

struct SelectArgs {
  ResultFilter filter;
  std::vector<std::string> benchmarks;
  LimitOption max_ttft{"--max-ttft", "milliseconds, e.g. 500"};
  LimitOption max_latency{"--max-latency", "milliseconds, e.g. 2000"};
  LimitOption min_decode_throughput{"--min-decode-throughput", "tokens/s, e.g. 20"};
  LimitOption max_quality_drop{"--max-quality-drop", "percentage points, e.g. 1"};
  LimitOption max_memory{"--max-memory", ""};  // SIZE
};

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::string Mib(double bytes) { return fmt::format("{:.2f} MiB", bytes / (1024.0 * 1024.0)); }

std::string Joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : separator) + s;
  return out;
}

json LimitsJson(const Limits& l) {
  return {{"max_ttft_ms", Optional(l.max_ttft_ms)},
          {"max_latency_ms", Optional(l.max_latency_ms)},
          {"max_memory_bytes", Optional(l.max_memory_bytes)},
          {"min_decode_throughput", Optional(l.min_decode_throughput)},
          {"max_quality_drop", Optional(l.max_quality_drop)}};
}

json CandidateJson(const Candidate& c, int rank) {
  const Configuration& cfg = *c.config;
  return {{"rank", rank > 0 ? json(rank) : json(nullptr)},
          {"name", cfg.name},
          {"key", cfg.key},
          {"model_file", cfg.model_file},
          {"model_sha256", cfg.model_sha256},
          {"quant", cfg.quant},
          {"model_size_bytes", cfg.model_size_bytes},
          {"synthetic", cfg.synthetic},
          {"runtime", cfg.runtime},
          {"runtime_version", cfg.runtime_version},
          {"device_id", cfg.device_id},
          {"settings", cfg.settings},
          {"benchmarks", [&] {
             json ids = json::array();
             for (const json& r : cfg.results) ids.push_back(r["benchmark"]["id"]);
             return ids;
           }()},
          {"decode_throughput", Optional(c.decode_throughput)},
          {"peak_memory_bytes", Optional(c.peak_memory_bytes)},
          {"quality", Optional(c.quality)},
          {"passed", c.excluded_because.empty()},
          {"on_front", c.on_front},
          {"dominated_by", c.dominated_by},
          {"excluded_because", c.excluded_because}};
}

int RunSelect(const SelectArgs& a, CliContext& ctx) {
  // Every limit given (an empty one included) must be a finite number >= 0: "nan" would pass
  // or fail everything silently.
  Limits limits;
  for (const auto& [option, limit] :
       {std::pair{&a.max_ttft, &limits.max_ttft_ms}, std::pair{&a.max_latency, &limits.max_latency_ms},
        std::pair{&a.min_decode_throughput, &limits.min_decode_throughput},
        std::pair{&a.max_quality_drop, &limits.max_quality_drop}}) {
    if (!option->given()) continue;
    auto value = analysis::ParseNonNegative(option->text, option->what);
    if (!value) return ReportError(ctx, value.error().Wrap(option->flag));
    *limit = *value;
  }
  if (a.max_memory.given()) {
    auto bytes = analysis::ParseByteSize(a.max_memory.text);
    if (!bytes) return ReportError(ctx, bytes.error().Wrap(a.max_memory.flag));
    limits.max_memory_bytes = *bytes;
  }

  const std::string path = StorePath(ctx);
  auto store = OpenStoreToRead(ctx);
  if (!store) return ctx.exit_code;
  std::vector<json> records;
  ResultFilter f = a.filter;
  f.status = "ok";
  if (a.benchmarks.size() == 1) f.benchmark = a.benchmarks.front();
  auto found = store->Records(f);
  if (!found) return ReportError(ctx, found.error(), kExitFailure);
  for (json& r : *found) {
    const std::string id = r["benchmark"].value("id", "");
    if (a.benchmarks.empty() ||
        std::find(a.benchmarks.begin(), a.benchmarks.end(), id) != a.benchmarks.end()) {
      records.push_back(std::move(r));
    }
  }
  const std::vector<Configuration> configs = GroupConfigurations(records);
  if (configs.empty()) {
    return ReportError(ctx,
                       MakeError("no ok results match in " + path +
                                 "; nothing to select from (measure with `pipette run`, or widen "
                                 "the filters)"),
                       kExitFailure);
  }
  const SelectResult s = Select(configs, limits);
  size_t passed = 0;
  for (const Candidate& c : s.candidates) passed += c.excluded_because.empty() ? 1 : 0;

  if (ctx.json) {
    json candidates = json::array();
    int rank = 0;
    for (const Candidate& c : s.candidates) {
      candidates.push_back(CandidateJson(c, c.excluded_because.empty() ? ++rank : 0));
    }
    json out = {{"store", path},
                {"limits", LimitsJson(limits)},
                {"configurations", configs.size()},
                {"passed", passed},
                {"speed_benchmarks", s.speed_benchmarks},
                {"without_decode", s.without_decode},
                {"candidates", candidates}};
    if (passed == 0) out["message"] = "no configuration meets the limits";
    std::cout << out.dump(2) << std::endl;
    return kExitOk;
  }

  bool synthetic = false, quality = false;
  for (const Candidate& c : s.candidates) quality = quality || c.quality.has_value();
  if (passed == 0) {
    std::cout << "no configuration meets the limits\n";
  } else {
    std::vector<std::vector<std::string>> table = {
        {"RANK", "CONFIGURATION", "DECODE (tokens/s)", "PEAK MEMORY", "QUALITY", "PARETO"}};
    int rank = 0;
    for (const Candidate& c : s.candidates) {
      if (!c.excluded_because.empty()) continue;
      synthetic = synthetic || c.config->synthetic;
      table.push_back(
          {std::to_string(++rank), c.config->name + (c.config->synthetic ? " *" : ""),
           c.decode_throughput ? fmt::format("{:.2f}", *c.decode_throughput) : "-",
           c.peak_memory_bytes ? Mib(*c.peak_memory_bytes) : "-",
           c.quality ? fmt::format("{:.2f}%", *c.quality) : "-",
           c.on_front ? "front" : "dominated by " + Joined(c.dominated_by, ", ")});
    }
    PrintTable(table, std::cout);
    std::vector<std::string> notes;
    if (!s.speed_benchmarks.empty()) {
      notes.push_back("decode: " +
                      std::string(s.speed_benchmarks.size() > 1 ? "geometric mean of " : "") +
                      Joined(s.speed_benchmarks, ", "));
    }
    if (!s.without_decode.empty() && s.without_decode.size() < passed) {
      notes.push_back("no decode result (speed not compared): " + Joined(s.without_decode, ", "));
    }
    notes.push_back("peak memory: largest max_host_usage median");
    if (quality) notes.push_back("quality: top-1 agreement with the kl_divergence reference");
    std::cout << Joined(notes, "; ") << "\n";
    if (synthetic) {
      std::cout << "* synthetic model: its speed stands for its shape, not for any quality\n";
    }
  }
  if (passed < s.candidates.size()) {
    std::cout << (passed == 0 ? "" : "\n") << "excluded:\n";
    for (const Candidate& c : s.candidates) {
      if (c.excluded_because.empty()) continue;
      std::cout << "  " << c.config->name << ": " << Joined(c.excluded_because, "; ") << "\n";
    }
  }
  return kExitOk;
}

}  // namespace

void AddSelectCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<SelectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "select", "Configurations that meet hard limits, ranked on the Pareto front of decode "
                "speed, peak memory and quality");
  ResultFilter& f = args->filter;
  cmd->add_option("--benchmark", args->benchmarks,
                  "only these benchmark ids (repeatable), e.g. decode_throughput_256_100");
  AddConfigurationFilters(cmd, f);
  const auto limit = [&](LimitOption& l, const char* help, const char* type) {
    l.option = cmd->add_option(l.flag, l.text, help)->type_name(type);
  };
  limit(args->max_ttft, "time to first token at most MS (median)", "MS");
  limit(args->max_latency, "end-to-end latency at most MS (median)", "MS");
  limit(args->max_memory, "peak host memory at most SIZE: bytes or e.g. 800MB, 12MiB, 1.5GiB",
        "SIZE");
  limit(args->min_decode_throughput, "decode at least TOK_S tokens/s (median)", "TOK_S");
  limit(args->max_quality_drop,
        "top-1 agreement at most PP percentage points below the best (kl_divergence results)",
        "PP");
  cmd->callback([args, &ctx, cmd] {
    if (CheckSince(*cmd, args->filter, ctx)) RunSelect(*args, ctx);
  });
}

}  // namespace pipette::cli
