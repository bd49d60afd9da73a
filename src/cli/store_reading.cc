#include "cli/store_reading.h"

#include <charconv>
#include <filesystem>
#include <fstream>

#include "platform/cpu_affinity.h"

namespace pipette::cli {

std::string StorePath(const CliContext& ctx) {
  return ctx.store_path.empty() ? DefaultStorePath() : ctx.store_path;
}

namespace {

// A path that is not a store at all (a folder, an empty file, a file that is not SQLite) is bad
// input, like a missing one; a store that fails to open (busy, corrupt, unreadable) is a failure.
// An empty file is refused before SQLite opens it: opening would write a schema into it, and a
// reading command writes nothing.
bool NotAStore(const std::string& path, std::string& why) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return true;
  if (std::filesystem::is_directory(path, ec)) {
    why = path + ": is a directory, not a results store; check --store";
    return true;
  }
  if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0) {
    why = path + ": is empty (0 bytes), not a results store; check --store";
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  return in.gcount() < static_cast<std::streamsize>(sizeof header) ||
         std::string(header, 15) != "SQLite format 3";
}

}  // namespace

std::unique_ptr<ResultStore> OpenStoreToRead(CliContext& ctx) {
  const std::string path = StorePath(ctx);
  std::string why;
  const bool not_a_store = NotAStore(path, why);
  if (!why.empty()) {
    ReportError(ctx, MakeError(why), kExitBadInput);
    return nullptr;
  }
  StoreOptions options;
  options.create_if_missing = false;
  auto store = ResultStore::Open(path, options);
  if (store.ok()) return std::move(*store);
  ReportError(ctx, store.error(), not_a_store ? kExitBadInput : kExitFailure);
  return nullptr;
}

namespace {

// An empty filter value would match everything (a substring) or nothing (an exact match), and
// usually comes from an unset shell variable: refused.
std::string NotEmpty(const std::string& v) {
  return v.find_first_not_of(" \t") == std::string::npos ? "give a value (it is empty)" : "";
}

std::string PositiveInteger(const std::string& v) {
  int n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n <= 0) {
    return "'" + v + "' is not a thread count: give a positive integer, e.g. 2";
  }
  return "";
}

}  // namespace

void AddConfigurationFilters(CLI::App* cmd, ResultFilter& filter) {
  // Every list option is repeatable; its values are alternatives (--quant Q8_0 --quant Q4_0).
  const auto list = [cmd](const char* flag, std::vector<std::string>& values, const char* help,
                          const char* type) {
    cmd->add_option(flag, values, help)->type_name(type)->allow_extra_args(false)->check(NotEmpty);
  };
  list("--benchmark", filter.benchmarks,
       "benchmark id, e.g. decode_throughput_256_100 (repeatable)", "ID");
  list("--model", filter.models, "model: SHA-256 prefix or part of the file name (repeatable)",
       "MODEL");
  list("--quant", filter.quants, "quantization, e.g. Q4_K_M (any case; repeatable)", "QUANT");
  list("--device", filter.devices, "device id or its prefix (repeatable)", "ID");
  list("--runtime", filter.runtimes, "runtime name, e.g. llamacpp (repeatable)", "NAME");
  list("--label", filter.labels, "device label (repeatable)", "LABEL");
  // Settings are filters on runtime.settings; --threads and --cpus are the common ones spelled
  // out, --setting takes any recorded setting.
  const auto setting = [&filter](std::string key) {
    return [&filter, key](const std::vector<std::string>& values) {
      for (const std::string& v : values) filter.settings.push_back(key + v);
    };
  };
  cmd->add_option_function<std::vector<std::string>>("--threads", setting("threads="),
                                                     "runtime threads (repeatable)")
      ->type_name("N")
      ->allow_extra_args(false)
      ->check(PositiveInteger);
  // CPU lists are recorded in canonical form ("0-3"): the filter is canonicalized the same way,
  // so 0,1,2,3 finds them.
  cmd->add_option_function<std::vector<std::string>>(
         "--cpus",
         [&filter](const std::vector<std::string>& values) {
           for (const std::string& v : values) {
             auto cpus = ParseCpuList(v);
             filter.settings.push_back("cpus=" + (cpus ? FormatCpuList(*cpus) : v));
           }
         },
         "the CPUs the runtime was pinned to, e.g. 0 or 0-3 (as given to run --cpus; repeatable)")
      ->type_name("LIST")
      ->allow_extra_args(false)
      ->check([](const std::string& v) {
        auto cpus = ParseCpuList(v);
        return cpus ? std::string() : cpus.error().message;
      });
  cmd->add_option_function<std::vector<std::string>>(
         "--setting", setting(""),
         "a recorded runtime setting as KEY=VALUE, e.g. n_batch=512 or flash_attn=on "
         "(repeatable; values of one key are alternatives)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false)
      ->check([](const std::string& v) {
        auto parsed = ParseSettingFilter(v);
        return parsed.ok() ? std::string() : parsed.error().message;
      });
  cmd->add_option("--since", filter.since,
                  "started at or after this RFC 3339 UTC time or a prefix of it, e.g. 2026-11-29 "
                  "or 2026-11-29T10:00:00Z");
}

std::string FilterText(const ResultFilter& f) {
  std::string out;
  const auto add = [&](const char* flag, const std::vector<std::string>& values) {
    for (const std::string& v : values) out += std::string(out.empty() ? "" : " ") + flag + " " + v;
  };
  add("--benchmark", f.benchmarks);
  add("--model", f.models);
  add("--quant", f.quants);
  add("--device", f.devices);
  add("--runtime", f.runtimes);
  add("--label", f.labels);
  add("--setting", f.settings);
  if (!f.since.empty()) add("--since", {f.since});
  return out;
}

bool CheckSince(const CLI::App& cmd, const ResultFilter& filter, CliContext& ctx) {
  if (cmd.count("--since") == 0) return true;
  auto since = ParseSince(filter.since);
  if (since.ok()) return true;
  ReportError(ctx, since.error().Wrap("--since"));
  return false;
}

}  // namespace pipette::cli
