#include "cli/runtime_options.h"

#include <charconv>
#include <sstream>

#include <fmt/format.h>

#include "cli/flag_names.h"
#include "pipette/runtimes.h"
#include "platform/device_access.h"

namespace pipette::cli {
namespace {

using nlohmann::json;

// A setting flag's help text: the llamacpp runtime's meaning of the setting.
std::string Help(const std::string& setting) {
  const auto defs = RuntimeSettingDefs("llamacpp");
  const SettingDef* d = defs ? FindSetting(*defs, setting) : nullptr;
  if (d == nullptr) return setting;
  std::string help = d->meaning + " (" + setting;
  if (!d->default_value.is_null()) {
    help += ", default " + (d->default_value.is_string() ? d->default_value.get<std::string>()
                                                           : d->default_value.dump());
  } else if (!d->resolution.empty()) {
    help += ", default " + d->resolution;
  }
  return help + ")";
}

// The flag's text as the setting's JSON type.
Result<json> Typed(const SettingDef& d, const std::string& text) {
  const std::string flag = LongFlag(d.name);
  if (d.kind == SettingKind::kInteger) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return MakeError(fmt::format("{} '{}' is not an integer", flag, text));
    }
    return json(v);
  }
  if (d.kind == SettingKind::kBoolean) return json(text == "true");
  return json(text);
}

std::vector<std::string> SplitCommand(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> argv;
  for (std::string word; in >> word;) argv.push_back(word);
  return argv;
}

}  // namespace

void AddRuntimeOptions(CLI::App* app, RuntimeArgs& a) {
  app->add_option("--device", a.device,
                  "where to measure: local (this machine), ssh://[user@]host[:port] or "
                  "adb://SERIAL (llamacpp runtime; its driver is built for devices by "
                  "scripts/build-device.sh and copied there once)")
      ->capture_default_str();
  app->add_option("--driver", a.driver,
                  "llamacpp: the driver binary (default: the one beside pipette; with --device, "
                  "the device build for its architecture)");
  app->add_option("--runtime", a.name,
                  "runtime: llamacpp (pipette's driver), llamacpp-stock (a llama.cpp build's "
                  "llama-bench and llama-server), openai (an OpenAI-compatible server)")
      ->capture_default_str();
  app->add_option("--runtime-dir", a.dir,
                  "llamacpp-stock: the bin folder of a llama.cpp build (llama-bench, llama-server)");
  app->add_option("--url", a.url, "openai: the server's base URL, e.g. http://127.0.0.1:8080");
  app->add_option("--server", a.server,
                  "openai: a command line that starts the server (split on spaces); pipette "
                  "starts it, measures its memory and stops it after the cell; --url is where "
                  "it listens (default: a free local port)");
  app->add_option("--api-model", a.api_model,
                  "openai: the model name sent in requests (default: the server's first)");
  for (const SettingFlag& f : SettingFlags()) {
    const std::string setting = f.setting;
    app->add_option_function<std::string>(
        f.flags, [&a, setting](const std::string& v) { a.values[setting] = v; }, Help(setting));
  }
  app->add_flag_function(
      "--mmap", [&a](int64_t) { a.values["mmap"] = "true"; }, Help("mmap"));
}

Result<ChosenRuntime> ChooseRuntime(const RuntimeArgs& a) {
  RuntimeChoice choice;
  choice.name = a.name;
  choice.driver_path = a.device == "local" ? a.driver : "";
  choice.dir = a.dir;
  choice.url = a.url;
  choice.api_model = a.api_model;
  choice.server_command = SplitCommand(a.server);
  if (auto s = CheckRuntimeChoice(choice); !s) return s.error();
  auto defs = RuntimeSettingDefs(choice.name);
  if (!defs) return defs.error();
  ChosenRuntime out;
  for (const auto& [setting, text] : a.values) {
    const SettingDef* d = FindSetting(*defs, setting);
    if (d == nullptr) {
      std::vector<std::string> flags;
      for (const SettingDef& other : *defs) {
        if (const std::string f = LongFlag(other.name); !f.empty()) flags.push_back(f);
      }
      return MakeError(fmt::format(
          "runtime {} does not take {} ({}); {}", choice.name, LongFlag(setting), setting,
          flags.empty() ? "it takes no setting flags (a server's settings are its own command line)"
                        : fmt::format("it takes {}", fmt::join(flags, ", "))));
    }
    auto v = Typed(*d, text);
    if (!v) return v.error();
    out.settings[setting] = *v;
  }
  auto address = ParseDeviceAddress(a.device);
  if (!address) return address.error();
  if (address->kind != TransportKind::kLocal && choice.name != "llamacpp") {
    return MakeError("runtime " + choice.name + " runs on this machine only; measure " +
                     address->Uri() + " with --runtime llamacpp");
  }
  if (address->kind != TransportKind::kLocal) {
    auto device = DeviceAccess::Open(*address, {}, a.driver);
    if (!device) return device.error();
    choice.device = out.device = *device;
  }
  auto runtime = OpenRuntime(choice);
  if (!runtime) return runtime.error();
  out.runtime = *runtime;
  return out;
}

}  // namespace pipette::cli
