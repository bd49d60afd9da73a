#include "cli/flag_names.h"

#include <cctype>
#include <string_view>

#include <CLI/CLI.hpp>

namespace pipette::cli {
namespace {

constexpr SettingFlag kSettingFlags[] = {
    {"-t,--threads", "threads"},        {"--n-gpu-layers", "n_gpu_layers"},
    {"--flash-attn", "flash_attn"},     {"--batch-size", "n_batch"},
    {"--ubatch-size", "n_ubatch"},      {"--cache-type-k", "type_k"},
    {"--cache-type-v", "type_v"},       {"--ctx-size", "n_ctx"},
    {"--cpus", "cpus"},                 {"--poll", "poll"},
    {"--test-leak-bytes", "test_leak_bytes"},
};

// An option's name as the lower layers write it in messages, and its flag.
struct TermFlag {
  const char* term;
  const char* flag;
};

constexpr TermFlag kTermFlags[] = {
    {"reference model", "--reference"},
    {"runtime directory", "--runtime-dir"},
    {"takes no URL", "--url"},
    {"server command", "--server"},
    {"API model name", "--api-model"},
    {"server's URL", "--url"},
    {"command that starts it", "--server"},
    {"allow context overflow", "--allow-context-overflow"},
    {"runtime log", "--runtime-log"},
    {"readiness deadline", "--readiness-deadline"},
    {"thermal criterion", "--no-readiness-thermal"},
    {"load criterion", "--no-readiness-load"},
    {"throttling criterion", "--no-readiness-throttle"},
    {"request timeout", "--request-timeout"},
    {"store path", "--store"},
    {"logs folder", "--logs"},
    {"vocabulary folder", "--vocab-dir"},
    {"eval data directory", "--data-dir"},
    {"eval repeats", "--repeats"},
    {"eval max_tokens", "--max-tokens"},
    {"eval limit", "--limit"},
    {"eval temperature", "--temperature"},
    {"checkpoint folder", "--checkpoint-dir"},
    {"doom-loop option", "--doom-loop"},
    {"CA file", "--ca-file"},
    {"trusted proxy", "--trusted-proxy"},
    {"model file it measured", "--model"},
    {"allow unknown fields", "--allow-unknown-fields"},
    {"skip rows that match no benchmark", "--skip-unmatched"},
    {"this device's fingerprint", "--this-device"},
};

// A character that continues a name or a flag: "n_ctx2", "--ctx-size".
bool InName(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

// The first mention of `word` in `s` as a whole word (not part of a longer name or a flag).
// A `setting` is not mentioned right after a number (a count: "1 poll", "8 threads") nor as the
// key of KEY=VALUE (a filter: "threads=2"). npos when none.
size_t FindWord(const std::string& s, std::string_view word, bool setting) {
  for (size_t at = s.find(word); at != std::string::npos; at = s.find(word, at + 1)) {
    const size_t end = at + word.size();
    if (at > 0 && InName(s[at - 1])) continue;
    if (end < s.size() && InName(s[end])) continue;
    if (setting && end < s.size() && s[end] == '=') continue;
    if (setting && at >= 2 && s[at - 1] == ' ' &&
        std::isdigit(static_cast<unsigned char>(s[at - 2])) != 0) {
      continue;
    }
    return at;
  }
  return std::string::npos;
}

// Whether `s` already names `flag` ("--store", not "--store-x").
bool NamesFlag(const std::string& s, std::string_view flag) {
  for (size_t at = s.find(flag); at != std::string::npos; at = s.find(flag, at + 1)) {
    const size_t end = at + flag.size();
    if (end == s.size() || !InName(s[end])) return true;
  }
  return false;
}

// Whether `command` or a command above it (global options) takes `flag`.
bool TakesFlag(const CLI::App& command, const std::string& flag) {
  for (const CLI::App* app = &command; app != nullptr; app = app->get_parent()) {
    if (app->get_option_no_throw(flag) != nullptr) return true;
  }
  return false;
}

// Whether `command` sets runtime settings by flags: it takes every one (pipette run). Elsewhere
// a --threads or --cpus is a filter over stored results, not the setting a message names.
bool TakesSettingFlags(const CLI::App& command) {
  for (const SettingFlag& f : kSettingFlags) {
    if (!TakesFlag(command, LongFlag(f.setting))) return false;
  }
  return true;
}

// Puts " (flag)" at `end`; after a term already followed by its setting name, "term (name)"
// becomes "term (flag, name)".
void InsertFlag(std::string& s, size_t end, const std::string& flag, bool merge) {
  if (merge && s.compare(end, 2, " (") == 0) {
    const size_t open = end + 2, close = s.find(')', open);
    // One lowercase identifier that starts with a letter: "deadline_s", not "it is created".
    bool name = close != std::string::npos && close > open && s[open] >= 'a' && s[open] <= 'z';
    for (size_t i = open; name && i < close; ++i) {
      name = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_';
    }
    if (name) {
      s.insert(open, flag + ", ");
      return;
    }
  }
  s.insert(end, " (" + flag + ")");
}

void Annotate(std::string& s, std::string_view word, const std::string& flag, bool setting,
              const CLI::App& command) {
  if (NamesFlag(s, flag)) return;  // the CLI wrote it, or it was annotated before
  const size_t at = FindWord(s, word, setting);
  if (at == std::string::npos || !TakesFlag(command, flag)) return;
  InsertFlag(s, at + word.size(), flag, !setting);
}

}  // namespace

std::span<const SettingFlag> SettingFlags() { return kSettingFlags; }

std::string LongFlag(const std::string& setting) {
  if (setting == "mmap") return "--mmap";
  for (const SettingFlag& f : kSettingFlags) {
    if (setting == f.setting) {
      const std::string flags = f.flags;
      return flags.substr(flags.rfind(',') + 1);
    }
  }
  return "";
}

std::string WithFlags(const std::string& message, const CLI::App& command) {
  std::string out = message;
  for (const TermFlag& t : kTermFlags) Annotate(out, t.term, t.flag, false, command);
  if (TakesSettingFlags(command)) {
    for (const SettingFlag& f : kSettingFlags) {
      Annotate(out, f.setting, LongFlag(f.setting), true, command);
    }
  }
  return out;
}

const CLI::App& RunningCommand(const CLI::App& root) {
  const CLI::App* app = &root;
  for (auto parsed = app->get_subcommands(); !parsed.empty(); parsed = app->get_subcommands()) {
    app = parsed.back();
  }
  return *app;
}

}  // namespace pipette::cli
