#include "cli/store_reading.h"

#include <filesystem>

namespace pipette::cli {

std::string StorePath(const CliContext& ctx) {
  return ctx.store_path.empty() ? DefaultStorePath() : ctx.store_path;
}

std::unique_ptr<ResultStore> OpenStoreToRead(CliContext& ctx) {
  const std::string path = StorePath(ctx);
  StoreOptions options;
  options.create_if_missing = false;
  auto store = ResultStore::Open(path, options);
  if (store.ok()) return std::move(*store);
  std::error_code ec;
  ReportError(ctx, store.error(), std::filesystem::exists(path, ec) ? kExitFailure : kExitBadInput);
  return nullptr;
}

void AddConfigurationFilters(CLI::App* cmd, ResultFilter& filter) {
  // Every list option is repeatable; its values are alternatives (--quant Q8_0 --quant Q4_0).
  const auto list = [cmd](const char* flag, std::vector<std::string>& values, const char* help,
                          const char* type) {
    return cmd->add_option(flag, values, help)->type_name(type)->allow_extra_args(false);
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
      ->check(CLI::PositiveNumber);
  cmd->add_option_function<std::vector<std::string>>(
         "--cpus", setting("cpus="), "the CPUs the runtime was pinned to, e.g. 0 or 0-3 "
                                     "(as given to run --cpus; repeatable)")
      ->type_name("LIST")
      ->allow_extra_args(false);
  cmd->add_option_function<std::vector<std::string>>(
         "--setting", setting(""),
         "any recorded runtime setting as KEY=VALUE, e.g. n_batch=512 or flash_attn=on "
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
