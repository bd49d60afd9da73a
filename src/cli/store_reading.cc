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
  cmd->add_option("--model", filter.model, "model: SHA-256 prefix or part of the file name");
  cmd->add_option("--quant", filter.quant, "quantization, e.g. Q4_K_M (any case)");
  cmd->add_option("--device", filter.device, "device id or its prefix");
  cmd->add_option("--runtime", filter.runtime, "runtime name, e.g. llamacpp");
  cmd->add_option("--label", filter.label, "device label");
  cmd->add_option("--since", filter.since,
                  "started at or after this RFC 3339 UTC time or a prefix of it, e.g. 2026-11-29 "
                  "or 2026-11-29T10:00:00Z");
}

bool CheckSince(const CLI::App& cmd, const ResultFilter& filter, CliContext& ctx) {
  if (cmd.count("--since") == 0) return true;
  auto since = ParseSince(filter.since);
  if (since.ok()) return true;
  ReportError(ctx, since.error().Wrap("--since"));
  return false;
}

}  // namespace pipette::cli
