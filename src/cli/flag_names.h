// Where the command line maps the names the lower layers use back to its flags (DESIGN.md 9:
// nothing below the CLI names a CLI flag; it says the setting's or option's name, and the CLI
// adds the flag). The one table of which flag stands for which runtime setting and which option
// term; `pipette run`'s runtime flags are declared from it too (runtime_options.h).
#pragma once

#include <span>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace pipette::cli {

// A runtime setting's flag of `pipette run`.
struct SettingFlag {
  const char* flags;    // CLI11 spelling, the long name last: "-t,--threads"
  const char* setting;  // pipette/runtime.h SettingDef::name: "threads"
};

// Every runtime setting that has a flag (mmap, a flag without a value, is not among them).
std::span<const SettingFlag> SettingFlags();

// The long flag of a setting: "n_ctx" -> "--ctx-size", "mmap" -> "--mmap"; "" when none.
std::string LongFlag(const std::string& setting);

// `message` with each setting name and option term it mentions followed by its flag, when
// `command` (or a command above it: global options such as --store) has that flag:
//   "n_ctx 50 is smaller ..."            -> "n_ctx (--ctx-size) 50 is smaller ..."
//   "raise the request timeout (request_timeout_s)"
//                                        -> "raise the request timeout (--request-timeout,
//                                            request_timeout_s)"
//   "no results store at x; check the store path" -> "...; check the store path (--store)"
// Terms (the lower layers' wording): "reference model", "allow context overflow", "runtime log",
// "readiness deadline", "thermal criterion", "load criterion", "throttling criterion",
// "request timeout", "store path", "logs folder", "vocabulary folder", "model file it measured",
// "allow unknown fields", "skip rows that match no benchmark", "this device's fingerprint".
// Each name or term is annotated once, at its first mention as a whole word. Setting names only
// where `command` takes every setting flag (pipette run: elsewhere --threads and --cpus are
// filters over stored results), and not right after a number ("1 poll" is a count) nor as the key
// of KEY=VALUE ("threads=2"). A message that already names the flag keeps it and gets no second
// one, so WithFlags(WithFlags(m)) == WithFlags(m). Cheap: plain string searches, no regular
// expressions.
std::string WithFlags(const std::string& message, const CLI::App& command);

// The subcommand being run: the deepest one parsed under `root`; `root` itself when none is.
const CLI::App& RunningCommand(const CLI::App& root);

}  // namespace pipette::cli
